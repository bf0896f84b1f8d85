"""Intervals of one metric's corpus score, with the test sentence as the unit
(`harness.stats.units`).

- A proportion (Id, PERM, Id/PERM; `harness.protocols.proportion_counts`) gets an exact
  binomial interval over its units, the sentences: Clopper & Pearson (1934) on x = the sum of
  the units' success fractions over the seeds in n = the number of units (`rate_interval`).
  When every seed agrees on every sentence (always with one seed), x is a whole number and this
  is the exact interval of x successes in n trials. When seeds disagree, x is fractional and the
  Beta quantiles are taken at that x: the interval of Korn & Graubard (1998) with the design
  effect truncated at 1, which is conservative here because a sentence's fraction over seeds
  varies at most as much as one Bernoulli trial with the same mean (Var f <= p(1 - p)). It is
  never zero-width, whatever the counts.
- Any other score gets the percentile bootstrap over sentences (Efron & Tibshirani 1993,
  chapter 13), each resampled sentence bringing all its seeds (a cluster bootstrap): a
  resample's totals are `counts @ rows` for multinomial counts over the n sentences.
- Training variance: both intervals above are conditional on the decoders trained. Seed
  variance can only be estimated from several seeds; with at least `MIN_SEEDS` whose score is
  defined, a seed component is added (`with_seed_variance`), and the interval then covers the
  mean over the distribution of seeds. With fewer it is not included, and `MetricScore` says so
  (`seed_variance` false) beside the seeds' spread.

Resamples whose score is undefined (NaN: Id/PERM without a permutation) are never dropped
silently: they are counted and reported beside the interval, which is taken over the defined
resamples (the distribution of the score given that it is defined).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from harness.protocols import chance_score, value_range
from harness.protocols import higher_is_better as declared_direction
from harness.results.records import MetricScore, SeedSpread
from harness.stats.units import SentenceTable, sentence_table, stacked

if TYPE_CHECKING:
    from harness.protocols import Metric

_BOOTSTRAP_CELLS = 4_000_000
"""Resample-by-sentence counts held in memory at once (32 MB of float64)."""

MIN_SEEDS = 3
"""Decoder seeds needed before seed variance enters an interval: with two, the t quantile of one
degree of freedom (12.7) and a standard deviation from two values make the seed component
either useless or unreliable; three is the least for which a t interval is in use."""

CLOPPER_PEARSON, KORN_GRAUBARD = "clopper-pearson", "korn-graubard"
BOOTSTRAP, CLUSTER_BOOTSTRAP = "bootstrap", "cluster-bootstrap"
SEEDS_T = "seeds-t"
"""How an interval was got (`MetricScore.interval`): exact over sentences where every seed
agrees; Korn & Graubard's over fractional units; percentile bootstrap over sentences (one seed)
or over whole sentences with all their seeds; `+seeds-t` when the seed component was added."""


def corpus_value(metric: Metric, statistics: np.ndarray) -> float:
    """Return the metric's corpus score from its per-sentence statistics (n, k)."""
    statistics = np.asarray(statistics, dtype=np.float64)
    return float(metric.corpus_score(statistics.sum(axis=0), len(statistics)))


@dataclass(frozen=True)
class BootstrapInterval:
    """A percentile-bootstrap interval: `low` and `high` over the defined resamples, and how many
    of the `resamples` were `undefined` (NaN bounds when none was defined)."""

    low: float
    high: float
    undefined: int
    resamples: int

    @property
    def bounds(self) -> tuple[float, float]:
        """(low, high)."""
        return self.low, self.high


class ProportionInterval(NamedTuple):
    """A proportion on the 0-1 scale: `value` = successes / trials (NaN without trials) and its
    exact interval (low, high)."""

    value: float
    low: float
    high: float


def check_arguments(resamples: int, level: float) -> None:
    """Raise ValueError unless resamples >= 1 and 0 < level < 1."""
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")


