"""Exposure of the canaries' entities (Carlini et al. 2019, "The Secret Sharer", Sec. 4).

For an entity of a canary, each ranker orders M candidate sentences (the canary with the true
value and with M-1 other values of its type substituted, `Canary.variants`) by its likelihood
of the whole sentence given the attacked vector of the canary: the trained decoder by its
log-probability log P(sentence | vector), summed over the sentence's pieces and its end; an
attack that ranks (`harness.protocols.Ranker`: the oracle, by the store's noise model given
the candidates' queries) by its own scores. Per entity type every ranker's exposure is kept
and the strongest's reported (`canary_recovery.entity_recovery`). The true sentence's rank
is 1 + the number of candidates more likely than it, with a tie counting a half (the mean
rank a random order of the tied candidates would give), and

    exposure = log2 M - log2 rank,

from log2 M bits (the true value ranked first) down to 0 (ranked last). An attacker that knows
nothing of the vector still ranks by its language model; because the true value is drawn at
random among the values of its type, its rank is then uniform on 1..M and the expected exposure
is log2 M - log2(M!) / M (`chance_exposure`, about log2 e = 1.44 bits for a large M), not 0:
that, and the floor encoder's attacker, are what an encoder's exposure is read against. Per
entity type the report gives the mean over the canaries (the canary is the unit) with a
percentile-bootstrap interval over canaries.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from harness.stats.intervals import percentile_interval, resample_counts

if TYPE_CHECKING:
    from harness.analyses.privacy.canaries import Canary

Scorer = Callable[[np.ndarray, list[str]], np.ndarray]
"""(rows, sentences) -> the NLL in nats of sentence i given the vector of canary rows[i]."""


def rank(nll: Sequence[float]) -> float:
    """The rank of the first candidate (the true one) among all by likelihood, lowest NLL
    first: 1 + the candidates with a lower NLL + half of those with the same."""
    scores = np.asarray(nll, dtype=np.float64)
    true, others = scores[0], scores[1:]
    return 1.0 + float(np.sum(others < true)) + 0.5 * float(np.sum(others == true))


def exposure(rank_of_true: float, candidates: int) -> float:
    """log2 M - log2 rank, in bits (Carlini et al. 2019, Sec. 4, over M candidates)."""
    return math.log2(candidates) - math.log2(rank_of_true)


def chance_exposure(candidates: int) -> float:
    """The expected exposure when the true candidate's rank is uniform on 1..M: log2 M -
    log2(M!) / M."""
    return math.log2(candidates) - math.lgamma(candidates + 1) / math.log(2) / candidates


def variant_nll(found: Sequence[Canary], score: Scorer) -> list[list[list[float]]]:
    """Per canary, per entity, the NLL of each candidate sentence given the canary's vector,
    scored in one call of `score`."""
    from harness.analyses.privacy.canaries import candidate_lists

    rows, lists = candidate_lists(found)
    flat = np.asarray(score(np.repeat(np.array(rows, dtype=np.int64), [len(c) for c in lists]),
                            [text for candidates in lists for text in candidates]),
                      dtype=np.float64).tolist()
    ends = np.cumsum([0, *(len(c) for c in lists)])
    return nested(found, [flat[a:b] for a, b in zip(ends[:-1], ends[1:], strict=True)])


def nested(found: Sequence[Canary], flat: Sequence[Sequence[float]]
           ) -> list[list[list[float]]]:
    """Flat per-(canary, entity) lists (`canaries.candidate_lists`' order) as per canary, per
    entity."""
    values = iter(flat)
    return [[list(next(values)) for _ in canary.variants] for canary in found]


def exposures(found: Sequence[Canary], nll: Sequence[Sequence[Sequence[float]]]
              ) -> dict[str, tuple[list[float], int]]:
    """Entity type -> (each canary's exposure of its entity of that type, M)."""
    by_kind: dict[str, tuple[list[float], int]] = {}
    for canary, scored in zip(found, nll, strict=True):
        for (kind, _), candidates in zip(canary.entities, scored, strict=True):
            values, _ = by_kind.setdefault(kind, ([], len(candidates)))
            values.append(exposure(rank(candidates), len(candidates)))
    return by_kind


def mean_interval(values: Sequence[float], *, resamples: int, seed: int, level: float = 0.95,
                  upper: float | None = None
                  ) -> tuple[float | None, tuple[float | None, float | None]]:
    """The mean of `values` and its percentile-bootstrap interval over them (each value one
    canary, drawn with replacement `resamples` times); None without values.

    The percentile bootstrap collapses to a point where every value is the same (every canary's
    true value ranked first: exposure log2 M for all), although a few more canaries could have
    gone otherwise. With `upper` (log2 M: the values lie in [0, upper]) such an interval is
    replaced by the exact Clopper-Pearson interval of the share x / n, x = sum(values) / upper
    over the n canaries, scaled by `upper` (Beta quantiles at a fractional x: for values in
    [0, 1] the sum is less dispersed than a binomial count of the same mean, Hoeffding 1956, so
    the interval is conservative). All n ranked first gives [upper B(a/2; n, 1), upper]:
    [4.82, 5] for 100 canaries of M = 32."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return None, (None, None)
    rng = np.random.default_rng(seed)
    means = np.concatenate([counts @ data / data.size
                            for counts in resample_counts(data.size, resamples, rng)])
    interval = percentile_interval(means, level)
    if upper is None or upper <= 0 or np.ptp(data) > 0:  # values that differ: the bootstrap
        return float(data.mean()), (interval.low, interval.high)
    from scipy.stats import beta

    n, x, tail = data.size, float(np.clip(data.sum() / upper, 0.0, data.size)), (1 - level) / 2
    low = 0.0 if x <= 0 else float(beta.ppf(tail, x, n - x + 1))
    high = 1.0 if x >= n else float(beta.ppf(1 - tail, x + 1, n - x))
    value = float(data[0])  # every value the same: the mean, free of summation rounding
    return value, (min(upper * low, value), max(upper * high, value))
