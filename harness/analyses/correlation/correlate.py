"""Correlate the V2S diagnostics with downstream scores across encoders.

Kerscher & Eger (2020), section 3: Spearman's rho between each diagnostic and each downstream
task over the encoders, summarised per diagnostic by its mean and minimum over tasks (Figure 2),
and encoders ranked by downstream performance and by a diagnostic (Table 1). The same analysis
runs on a run's own scores or, without training, on published tables
(`correlations_from_tables`). An encoder without downstream scores (no table row bound to its
model, no computed scores) is left out of the correlations, and a note says why; so are control
encoders unless the spec includes them (`comparison.controls`), shown beside as reference
points.

With `correlation.primary` (`primary`), the analysis declared in the spec runs first: one joint
permutation test per diagnostic of its mean correlation over tasks, Holm-corrected over the
diagnostics (`harness.analyses.correlation.primary`); its result is the claim, and the
cell-level matrix below is exploratory.

Each correlation carries an exact permutation p-value (up to `harness.stats.EXACT_MAX`
encoders), its Holm-adjusted p over every diagnostic x task cell of the matrix (the family the
report chooses its claims from), and a Fisher-z interval across the encoders
(`harness.stats.fisher_interval`); each diagnostic's mean rho over tasks gets the interval of
one correlation over as many encoders, which is conservative for a mean of correlated
estimates.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.analyses.correlation.primary import primary_analysis
from harness.analyses.correlation.results import CorrelationCell, Correlations, CorrelationSummary
from harness.analyses.correlation.spec import PrimarySection
from harness.analyses.downstream.scores import Downstream, downstream_scores
from harness.results.declarations import read_table, row_declarations
from harness.results.model import PairResult
from harness.stats.correlation import FISHER_Z, fisher_interval
from harness.stats.multiple import holm_adjusted

MIN_ENCODERS = 3


def correlate_diagnostics(diagnostics: Mapping[str, Mapping[str, float | None]],
                          downstream: Downstream, *,
                          method: str, decoder: str, rank_by: str,
                          exact_max: int | None = None,
                          lower_is_better: frozenset[str] = frozenset(),
                          controls: tuple[str, ...] = (),
                          primary: PrimarySection | None = None, seed: int = 0) -> Correlations:
    """Return the correlations of each diagnostic (metric -> encoder -> value) with each task.

    Encoders named in `controls` are left out of the correlations and ranks and recorded in
    `Correlations.controls` (reference points, shown beside).

    The encoders are ranked by `rank_by`, best first: highest value, or lowest for a diagnostic
    in `lower_is_better` (perplexity).

    p-values are exact permutation p-values up to `exact_max` encoders (default
    `harness.stats.EXACT_MAX`), scipy's beyond; each cell says which in `p_method`.

    With `primary`, `Correlations.primary` holds the declared primary analysis
    (`primary_analysis`; its Monte-Carlo permutations and power simulation drawn from `seed`);
    without, it is None.
    """
    from harness.stats import (
        EXACT_MAX,
        correlation_matrix,
        downstream_rank,
        rank,
        summarise,
    )

    notes: list[str] = []
    missing = [name for name in downstream.missing if name not in controls]
    if missing:
        notes.append("no downstream scores for: " + ", ".join(
            f"{name} ({downstream.reasons.get(name) or 'the spec names no downstream scores'})"
            for name in missing))
    excluded = set(controls)
    diagnostics = {diag: {e: v for e, v in values.items() if e not in excluded}
                   for diag, values in diagnostics.items()}
    studied = {e: row for e, row in downstream.scores.items() if e not in excluded}
    scored = sorted(studied)
    if len(scored) < MIN_ENCODERS:
        notes.append(f"too few encoders for a correlation: {len(scored)} with downstream scores "
                     f"({', '.join(scored) or 'none'}); at least {MIN_ENCODERS} are needed")
    matrix = correlation_matrix(diagnostics, studied, method=method,
                                exact_max=EXACT_MAX if exact_max is None else exact_max)
    cells = _cells(matrix, method)
    ranks: dict[str, dict[str, int]] = {}
    if studied:
        ranks["downstream"] = downstream_rank(studied)
    if rank_by in diagnostics:
        ranks[rank_by] = rank(diagnostics[rank_by],
                              higher_is_better=rank_by not in lower_is_better)
    elif diagnostics:
        notes.append(f"rank_by {rank_by!r} is not among the run's metrics")
    sources = {"downstream": downstream.source} if downstream.source else {}
    summary = {diag: _summary(values, cells[diag], method)
               for diag, values in summarise(matrix).items()}
    declared = None if primary is None else primary_analysis(
        diagnostics, studied, primary, method=method, lower_is_better=lower_is_better,
        seed=seed, exact_max=exact_max)
    return Correlations(method=method, decoder=decoder, matrix=cells, summary=summary,
                        ranks=ranks, notes=notes, rank_by=rank_by, diagnostics=diagnostics,
                        sources=sources, interval=FISHER_Z, correction="holm",
                        controls=[name for name in controls], primary=declared)


def _cells(matrix: dict[str, dict[str, Any]], method: str
           ) -> dict[str, dict[str, CorrelationCell]]:
    """The matrix as results cells: rho, p, its Holm adjustment over every cell with a p-value,
    and the Fisher-z interval across the encoders."""
    tested = [(diag, task) for diag, row in matrix.items() for task, c in row.items()
              if c.p is not None]
    adjusted = dict(zip(tested, holm_adjusted([matrix[d][t].p for d, t in tested])))
    cells: dict[str, dict[str, CorrelationCell]] = {diag: {} for diag in matrix}
    for diag, row in matrix.items():
        for task, c in row.items():
            extra: dict[str, Any] = {}
            if c.rho is not None:
                extra["ci95"] = fisher_interval(c.rho, c.n, method)
            if (diag, task) in adjusted:
                extra["p_holm"] = adjusted[(diag, task)]
            cells[diag][task] = CorrelationCell.model_validate(
                {**c.to_json(), **extra})
    return cells


def _summary(values: dict[str, Any], row: dict[str, CorrelationCell], method: str
             ) -> CorrelationSummary:
    """A diagnostic's mean and min rho over tasks, the mean with the Fisher-z interval of one
    correlation over the fewest encoders any of its tasks had."""
    ns = [cell.n for cell in row.values() if cell.rho is not None]
    mean = values.get("mean")
    interval = fisher_interval(mean, min(ns), method) if mean is not None and ns else None
    return CorrelationSummary.model_validate({**values, "mean_ci95": interval})


def correlations_from_tables(diagnostics_table: Path, downstream_table: Path,
                             method: str = "spearman", *, rank_by: str = "id",
                             exact_max: int | None = None, primary: PrimarySection | None = None,
                             seed: int = 0) -> Correlations:
    """Return the correlations between two published tables, without training anything.

    Both files are reference tables (`source:`, `tasks:`, `scores:` encoder -> column -> value):
    the diagnostics table's columns are diagnostics (e.g. benchmarks/paper/v2s-table4.yaml,
    Kerscher & Eger 2020, Table 4), the downstream table's are tasks (Table 5). This recomputes
    Figure 2 (rho per diagnostic x task, mean and min) and Table 1's ranks (by `rank_by`; the
    paper ranks by Id) from the printed numbers. Rows pair by name, except that a row for which
    the diagnostics table declares a model (`models:`) pairs only with a downstream row that
    declares the same model (`harness.results.declarations.row_declarations`). With `primary`,
    the declared primary analysis over the table's columns (by default all of them: a published
    table states no direction) runs too, drawing from `seed`.
    """
    table = read_table(diagnostics_table)
    diagnostics = {column: {encoder: row[column] for encoder, row in table.scores.items()
                            if column in row}
                   for column in table.tasks}
    downstream = downstream_scores(downstream_table, list(table.scores),
                                   declared=row_declarations(table))
    result = correlate_diagnostics(diagnostics, downstream, method=method,
                                   decoder="",
                                   rank_by=rank_by, exact_max=exact_max, primary=primary,
                                   seed=seed)
    return result.model_copy(update={"sources": {"diagnostics": table.source,
                                                 "downstream": downstream.source}})


def support_notes(runs: list[PairResult], rank_by: str, decoder: str,
                  min_support: int) -> list[str]:
    """A warning when the diagnostic the encoders are ranked by is, for some encoder, a rate
    over fewer than `min_support` units (Id/PERM over a handful of permutations)."""
    supports = {run.encoder: run.metrics[rank_by].support for run in runs
                if run.decoder == decoder and rank_by in run.metrics}
    thin = [f"{encoder} (n={n})" for encoder, n in supports.items()
            if n is not None and n < min_support]
    if not thin:
        return []
    return [f"rank_by {rank_by!r} rests on fewer than {min_support} sentences for "
            f"{', '.join(thin)}: its ranks are unreliable; rank by a diagnostic with more "
            "support (e.g. id)"]
