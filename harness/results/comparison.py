"""The spec's `comparison:` section: how a run compares its encoders, read by every analysis
that compares them (the rankings, the floor, the correlation, the privacy study) and by the
report. results.json records it beside the results it decided, which is why it lives with the
results' records. It once lived under `correlation:`, whose keys an older spec or results.json
may still carry there (`COMPARISON_KEYS`, `moved_to_comparison`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from harness.protocols import Settings


class ComparisonSection(Settings):
    """How encoders are compared (`comparison:`)."""

    # A diagnostic that is a rate of fewer trials than this (Id/PERM: permutations found) is
    # flagged in the report, and ranking or correlating by it warns.
    min_support: int = Field(default=30, ge=1)
    # Paired bootstrap resamples of the test sentences for the intervals of pairwise
    # differences.
    resamples: int = Field(default=1000, ge=10)
    # Random swaps of each paired permutation test (diagnostics without an exact test).
    permutations: int = Field(default=9999, ge=99)
    # Control encoders (random-gaussian, random-lstm): reference points shown beside the
    # correlations and rankings (exclude), or counted in them (include).
    controls: Literal["exclude", "include"] = "exclude"


COMPARISON_KEYS: tuple[str, ...] = tuple(ComparisonSection.model_fields)
"""The keys `comparison:` took over from `correlation:`."""


def moved_to_comparison(document: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`document` (a spec's or a results.json spec's mapping) with the comparison keys it gives
    under `correlation:` moved to `comparison:`, and the keys moved. A key given in both
    places keeps `comparison:`'s value and is not moved (the caller refuses or warns)."""
    correlation = document.get("correlation")
    if not isinstance(correlation, Mapping):
        return dict(document), []
    moved = [key for key in COMPARISON_KEYS if key in correlation]
    if not moved:
        return dict(document), []
    comparison = document.get("comparison")
    comparison = dict(comparison) if isinstance(comparison, Mapping) else {}
    for key in moved:
        comparison.setdefault(key, correlation[key])
    kept = {key: value for key, value in correlation.items() if key not in moved}
    return {**document, "correlation": kept, "comparison": comparison}, moved
