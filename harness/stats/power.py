"""The power of a permutation test of a correlation across encoders, and the smallest population
correlation it detects, by simulation.

Model: the encoders' diagnostic values and downstream scores are n draws of a bivariate normal
(a Gaussian copula: rank tests see only the ranks) whose population correlation is `rho` on the
method's own scale: Spearman's rho_s = (6/pi) asin(r/2), Kendall's tau = (2/pi) asin(r) or
Pearson's r (Pearson 1907; Kruskal 1958). For the mean correlation over tasks
(`harness.stats.joint`) the downstream side is taken to be one factor shared by every task:
then every task ranks the encoders alike, the mean is one correlation and its joint
permutation test is the permutation test of that correlation. Task-specific variation only
averages out in the mean (a diagonal with correlation rho to each of T tasks that share less
than one factor correlates more than rho with their mean), so the power stated is a lower bound
and the detectable rho an upper bound: conservative.

The test rejects when its two-sided p <= alpha: |T| >= c, c the smallest value of the null
distribution whose tail P0(|T| >= c) is at most alpha. For Spearman and Kendall the null is
that of the statistic over all n! permutations of distinct ranks (continuous draws have no
ties), enumerated up to `EXACT_MAX` encoders and sampled beyond (the Monte-Carlo test's
limit); for Pearson, whose permutation null depends on the values, the normal-theory null
(r = t / sqrt(n - 2 + t^2), t Student's with n - 2 degrees of freedom), which the permutation
test approaches under this model. Power is the fraction of simulated draws rejected; the
smallest detectable rho is found by bisection over rho with the same draws throughout (common
random numbers), so the power curve it searches is smooth and seeded.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from harness.stats.correlation import EXACT_MAX, _null_distribution, check_method

SIMULATIONS = 20_000
"""Simulated draws behind a power (its standard error at 0.8 is 0.003)."""

NULL_SAMPLES = 200_000
"""Random permutations behind a rank statistic's null beyond `EXACT_MAX` encoders."""

_BISECTIONS = 30
_TOLERANCE = 1e-9
_CEILING = 0.9999
"""The largest population correlation searched: below it the draws are still distinct."""


def pearson_from(rho: float, method: str) -> float:
    """The bivariate normal's Pearson r whose population correlation on `method`'s scale is
    `rho`: r = 2 sin(pi rho / 6) for Spearman, sin(pi rho / 2) for Kendall, rho for Pearson."""
    check_method(method)
    if method == "spearman":
        return 2.0 * math.sin(math.pi * rho / 6.0)
    if method == "kendall":
        return math.sin(math.pi * rho / 2.0)
    return rho


def critical_value(n: int, alpha: float, method: str = "spearman", *,
                   exact_max: int = EXACT_MAX, seed: int = 0) -> float | None:
    """Return the smallest |correlation| a two-sided test over n encoders rejects at `alpha`
    (module docstring), or None when no correlation reaches p <= alpha (with 4 encoders the
    smallest exact p is 2/4! = 0.083)."""
    check_method(method)
    if method == "pearson":
        from scipy.stats import t

        q = float(t.ppf(1.0 - alpha / 2.0, n - 2))
        return q / math.sqrt(n - 2 + q * q)
    null = _rank_null(n, method, exact_max, seed)
    allowed = alpha * len(null) + 1e-9  # permutations as extreme as the critical value, at most
    k = len(null) - math.floor(allowed)
    if k >= len(null):
        return None
    index = int(np.searchsorted(null, null[k] - _TOLERANCE, side="left"))
    if len(null) - index > allowed:  # null[k] is tied with smaller values
        index = int(np.searchsorted(null, null[k] + _TOLERANCE, side="left"))
        if index >= len(null):
            return None
    return float(null[index])


@lru_cache(maxsize=8)
def _rank_null(n: int, method: str, exact_max: int, seed: int) -> np.ndarray:
    """Sorted |correlation| of distinct ranks over all n! permutations (sampled beyond
    `exact_max`)."""
    ranks = np.arange(1.0, n + 1.0)
    if method == "spearman":
        centred = ranks - ranks.mean()
        scale = float(centred @ centred)
    else:
        centred, scale = ranks, n * (n - 1) / 2.0
    if n <= exact_max:
        return _null_distribution(method, tuple(centred), tuple(centred)) / scale
    rng = np.random.default_rng(seed)
    permuted = np.argsort(rng.random((NULL_SAMPLES, n)), axis=1)
    return np.sort(np.abs(_rank_statistics(centred[permuted], method)))


