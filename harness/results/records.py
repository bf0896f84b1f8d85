"""The building blocks of results.json: the record base class, JSON safety (undefined scores as
null), and one metric's score with its interval and seed spread, which every analysis reuses.
`harness.results.model` re-exports every name."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


def is_none(value: Any) -> bool:
    """True for None: the `exclude_if` of fields results.json leaves out when they are unset."""
    return value is None


class Record(BaseModel):
    """A frozen results record that ignores keys it does not know (later schema versions)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


def json_safe(value: Any) -> Any:
    """`value` with every non-finite float (an undefined score) replaced by None and tuples made
    lists: JSON has no NaN, and results.json is read by other tools than Python's."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def defined(value: Any) -> float | None:
    """A score as results.json holds it: None where it is undefined (NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


# ----------------------------------------------------------------------------------- per pair


class SeedSpread(Record):
    """A metric over decoders trained with different seeds (decoder option `seeds`): each seed's
    value, their mean and sample standard deviation (None for a single seed)."""

    n: int
    values: list[float | None] = []
    mean: float | None = None
    std: float | None = None


class MetricScore(Record):
    """One metric's corpus score for one encoder x decoder pair; the test sentence is the unit.

    `value` is on the paper's 0-100 scale where the metric has one, None where it is undefined
    (Id/PERM without a permutation). `ci95` is its 95% interval and `interval` how it was got:
    "clopper-pearson" (exact, for a proportion of `support` sentences on which every seed
    agrees), "korn-graubard" (a proportion whose seeds disagree on some sentences: exact bounds
    at the summed fractions), "bootstrap" (percentile bootstrap over test sentences),
    "cluster-bootstrap" (over whole test sentences with all their seeds), each with
    "+seeds-t" when the seed component was added. `support` is what the value is a mean over:
    the test sentences, or for Id/PERM the sentences where some seed found a permutation;
    never more than the test sentences. `seed_variance` is true only when the interval
    includes training variance (at least 3 seeds, `harness.stats.intervals.MIN_SEEDS`);
    otherwise it holds for the decoders trained, and `seeds` shows their spread.
    `undefined_resamples` counts bootstrap resamples in which the score was undefined (never
    dropped silently). `chance` is the score at chance whatever the encoder, for a metric that
    declares one (`retrieval`: 100 / k). With several seeds, `value` is a proportion's mean over sentences of
    each sentence's success fraction over seeds, or the mean over seeds of another metric.
    """

    value: float | None
    ci95: tuple[float | None, float | None] = (None, None)
    support: int | None = Field(None, exclude_if=is_none)
    higher_is_better: bool = True
    signature: str | None = Field(None, exclude_if=is_none)
    interval: str | None = Field(None, exclude_if=is_none)
    undefined_resamples: int | None = Field(None, exclude_if=is_none)
    seeds: SeedSpread | None = Field(None, exclude_if=is_none)
    seed_variance: bool = False
    chance: float | None = Field(None, exclude_if=is_none)

    @field_validator("value", mode="before")
    @classmethod
    def _undefined_is_none(cls, value: Any) -> float | None:
        return defined(value)

    @field_validator("ci95", mode="before")
    @classmethod
    def _interval(cls, value: Any) -> tuple[float | None, float | None]:
        low, high = value
        return defined(low), defined(high)