def resample_counts(n: int, resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Yield multinomial counts (c, n) of n sentences drawn with replacement, `resamples` rows in
    all, in chunks that bound memory; the chunking depends only on n and resamples, so a seeded
    `rng` fixes every row."""
    uniform = np.full(n, 1.0 / n)
    chunk = max(1, _BOOTSTRAP_CELLS // n)
    for start in range(0, resamples, chunk):
        counts = rng.multinomial(n, uniform, size=min(chunk, resamples - start))
        yield counts.astype(np.float64)


def percentile_interval(scores: np.ndarray, level: float) -> BootstrapInterval:
    """The percentile interval of the defined (finite) scores, counting the undefined ones."""
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    defined = scores[np.isfinite(scores)]
    undefined = int(scores.size - defined.size)
    if defined.size == 0:
        return BootstrapInterval(math.nan, math.nan, undefined, int(scores.size))
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.percentile(defined, [tail, 100.0 - tail])
    return BootstrapInterval(float(low), float(high), undefined, int(scores.size))


def cluster_bootstrap(table: SentenceTable, *, resamples: int = 1000, seed: int = 0,
                      level: float = 0.95) -> BootstrapInterval:
    """Return the percentile-bootstrap interval of a `SentenceTable`'s score over sentences.

    Sentences are drawn with replacement, each with all its seeds' statistics (Efron &
    Tibshirani 1993, chapter 13; with several seeds, the cluster bootstrap of Davison & Hinkley
    1997, section 3.8); a resample is a vector of multinomial counts, its totals
    `counts @ rows`, and every chunk of resamples is scored at once. Deterministic for a seed.
    Undefined resamples are counted in `undefined`; the bounds are percentiles of the defined
    ones, NaN when none is defined.
    """
    check_arguments(resamples, level)
    rng = np.random.default_rng(seed)
    scores = [table.score(counts @ table.rows)
              for counts in resample_counts(table.sentences, resamples, rng)]
    return percentile_interval(np.concatenate(scores), level)


def bootstrap_ci(metric: Metric, statistics: np.ndarray, *, resamples: int = 1000, seed: int = 0,
                 level: float = 0.95) -> BootstrapInterval:
    """Return the percentile-bootstrap interval of one seed's corpus score over sentences
    (`cluster_bootstrap` of its statistics, a row per sentence)."""
    return cluster_bootstrap(sentence_table(metric, [statistics]), resamples=resamples,
                             seed=seed, level=level)


def _whole(value: float, name: str) -> int:
    number = float(value)
    if not math.isfinite(number) or number < 0 or abs(number - round(number)) > 1e-6:
        raise ValueError(f"{name} must be a non-negative whole number, got {value}")
    return int(round(number))


def beta_interval(successes: float, trials: int, level: float = 0.95) -> tuple[float, float]:
    """The Clopper & Pearson (1934) bounds B(a/2; x, n-x+1) and B(1-a/2; x+1, n-x) of x
    successes in n trials, a = 1 - level, for any real 0 <= x <= n (0 and 1 at the ends);
    (0, 1) without trials."""
    from scipy.stats import beta

    if trials <= 0:
        return 0.0, 1.0
    x = min(max(float(successes), 0.0), float(trials))
    tail = (1.0 - level) / 2.0
    low = 0.0 if x <= 0 else float(beta.ppf(tail, x, trials - x + 1))
    high = 1.0 if x >= trials else float(beta.ppf(1.0 - tail, x + 1, trials - x))
    return low, high


def proportion_interval(successes: float, trials: float, level: float = 0.95
                        ) -> ProportionInterval:
    """Return the proportion successes / trials and its exact Clopper & Pearson (1934) interval.

    The bounds are the Beta quantiles B(a/2; k, n-k+1) and B(1-a/2; k+1, n-k) for k successes in
    n trials, a = 1 - level: `scipy.stats.binomtest(k, n).proportion_ci(method="exact")`. It is
    never zero-width for n > 0 (5 of 5 gives about [0.478, 1]: all successes in 5 trials is
    still plausible for a rate near one half). With no trials there is no information: the
    value is undefined (NaN) and the interval is the whole range [0, 1].
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    k, n = _whole(successes, "successes"), _whole(trials, "trials")
    if k > n:
        raise ValueError(f"successes ({k}) cannot exceed trials ({n})")
    if n == 0:
        return ProportionInterval(math.nan, 0.0, 1.0)
    low, high = beta_interval(k, n, level)
    return ProportionInterval(k / n, low, high)


