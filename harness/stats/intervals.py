"""Intervals of one metric's corpus score: exact binomial, percentile bootstrap, and a two-level
bootstrap over test sentences and decoder seeds.

- A score that is a proportion of trials (Id, PERM, Id/PERM; `harness.protocols.
  proportion_counts`) gets the exact interval of Clopper & Pearson (1934): never zero-width,
  whereas a percentile bootstrap of 5 exact permutations out of 5 is the single point 100.
- Any other score gets the percentile bootstrap over test sentences (Efron & Tibshirani 1993,
  chapter 13): sentences are drawn with replacement, which for additive statistics is a vector
  of multinomial counts, so a resample's totals are `counts @ statistics`.
- Scores of decoders trained with different seeds get a two-level bootstrap: each resample
  draws the sentences (one count vector shared by all seeds) and one seed, so the interval
  holds the seed-to-seed variance as well as the sentence sampling variance.

Resamples whose score is undefined (NaN or infinite: Id/PERM without a permutation) are never
dropped silently: they are counted and reported beside the interval, which is taken over the
defined resamples (the distribution of the score given that it is defined).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from harness.protocols import higher_is_better as declared_direction
from harness.protocols import proportion_counts
from harness.results import MetricScore, SeedSpread

if TYPE_CHECKING:
    from harness.protocols import Metric

_BOOTSTRAP_CELLS = 4_000_000
"""Resample-by-sentence counts held in memory at once (32 MB of float64)."""

CLOPPER_PEARSON, BOOTSTRAP, BOOTSTRAP_SEEDS = "clopper-pearson", "bootstrap", "bootstrap-seeds"
"""How an interval was got (`MetricScore.interval`)."""


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


def stacked(statistics: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    """The per-seed statistics of one metric as one (seeds, n, k) float array, checked: at least
    one seed, every seed a non-empty (n, k) array of the same shape (the same test sentences)."""
    arrays = [np.asarray(s, dtype=np.float64) for s in statistics]
    if not arrays:
        raise ValueError("need the statistics of at least one seed")
    shape = arrays[0].shape
    if len(shape) != 2 or shape[0] == 0:
        raise ValueError(f"statistics must be a non-empty (n, k) array, got shape {shape}")
    if any(a.shape != shape for a in arrays):
        raise ValueError("every seed's statistics must have the same shape (same test "
                         f"sentences), got {[a.shape for a in arrays]}")
    return np.stack(arrays)


def resample_counts(n: int, resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Yield multinomial counts (c, n) of n sentences drawn with replacement, `resamples` rows in
    all, in chunks that bound memory; the chunking depends only on n and resamples, so a seeded
    `rng` fixes every row."""
    uniform = np.full(n, 1.0 / n)
    chunk = max(1, _BOOTSTRAP_CELLS // n)
    for start in range(0, resamples, chunk):
        counts = rng.multinomial(n, uniform, size=min(chunk, resamples - start))
        yield counts.astype(np.float64)


def resampled_scores(metric: Metric, seeds: np.ndarray, counts: np.ndarray,
                     choice: np.ndarray | None = None) -> np.ndarray:
    """Scores (c,) of resamples `counts` (c, n) of per-seed statistics `seeds` (S, n, k): row r
    is `corpus_score(counts[r] @ seeds[choice[r]], n)`, seed 0 when `choice` is None. One
    vectorised `corpus_score` call per seed."""
    n = seeds.shape[1]
    if choice is None:
        return np.asarray(metric.corpus_score(counts @ seeds[0], n), dtype=np.float64).reshape(-1)
    scores = np.full(len(counts), np.nan)
    for s in range(len(seeds)):
        rows = choice == s
        if rows.any():
            scores[rows] = np.asarray(metric.corpus_score(counts[rows] @ seeds[s], n),
                                      dtype=np.float64).reshape(-1)
    return scores


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


def bootstrap_ci(metric: Metric, statistics: np.ndarray, *, resamples: int = 1000, seed: int = 0,
                 level: float = 0.95) -> BootstrapInterval:
    """Return the percentile-bootstrap interval of the metric's corpus score over sentences.

    Sentences are resampled with replacement (Efron & Tibshirani 1993): each resample is a vector
    of multinomial counts over the n sentences, so its summed statistics are `counts @ statistics`
    and every resample is scored in one vectorised `corpus_score` call. Deterministic for a seed.
    Resamples where the score is undefined (NaN, e.g. Id/PERM without a permutation) are counted
    in `undefined`; the bounds are percentiles of the defined ones, NaN when none is defined.
    """
    return bootstrap_seeds_ci(metric, [statistics], resamples=resamples, seed=seed, level=level)


def bootstrap_seeds_ci(metric: Metric, statistics: Sequence[np.ndarray], *, resamples: int = 1000,
                       seed: int = 0, level: float = 0.95) -> BootstrapInterval:
    """Return the two-level percentile-bootstrap interval over sentences and decoder seeds.

    `statistics` holds one (n, k) array per decoder seed, over the same n test sentences. Each
    resample draws multinomial counts over the sentences, shared by the seeds, then one seed
    uniformly (a two-level bootstrap: the upper level, the seed, and the lower level, the
    sentences, are both resampled); its score is that seed's
    `corpus_score(counts @ statistics[seed])`. The interval so describes the score of a decoder
    trained with another seed on another test sample: seed variance is included, and the
    interval is wider than the mean over seeds alone would need. With one seed no seed is drawn
    and this is `bootstrap_ci`. Per chunk of resamples the counts are drawn first, then the
    seeds. Undefined resamples are counted as in `bootstrap_ci`.
    """
    check_arguments(resamples, level)
    seeds = stacked(statistics)
    rng = np.random.default_rng(seed)
    scores = []
    for counts in resample_counts(seeds.shape[1], resamples, rng):
        choice = rng.integers(len(seeds), size=len(counts)) if len(seeds) > 1 else None
        scores.append(resampled_scores(metric, seeds, counts, choice))
    return percentile_interval(np.concatenate(scores), level)


def _whole(value: float, name: str) -> int:
    number = float(value)
    if not math.isfinite(number) or number < 0 or abs(number - round(number)) > 1e-6:
        raise ValueError(f"{name} must be a non-negative whole number, got {value}")
    return int(round(number))


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
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return ProportionInterval(k / n, float(ci.low), float(ci.high))


class PooledProportion(NamedTuple):
    """A proportion metric's rate over the successes and trials summed over seeds, on the
    metric's scale, with the exact interval of those counts (`proportion_interval`)."""

    value: float
    low: float
    high: float
    trials: int


def pooled_proportion(metric: Metric, statistics: Sequence[np.ndarray] | np.ndarray,
                      level: float = 0.95) -> PooledProportion | None:
    """The pooled rate of a proportion metric (`harness.protocols.proportion_counts`) over its
    per-seed statistics (one (n, k) array per seed); None for other metrics."""
    seeds = stacked(statistics)
    proportion = proportion_counts(metric, seeds.sum(axis=1), seeds.shape[1])
    if proportion is None:
        return None
    successes, trials, scale = proportion
    pooled = (float(np.asarray(successes, dtype=np.float64).sum()),
              float(np.asarray(trials, dtype=np.float64).sum()))
    exact = proportion_interval(*pooled, level)
    return PooledProportion(scale * exact.value, scale * exact.low, scale * exact.high,
                            _whole(pooled[1], "trials"))


def difference_interval(first: PooledProportion, second: PooledProportion
                        ) -> tuple[float, float]:
    """The interval of first - second from each rate's own interval: Newcombe's (1998) hybrid
    score method 10, the MOVER of Zou & Donner (2008),

        L = d - sqrt((p1 - l1)^2 + (u2 - p2)^2),  U = d + sqrt((u1 - p1)^2 + (p2 - l2)^2),

    with d = p1 - p2. It treats the rates as independent, which for rates on the same test
    sentences (positively correlated) errs wide: the paired analyses use it only where the
    paired bootstrap collapses to a point. It is never zero-width while either rate's interval
    has width, so two rates of 0 in 1,000 trials differ by [-0.37, 0.37] percent, not by
    exactly 0. A rate without trials (NaN) gives NaN bounds."""
    d = first.value - second.value
    low = d - math.hypot(first.value - first.low, second.high - second.value)
    high = d + math.hypot(first.high - first.value, second.value - second.low)
    return low, high


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


def hull(first: tuple[float, float], second: tuple[float, float]) -> tuple[float, float]:
    """The smallest interval containing both; a NaN bound of one side yields the other's."""
    lows = [b for b in (first[0], second[0]) if math.isfinite(b)]
    highs = [b for b in (first[1], second[1]) if math.isfinite(b)]
    return (min(lows) if lows else math.nan, max(highs) if highs else math.nan)


def metric_score(metric: Metric, statistics: Sequence[np.ndarray], *, seed: int,
                 resamples: int = 1000, higher_is_better: bool | None = None,
                 signature: str | None = None, level: float = 0.95) -> MetricScore:
    """Return one (encoder, decoder, metric) score with its interval, from per-seed statistics.

    `statistics` holds one (n, k) array per decoder seed, over the same n test sentences.
    - `value`: the mean over seeds of each seed's corpus score (seeds where it is undefined left
      out; None when it is undefined for all).
    - `ci95` and `interval`: a proportion metric with one seed gets "clopper-pearson", the exact
      interval of its summed successes and trials, scaled by `proportion_scale`
      (`proportion_interval`); a proportion over several seeds gets
      "clopper-pearson+bootstrap-seeds", the hull of the exact interval of the counts pooled
      over the seeds and the two-level bootstrap interval (`bootstrap_seeds_ci`), so it is
      never zero-width for small counts and still carries the seed variance; other metrics
      get "bootstrap-seeds" with several seeds and "bootstrap" with one (`bootstrap_ci`), each
      with `resamples` resamples drawn from `seed`.
    - `support`: for a proportion, its trials summed over the seeds; otherwise the n
      sentences.
    - `undefined_resamples`: bootstrap resamples whose score was undefined (None for the exact
      interval, which draws none); `seeds`: the `seed_spread` with several seeds, else None.
    `higher_is_better` defaults to the metric's own (`harness.protocols.higher_is_better`).
    """
    check_arguments(resamples, level)
    seeds = stacked(statistics)
    n = seeds.shape[1]
    totals = seeds.sum(axis=1)
    values = np.asarray(metric.corpus_score(totals, n), dtype=np.float64).reshape(-1)
    spread = seed_spread(list(values))
    pooled = pooled_proportion(metric, seeds, level)
    support, undefined, exact_ci = n, None, None
    if pooled is not None:
        support, exact_ci = pooled.trials, (pooled.low, pooled.high)
    if exact_ci is not None and len(seeds) == 1:
        ci95, interval = exact_ci, CLOPPER_PEARSON
    else:
        boot = bootstrap_seeds_ci(metric, list(seeds), resamples=resamples, seed=seed, level=level)
        ci95, undefined = boot.bounds, boot.undefined
        interval = BOOTSTRAP_SEEDS if len(seeds) > 1 else BOOTSTRAP
        if exact_ci is not None:
            # A rate averaged over seeds: the bootstrap carries the seed variance, the exact
            # interval of the pooled counts the small-count uncertainty the bootstrap cannot
            # see (it collapses to a point when every trial succeeded); report their hull.
            ci95 = hull(ci95, exact_ci)
            interval = f"{CLOPPER_PEARSON}+{BOOTSTRAP_SEEDS}"
    direction = declared_direction(metric) if higher_is_better is None else higher_is_better
    return MetricScore(value=spread.mean, ci95=ci95, support=support, higher_is_better=direction,
                       signature=signature, interval=interval, undefined_resamples=undefined,
                       seeds=spread if len(seeds) > 1 else None)
