"""Stage 9: correlate the V2S diagnostics with downstream scores across encoders.

Kerscher & Eger (2020), section 3: Spearman's rho between each diagnostic and each downstream
task over the encoders, summarised per diagnostic by its mean and minimum over tasks (Figure 2),
and encoders ranked by downstream performance and by a diagnostic (Table 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.stages.downstream import Downstream

MIN_ENCODERS = 3


@dataclass(frozen=True)
class Correlations:
    """The correlation matrix, its summary, the rank tables, and notes on what was missing."""

    method: str
    decoder: str
    matrix: dict[str, dict[str, dict[str, Any]]]
    summary: dict[str, dict[str, float | None]]
    ranks: dict[str, dict[str, int]]
    notes: list[str] = field(default_factory=list)


def correlate_diagnostics(diagnostics: dict[str, dict[str, float]], downstream: Downstream, *,
                          method: str, decoder: str, rank_by: str) -> Correlations:
    """Return the correlations of each diagnostic (metric -> encoder -> value) with each task."""
    from harness.stats import correlation_matrix, downstream_rank, rank, summarise

    notes: list[str] = []
    if downstream.missing:
        notes.append("no downstream scores for: " + ", ".join(downstream.missing)
                     + (f" (not in {downstream.source})" if downstream.source else
                        " (the spec names no downstream scores)"))
    scored = sorted(downstream.scores)
    if len(scored) < MIN_ENCODERS:
        notes.append(f"too few encoders for a correlation: {len(scored)} with downstream scores "
                     f"({', '.join(scored) or 'none'}); at least {MIN_ENCODERS} are needed")
    matrix = correlation_matrix(diagnostics, downstream.scores, method=method)
    json_matrix = {diag: {task: {"rho": c.rho, "p": c.p, "n": c.n} for task, c in row.items()}
                   for diag, row in matrix.items()}
    ranks: dict[str, dict[str, int]] = {}
    if downstream.scores:
        ranks["downstream"] = downstream_rank(downstream.scores)
    if rank_by in diagnostics:
        ranks[rank_by] = rank(diagnostics[rank_by])
    elif diagnostics:
        notes.append(f"rank_by {rank_by!r} is not among the run's metrics")
    return Correlations(method=method, decoder=decoder, matrix=json_matrix,
                        summary=summarise(matrix), ranks=ranks, notes=notes)