class RateInterval(NamedTuple):
    """A proportion over sentence units on the metric's scale: value, interval, the `units` it
    is a mean over, and how the interval was got (`CLOPPER_PEARSON` or `KORN_GRAUBARD`)."""

    value: float
    low: float
    high: float
    units: int
    method: str


def rate_interval(table: SentenceTable, level: float = 0.95) -> RateInterval:
    """Return a proportion's rate over its sentence units and its exact interval.

    x = sum of the units' success fractions over the seeds, n = the units: the Clopper-Pearson
    bounds of x in n (`beta_interval`). Where every unit's fraction is 0 or 1 (one seed, or
    seeds that agree sentence by sentence) x is whole and the interval is exact: 10 of 10
    sentences under 3 seeds is [69.2, 100], the interval of 10 trials, not of 30. Otherwise it
    is Korn & Graubard's (1998) interval with the design effect truncated at 1 (the effective
    sample size p(1-p)/Var(p^) is never below n here, since Var f_i <= p(1-p) for f_i in
    [0, 1]), which keeps its coverage at least nominal. Without units the value is NaN and the
    interval the whole range.
    """
    if table.scale is None:
        raise ValueError("rate_interval needs a proportion metric")
    fractions = table.fractions
    units = len(fractions)
    if units == 0:
        return RateInterval(math.nan, 0.0, table.scale, 0, CLOPPER_PEARSON)
    x = float(fractions.sum())
    low, high = beta_interval(x, units, level)
    whole = bool(np.all((fractions == 0) | (fractions == 1)))
    return RateInterval(table.scale * x / units, table.scale * low, table.scale * high, units,
                        CLOPPER_PEARSON if whole else KORN_GRAUBARD)


def mover_difference(first: tuple[float, float, float], second: tuple[float, float, float]
                     ) -> tuple[float, float]:
    """The interval of p1 - p2 from each value's own interval (value, low, high): the method of
    variance estimates recovery (MOVER) of Zou & Donner (2008),

        L = d - sqrt((p1 - l1)^2 + (u2 - p2)^2),  U = d + sqrt((u1 - p1)^2 + (p2 - l2)^2),

    with d = p1 - p2; here with exact (Clopper-Pearson) limits. Newcombe's (1998) method 10 is
    the same construction with Wilson score limits. It treats the two as independent, which for
    rates on the same test sentences (positively correlated) errs wide: the paired analyses use
    it only where the paired bootstrap collapses to a point. It is never zero-width while
    either interval has width: two rates of 0 in 1,000 trials differ by [-0.37, 0.37] percent,
    not by exactly 0. A NaN value gives NaN bounds."""
    (p1, l1, u1), (p2, l2, u2) = first, second
    d = p1 - p2
    return d - math.hypot(p1 - l1, u2 - p2), d + math.hypot(u1 - p1, p2 - l2)


def seed_spread(values: Sequence[float | None]) -> SeedSpread:
    """Return each seed's value, their mean and sample standard deviation (ddof=1).

    Undefined values (None or NaN) are kept as None in `values` and left out of the mean and the
    deviation; the mean is None when no value is defined, the deviation when fewer than two are.
    """
    numbers = np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)
    if numbers.size == 0:
        raise ValueError("seed_spread needs at least one value")
    finite = np.isfinite(numbers)
    defined = numbers[finite]
    return SeedSpread(n=int(numbers.size),
                      values=[float(v) if ok else None for v, ok in zip(numbers, finite)],
                      mean=float(defined.mean()) if defined.size else None,
                      std=float(defined.std(ddof=1)) if defined.size > 1 else None)


