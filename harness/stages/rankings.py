"""Stage 9b: how firmly the test set ranks the encoders, and how firmly the correlations hold.

The diagnostics of every encoder are scored on the same test sentences, so differences between
encoders are compared paired: each bootstrap resample draws one set of sentences for every
encoder (and, for decoders trained with several seeds, one seed per encoder), which gives each
encoder's rank interval and the significance of each pairwise difference (the rank-stability
analysis of MTEB, Muennighoff et al. 2023), and the interval of each diagnostic's correlation
with the downstream scores (Kerscher & Eger 2020, section 3) over test-sentence sampling.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from harness.jobs import EncoderOutcome
from harness.results import CorrelationCell, Correlations, DiagnosticRanking, PairResult
from harness.stages.base import RunContext

MIN_RANKED = 2
"""Encoders needed for a ranking: with one there is nothing to compare."""


Statistics = dict[tuple[str, str], dict[str, list[np.ndarray]]]
"""(decoder, metric) -> encoder -> the per-sentence statistics of each seed, in the spec's
encoder order."""


def load_statistics(outcomes: list[EncoderOutcome]) -> Statistics:
    """Every job's per-sentence metric statistics, each file read once."""
    statistics: Statistics = {}
    for outcome in outcomes:
        for decoder, by_metric in outcome.statistics.items():
            for metric, paths in by_metric.items():
                statistics.setdefault((decoder, metric), {})[outcome.encoder] = [
                    np.load(Path(path)) for path in paths]
    return statistics


def rank_stability(ctx: RunContext, statistics: Statistics
                   ) -> dict[str, dict[str, DiagnosticRanking]]:
    """Decoder -> diagnostic -> the encoders' rank intervals and paired differences, from
    `correlation.resamples` paired bootstrap resamples of the test sentences."""
    from harness.protocols import higher_is_better
    from harness.stats import paired_ranking

    started = time.perf_counter()
    section = ctx.spec.correlation
    rankings: dict[str, dict[str, DiagnosticRanking]] = {}
    for decoder in ctx.spec.decoders:
        for component in ctx.spec.metrics:
            encoders = statistics.get((decoder.name, component.name), {})
            if len(encoders) < MIN_RANKED:
                continue
            metric = ctx.build_once(component)
            rankings.setdefault(decoder.name, {})[component.name] = paired_ranking(
                metric, encoders, higher_is_better=higher_is_better(metric),
                resamples=section.resamples, seed=ctx.spec.seed)
    ctx.add_time("rankings", time.perf_counter() - started)
    return rankings


def correlation_bounds(ctx: RunContext, statistics: Statistics, correlations: Correlations,
                       downstream: dict[str, dict[str, float]]) -> Correlations:
    """`correlations` with a bootstrap interval over test sentences on every cell and on each
    diagnostic's mean rho: the same paired resamples for every encoder, downstream held fixed."""
    from harness.stats import correlation_intervals

    if not correlations.defined():
        return correlations
    started = time.perf_counter()
    matrix, summary = dict(correlations.matrix), dict(correlations.summary)
    for component in ctx.spec.metrics:
        name = component.name
        scored = {encoder: stats for encoder, stats
                  in statistics.get((correlations.decoder, name), {}).items()
                  if encoder in downstream}
        if name not in matrix or len(scored) < 3:
            continue
        bounds = correlation_intervals(ctx.build_once(component), scored, downstream,
                                       method=correlations.method,
                                       resamples=ctx.spec.correlation.resamples,
                                       seed=ctx.spec.seed)
        matrix[name] = {task: _with_interval(cell, bounds.tasks.get(task))
                        for task, cell in matrix[name].items()}
        if name in summary:
            summary[name] = summary[name].model_copy(update={"mean_ci95": bounds.mean})
    ctx.add_time("rankings", time.perf_counter() - started)
    return correlations.model_copy(update={"matrix": matrix, "summary": summary})


def _with_interval(cell: CorrelationCell,
                   interval: tuple[float | None, float | None] | None) -> CorrelationCell:
    if interval is None or cell.rho is None:
        return cell
    return cell.model_copy(update={"ci95": interval})


def support_notes(runs: list[PairResult], rank_by: str, decoder: str,
                  min_support: int) -> list[str]:
    """A warning when the diagnostic the encoders are ranked by is, for some encoder, a rate of
    fewer than `min_support` trials (Id/PERM over a handful of permutations)."""
    thin = [f"{run.encoder} (n={run.metrics[rank_by].support})" for run in runs
            if run.decoder == decoder and rank_by in run.metrics
            and run.metrics[rank_by].support is not None
            and run.metrics[rank_by].support < min_support]
    if not thin:
        return []
    return [f"rank_by {rank_by!r} rests on fewer than {min_support} trials for "
            f"{', '.join(thin)}: its ranks are unreliable; rank by a diagnostic with more "
            "support (e.g. id)"]
