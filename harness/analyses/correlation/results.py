"""The correlation analysis's records in results.json (`correlations`): diagnostics x downstream
tasks across encoders, their summary, ranks and notes."""

from __future__ import annotations

from pydantic import Field

from harness.records import Record, is_none


class CorrelationCell(Record):
    """rho and p of one diagnostic x task over `n` encoders; None where undefined.
    `p_method` is "exact" (all n! permutations) or "scipy", absent when undefined; `p_holm`
    the p-value adjusted by Holm's procedure over every cell of the matrix; `ci95` the
    interval across encoders (`Correlations.interval`)."""

    rho: float | None
    p: float | None = None
    p_method: str | None = Field(None, exclude_if=is_none)
    p_holm: float | None = Field(None, exclude_if=is_none)
    n: int = 0
    ci95: tuple[float | None, float | None] | None = Field(None, exclude_if=is_none)


class CorrelationSummary(Record):
    """A diagnostic's mean and minimum rho over the tasks where it is defined."""

    mean: float | None = None
    min: float | None = None
    tasks: int | None = Field(None, exclude_if=is_none)
    mean_ci95: tuple[float | None, float | None] | None = Field(None, exclude_if=is_none)


class Correlations(Record):
    """Diagnostics x downstream tasks across encoders (Kerscher & Eger 2020, Figure 2 and
    Table 1): the matrix, its summary, the rank tables and notes on what was missing.

    `diagnostics` holds the values correlated (diagnostic -> encoder -> value), `decoder` the
    decoder whose runs they are ("" for published tables), `sources` where they came from.
    `interval` names how the cells' and means' intervals were got ("fisher-z": across
    encoders), `correction` the multiple-comparison correction of `p_holm` over the matrix,
    and `controls` the control encoders kept out of the correlations and ranks.
    """

    method: str = "spearman"
    decoder: str = ""
    matrix: dict[str, dict[str, CorrelationCell]] = {}
    summary: dict[str, CorrelationSummary] = {}
    ranks: dict[str, dict[str, int]] = {}
    rank_by: str = ""
    notes: list[str] = []
    diagnostics: dict[str, dict[str, float | None]] = {}
    sources: dict[str, str] = {}
    interval: str | None = Field(None, exclude_if=is_none)
    correction: str | None = Field(None, exclude_if=is_none)
    controls: list[str] = []

    def defined(self) -> bool:
        """True when at least one correlation is defined."""
        return any(cell.rho is not None for row in self.matrix.values() for cell in row.values())