def _rank_statistics(ranks_y: np.ndarray, method: str) -> np.ndarray:
    """The correlation of the ranks 1..n (in order) with each row of `ranks_y`."""
    n = ranks_y.shape[1]
    if method == "kendall":
        first, second = np.triu_indices(n, k=1)
        return np.sign(ranks_y[:, second] - ranks_y[:, first]).sum(axis=1) / (n * (n - 1) / 2)
    centred = np.arange(n) - (n - 1) / 2.0
    y = ranks_y - ranks_y.mean(axis=1, keepdims=True)
    return (y @ centred) / float(centred @ centred)


class PowerSimulation:
    """Seeded draws of n encoders under the bivariate normal model, reused for every rho."""

    def __init__(self, n: int, method: str = "spearman", *, simulations: int = SIMULATIONS,
                 seed: int = 0) -> None:
        check_method(method)
        rng = np.random.default_rng(seed)
        self.n, self.method = n, method
        self._x = rng.standard_normal((simulations, n))
        self._noise = rng.standard_normal((simulations, n))
        order = np.argsort(self._x, axis=1)  # each draw sorted by x: x's ranks are 1..n
        self._x = np.take_along_axis(self._x, order, axis=1)
        self._noise = np.take_along_axis(self._noise, order, axis=1)

    def statistics(self, rho: float) -> np.ndarray:
        """The sample correlation of every draw at population correlation `rho`."""
        r = pearson_from(rho, self.method)
        y = r * self._x + math.sqrt(max(0.0, 1.0 - r * r)) * self._noise
        if self.method == "pearson":
            x = self._x - self._x.mean(axis=1, keepdims=True)
            y = y - y.mean(axis=1, keepdims=True)
            return (x * y).sum(axis=1) / np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))
        ranks_y = np.argsort(np.argsort(y, axis=1), axis=1).astype(np.float64) + 1.0
        return _rank_statistics(ranks_y, self.method)

    def power(self, rho: float, critical: float | None) -> float:
        """The fraction of draws whose |correlation| reaches `critical` (0 without one)."""
        if critical is None:
            return 0.0
        return float(np.mean(np.abs(self.statistics(rho)) >= critical - _TOLERANCE))


def correlation_power(rho: float, n: int, alpha: float, method: str = "spearman", *,
                      simulations: int = SIMULATIONS, seed: int = 0,
                      exact_max: int = EXACT_MAX) -> float:
    """Return the power of the two-sided permutation test at level `alpha` over n encoders when
    the population correlation is `rho` (module docstring), by simulation."""
    critical = critical_value(n, alpha, method, exact_max=exact_max, seed=seed)
    return PowerSimulation(n, method, simulations=simulations, seed=seed).power(rho, critical)


def min_detectable_correlation(n: int, alpha: float, power: float = 0.8,
                               method: str = "spearman", *, simulations: int = SIMULATIONS,
                               seed: int = 0, exact_max: int = EXACT_MAX) -> float | None:
    """Return the smallest population correlation the two-sided permutation test at level
    `alpha` over n encoders detects with probability `power`, by simulation and bisection over
    rho in [0, 0.9999]; None when even 0.9999 is detected less often (too few encoders for
    `alpha`)."""
    if not 0.0 < power < 1.0 or not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha and power must lie strictly between 0 and 1, got {alpha} and "
                         f"{power}")
    if n < 3:
        return None
    critical = critical_value(n, alpha, method, exact_max=exact_max, seed=seed)
    simulation = PowerSimulation(n, method, simulations=simulations, seed=seed)
    if critical is None or simulation.power(_CEILING, critical) < power:
        return None
    low, high = 0.0, _CEILING
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2.0
        if simulation.power(middle, critical) >= power:
            high = middle
        else:
            low = middle
    return high