def seed_half_width(spread: SeedSpread, level: float = 0.95) -> float | None:
    """t_{s-1, (1+level)/2} x sd / sqrt(s) over the s seeds whose value is defined: the half
    width of the Student t interval of the mean over seeds; None with fewer than `MIN_SEEDS`."""
    from scipy.stats import t

    defined = sum(v is not None for v in spread.values)
    if defined < MIN_SEEDS or spread.std is None:
        return None
    return float(t.ppf((1.0 + level) / 2.0, defined - 1)) * spread.std / math.sqrt(defined)


def with_seed_variance(value: float, bounds: tuple[float, float], half_width: float
                       ) -> tuple[float, float]:
    """The interval `bounds` around `value` widened by an independent seed component of
    `half_width` on each side: v -/+ sqrt(sentence half-width^2 + seed half-width^2), the
    MOVER combination (Zou & Donner 2008) of the sentence-sampling interval and the t interval
    of the mean over seeds (a two-level model: seeds, then sentences). A bootstrap interval
    that does not hold `value` (it can, for a skewed score) is first extended to it."""
    low, high = bounds
    return (value - math.hypot(max(value - low, 0.0), half_width),
            value + math.hypot(max(high - value, 0.0), half_width))


def metric_score(metric: Metric, statistics: Sequence[np.ndarray], *, seed: int,
                 resamples: int = 1000, higher_is_better: bool | None = None,
                 signature: str | None = None, level: float = 0.95) -> MetricScore:
    """Return one (encoder, decoder, metric) score with its interval, from per-seed statistics.

    `statistics` holds one (n, k) array per decoder seed, over the same n test sentences; the
    test sentence is the unit (`harness.stats.units.sentence_table`).
    - `value`: a proportion's mean over its units of each unit's success fraction over the
      seeds (with one seed: successes / trials); any other metric's mean over the seeds of each
      seed's corpus score (seeds where it is undefined left out; None when undefined for all).
    - `ci95` and `interval`: a proportion's `rate_interval` ("clopper-pearson" or
      "korn-graubard"); any other metric's `cluster_bootstrap` ("bootstrap" with one seed,
      "cluster-bootstrap" with several) of `resamples` resamples drawn from `seed`; with at
      least `MIN_SEEDS` seeds the seed component is added (`with_seed_variance`, "+seeds-t")
      and `seed_variance` is true, otherwise false.
    - `support`: the units of a proportion (sentences; for Id/PERM the sentences where some
      seed found a permutation), otherwise the n sentences: never more than n.
    - `undefined_resamples`: bootstrap resamples whose score was undefined (None for the exact
      interval, which draws none); `seeds`: the `seed_spread` with several seeds, else None.
    `higher_is_better` defaults to the metric's own (`harness.protocols.higher_is_better`).
    """
    check_arguments(resamples, level)
    seeds = stacked(statistics)
    table = sentence_table(metric, seeds)
    spread = seed_spread(list(table.seed_values))
    undefined = None
    if table.is_proportion:
        rate = rate_interval(table, level)
        value, bounds, interval = rate.value, (rate.low, rate.high), rate.method
    else:
        boot = cluster_bootstrap(table, resamples=resamples, seed=seed, level=level)
        value, bounds, undefined = table.value, boot.bounds, boot.undefined
        interval = BOOTSTRAP if len(seeds) == 1 else CLUSTER_BOOTSTRAP
    half_width = seed_half_width(spread, level) if len(seeds) > 1 else None
    if half_width is not None and math.isfinite(value) and all(map(math.isfinite, bounds)):
        bounds = with_seed_variance(value, bounds, half_width)
        limits = (0.0, table.scale) if table.scale is not None else value_range(metric)
        if limits is not None:  # a rate stays a rate, BLEU stays in [0, 100]
            bounds = (max(bounds[0], limits[0]), min(bounds[1], limits[1]))
        interval = f"{interval}+{SEEDS_T}"
    direction = declared_direction(metric) if higher_is_better is None else higher_is_better
    return MetricScore(value=value, ci95=bounds, support=table.support,
                       higher_is_better=direction, signature=signature, interval=interval,
                       undefined_resamples=undefined,
                       seeds=spread if len(seeds) > 1 else None,
                       seed_variance=half_width is not None, chance=chance_score(metric))
