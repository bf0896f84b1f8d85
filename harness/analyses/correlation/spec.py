"""The correlation analysis's spec section (`correlation:`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from harness.protocols import Settings, SpecView


class PrimarySection(Settings):
    """The spec's `correlation.primary`: the analysis declared before the run, whose result is
    the claim (the diagnostic x task matrix is exploratory). One test per diagnostic of its
    mean correlation over `tasks`, by an exact joint permutation of the encoders, Holm-corrected
    over the diagnostics at family-wise error `alpha`, with the smallest population correlation
    it detects with probability `power` (docs/metrics.md#primary-analysis)."""

    # The diagnostics tested; None: every metric of the spec that is higher-is-better (a table
    # spec: every column of the diagnostics table).
    diagnostics: list[str] | None = Field(default=None, min_length=1)
    # The downstream tasks the mean is over: `all`, or a list.
    tasks: Literal["all"] | list[str] = "all"
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    power: float = Field(default=0.8, gt=0.0, lt=1.0)
    # Random permutations of the Monte-Carlo test with more encoders than an exact test
    # enumerates (10).
    permutations: int = Field(default=99_999, ge=99)

    @field_validator("diagnostics", "tasks")
    @classmethod
    def _once_each(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list):
            if not value:
                raise ValueError("name at least one, or leave the key out")
            seen = [name for i, name in enumerate(value) if name in value[:i]]
            if seen:
                raise ValueError(f"{seen[0]!r} is named twice")
        return value


class CorrelationSection(Settings):
    """The spec's `correlation:` section: how diagnostics are correlated with downstream
    scores and what ranks the encoders (Table 1). How encoders are compared (support,
    resamples, permutations, controls) is the run's `comparison:`
    (`harness.results.comparison.ComparisonSection`)."""

    method: Literal["spearman", "pearson", "kendall"] = "spearman"
    rank_by: str = "id"  # the paper's Table 1 ranks by Id
    # The primary analysis, declared before the run (`PrimarySection`).
    primary: PrimarySection = PrimarySection()


def correlation_settings(spec: SpecView) -> CorrelationSection:
    """The spec's `correlation:` section, typed (defaults where the file gives none)."""
    return spec.section("correlation", CorrelationSection)
