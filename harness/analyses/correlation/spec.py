"""The correlation analysis's spec section (`correlation:`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from harness.protocols import Settings


class CorrelationSection(Settings):
    """The spec's `correlation:` section: how diagnostics are correlated with downstream
    scores and how encoders are ranked and compared (the rankings and floor analyses read
    `resamples`, `permutations` and `controls` too)."""

    method: Literal["spearman", "pearson", "kendall"] = "spearman"
    rank_by: str = "id"  # the paper's Table 1 ranks by Id
    # A diagnostic that is a rate of fewer trials than this (Id/PERM: permutations found) is
    # flagged in the report, and ranking by it warns.
    min_support: int = Field(default=30, ge=1)
    # Paired bootstrap resamples of the test sentences for the intervals of pairwise
    # differences.
    resamples: int = Field(default=1000, ge=10)
    # Random swaps of each paired permutation test (diagnostics without an exact test).
    permutations: int = Field(default=9999, ge=99)
    # Control encoders (random-gaussian, random-lstm): reference points shown beside the
    # correlations and rankings (exclude), or counted in them (include).
    controls: Literal["exclude", "include"] = "exclude"
