"""Stage 9b: how firmly the test set orders the encoders on each diagnostic.

The diagnostics of every encoder are scored on the same test sentences, so encoders are compared
paired, with the sentence as the unit (`harness.stats.paired`): each pair's difference gets an
exact (McNemar, sign-flip) or paired permutation test, Holm-corrected over the pairs of the
diagnostic, and each encoder a rank interval consistent with those tests. The encoders compared
are the ones under study: control encoders are reference points unless the spec includes them
(`correlation.controls`).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from harness.jobs import EncoderOutcome
from harness.results import DiagnosticRanking, PairResult
from harness.stages.base import RunContext
from harness.stages.score import CHANCE_FILE

MIN_RANKED = 2
"""Encoders needed for a ranking: with one there is nothing to compare."""


Statistics = dict[tuple[str, str], dict[str, list[np.ndarray]]]
"""(decoder, metric) -> encoder -> the per-sentence statistics of each seed, in the spec's
encoder order."""

Chance = dict[str, dict[str, np.ndarray]]
"""metric -> encoder -> the metric's per-sentence statistics at the encoder's chance level."""


def load_statistics(outcomes: list[EncoderOutcome]) -> tuple[Statistics, Chance]:
    """Every job's per-sentence metric statistics, each file read once, and the chance-level
    statistics stored beside them (the same for every decoder and seed of an encoder)."""
    statistics: Statistics = {}
    chance: Chance = {}
    for outcome in outcomes:
        for decoder, by_metric in outcome.statistics.items():
            for metric, paths in by_metric.items():
                statistics.setdefault((decoder, metric), {})[outcome.encoder] = [
                    np.load(Path(path)) for path in paths]
                beside = Path(paths[0]).with_name(CHANCE_FILE)
                if outcome.encoder not in chance.get(metric, {}) and beside.exists():
                    chance.setdefault(metric, {})[outcome.encoder] = np.load(beside)
    return statistics, chance


def rank_stability(ctx: RunContext, statistics: Statistics
                   ) -> dict[str, dict[str, DiagnosticRanking]]:
    """Decoder -> diagnostic -> the studied encoders' rank intervals and paired differences:
    tests with `correlation.permutations` swaps where no exact one applies, intervals from
    `correlation.resamples` paired bootstrap resamples, Holm over each diagnostic's pairs."""
    from harness.protocols import higher_is_better
    from harness.stats import paired_ranking

    started = time.perf_counter()
    section = ctx.spec.correlation
    rankings: dict[str, dict[str, DiagnosticRanking]] = {}
    for decoder in ctx.spec.decoders:
        for component in ctx.spec.metrics:
            scored = statistics.get((decoder.name, component.name), {})
            studied = {name: scored[name] for name in ctx.spec.studied(list(scored))}
            if len(studied) < MIN_RANKED:
                continue
            metric = ctx.build_once(component)
            rankings.setdefault(decoder.name, {})[component.name] = paired_ranking(
                metric, studied, higher_is_better=higher_is_better(metric),
                resamples=section.resamples, permutations=section.permutations,
                seed=ctx.spec.seed)
    ctx.add_time("rankings", time.perf_counter() - started)
    return rankings


def support_notes(runs: list[PairResult], rank_by: str, decoder: str,
                  min_support: int) -> list[str]:
    """A warning when the diagnostic the encoders are ranked by is, for some encoder, a rate
    over fewer than `min_support` units (Id/PERM over a handful of permutations)."""
    thin = [f"{run.encoder} (n={run.metrics[rank_by].support})" for run in runs
            if run.decoder == decoder and rank_by in run.metrics
            and run.metrics[rank_by].support is not None
            and run.metrics[rank_by].support < min_support]
    if not thin:
        return []
    return [f"rank_by {rank_by!r} rests on fewer than {min_support} sentences for "
            f"{', '.join(thin)}: its ranks are unreliable; rank by a diagnostic with more "
            "support (e.g. id)"]
