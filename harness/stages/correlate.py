"""Stage 9: correlate the V2S diagnostics with downstream scores across encoders.

Kerscher & Eger (2020), section 3: Spearman's rho between each diagnostic and each downstream
task over the encoders, summarised per diagnostic by its mean and minimum over tasks (Figure 2),
and encoders ranked by downstream performance and by a diagnostic (Table 1). The same analysis
runs on a run's own scores or, without training, on published tables
(`correlations_from_tables`). An encoder without downstream scores (no table row bound to its
model, no computed scores) is left out of the correlations, and a note says why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.identity import ReferenceTable, read_table
from harness.results import CorrelationCell, Correlations, CorrelationSummary
from harness.stages.downstream import Downstream, downstream_scores

MIN_ENCODERS = 3


def correlate_diagnostics(diagnostics: dict[str, dict[str, float | None]],
                          downstream: Downstream, *,
                          method: str, decoder: str, rank_by: str,
                          exact_max: int | None = None,
                          lower_is_better: frozenset[str] = frozenset()) -> Correlations:
    """Return the correlations of each diagnostic (metric -> encoder -> value) with each task.

    The encoders are ranked by `rank_by`, best first: highest value, or lowest for a diagnostic
    in `lower_is_better` (perplexity).

    p-values are exact permutation p-values up to `exact_max` encoders (default
    `harness.stats.EXACT_MAX`), scipy's beyond; each cell says which in `p_method`.
    """
    from harness.stats import (
        EXACT_MAX,
        correlation_matrix,
        downstream_rank,
        rank,
        summarise,
    )

    notes: list[str] = []
    if downstream.missing:
        notes.append("no downstream scores for: " + ", ".join(
            f"{name} ({downstream.reasons.get(name) or 'the spec names no downstream scores'})"
            for name in downstream.missing))
    scored = sorted(downstream.scores)
    if len(scored) < MIN_ENCODERS:
        notes.append(f"too few encoders for a correlation: {len(scored)} with downstream scores "
                     f"({', '.join(scored) or 'none'}); at least {MIN_ENCODERS} are needed")
    matrix = correlation_matrix(diagnostics, downstream.scores, method=method,
                                exact_max=EXACT_MAX if exact_max is None else exact_max)
    cells = {diag: {task: CorrelationCell.model_validate(c.to_json())
                    for task, c in row.items()}
             for diag, row in matrix.items()}
    ranks: dict[str, dict[str, int]] = {}
    if downstream.scores:
        ranks["downstream"] = downstream_rank(downstream.scores)
    if rank_by in diagnostics:
        ranks[rank_by] = rank(diagnostics[rank_by],
                              higher_is_better=rank_by not in lower_is_better)
    elif diagnostics:
        notes.append(f"rank_by {rank_by!r} is not among the run's metrics")
    sources = {"downstream": downstream.source} if downstream.source else {}
    summary = {diag: CorrelationSummary.model_validate(values)
               for diag, values in summarise(matrix).items()}
    return Correlations(method=method, decoder=decoder, matrix=cells, summary=summary,
                        ranks=ranks, notes=notes, rank_by=rank_by, diagnostics=diagnostics,
                        sources=sources)


def correlations_from_tables(diagnostics_table: Path, downstream_table: Path,
                             method: str = "spearman", *, rank_by: str = "id",
                             exact_max: int | None = None) -> Correlations:
    """Return the correlations between two published tables, without training anything.

    Both files are reference tables (`source:`, `tasks:`, `scores:` encoder -> column -> value):
    the diagnostics table's columns are diagnostics (e.g. benchmarks/paper/v2s-table4.yaml,
    Kerscher & Eger 2020, Table 4), the downstream table's are tasks (Table 5). This recomputes
    Figure 2 (rho per diagnostic x task, mean and min) and Table 1's ranks (by `rank_by`; the
    paper ranks by Id) from the printed numbers. Rows pair by name, except that a row for which
    the diagnostics table declares a model (`models:`) pairs only with a downstream row that
    declares the same model (`table_identities`).
    """
    table = read_table(diagnostics_table)
    diagnostics = {column: {encoder: row[column] for encoder, row in table.scores.items()
                            if column in row}
                   for column in table.tasks}
    downstream = downstream_scores(downstream_table, list(table.scores),
                                   identities=_row_identities(table))
    result = correlate_diagnostics(diagnostics, downstream, method=method,
                                   decoder="",
                                   rank_by=rank_by, exact_max=exact_max)
    return result.model_copy(update={"sources": {"diagnostics": table.source,
                                                 "downstream": downstream.source}})


def table_identities(diagnostics_table: Path) -> dict[str, dict[str, Any] | None]:
    """Each row of a published diagnostics table as `downstream_scores` takes an identity: the
    model the row declares, or None (paired by name) where it declares none."""
    return _row_identities(read_table(diagnostics_table))


def _row_identities(table: ReferenceTable) -> dict[str, dict[str, Any] | None]:
    return {row: table.models.get(row) for row in table.scores}
