"""The lengths analysis's spec section (`breakdown:`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import field_validator

from harness.protocols import Settings, SpecView


class BreakdownSection(Settings):
    """How the diagnostics are broken down: `length_bins`, the bins of reference length (in
    whitespace tokens of the normalised reference), `auto` (chosen from the test set's
    quantiles, `harness.analyses.lengths.breakdown`) or the token counts at which a new bin starts."""

    length_bins: Literal["auto"] | list[int] = "auto"

    @field_validator("length_bins", mode="before")
    @classmethod
    def _auto_or_edges(cls, value: Any) -> Any:
        if isinstance(value, str) and value != "auto":
            raise ValueError("expected `auto` or the token counts at which a new bin starts, "
                             f"e.g. [5, 10], not {value!r}")
        return value

    @field_validator("length_bins")
    @classmethod
    def _increasing(cls, value: Literal["auto"] | list[int]) -> Literal["auto"] | list[int]:
        if isinstance(value, list):
            if not value or value[0] < 2 or any(b <= a for a, b in zip(value, value[1:])):
                raise ValueError("give increasing token counts of at least 2 at which a new "
                                 f"bin starts, e.g. [5, 10] (bins <5, 5-9, >=10), not {value}")
        return value


def breakdown_settings(spec: SpecView) -> BreakdownSection:
    """The spec's `breakdown:` section, typed (defaults where the file gives none)."""
    return spec.section("breakdown", BreakdownSection)
