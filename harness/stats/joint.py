"""The joint permutation test of a diagnostic's mean correlation over downstream tasks.

A diagnostic tracks downstream performance, on the whole, when its mean correlation over the
T tasks, across the n encoders, is far from 0. Under the null hypothesis that the diagnostic
carries no information about the encoders' downstream scores, every relabelling of the
diagnostic's values over the encoders is equally likely, the task table held as it is (Pitman
1937). Permuting the diagnostic jointly against all the tasks at once keeps the tasks'
dependence on each other in the null distribution of the mean, which a test of each task on its
own, or of the mean as if the tasks were independent, would not.

The normalisations of the correlations do not change under a permutation of x, so the mean is a
linear statistic of the permuted values:

- Spearman (Pearson on average ranks, as `scipy.stats.spearmanr`) and Pearson:
  mean_t r(x_pi, y_t) = sum_i a_pi(i) w_i, w_i = (1/T) sum_t b_ti / (|a| |b_t|), with a and b_t
  the centred ranks (Pearson: values) of x and of task t's scores;
- Kendall's tau-b: mean_t tau(x_pi, y_t) = sum_{i<j} sign(x_pi(i) - x_pi(j)) W_ij,
  W_ij = (1/T) sum_t sign(y_ti - y_tj) / sqrt((n0 - n1)(n0 - n2_t)), n0 = n(n-1)/2 and n1, n2_t
  the pairs tied in x and in y_t (the tie counts do not change under a permutation).

p is two-sided, the fraction of permutations with |T(pi)| >= |T_obs|: exact over all n!
permutations up to `EXACT_MAX` encoders, else Monte-Carlo over m random permutations with
p = (b + 1) / (m + 1), b the number as extreme (Phipson & Smyth 2010: the observed labelling
counts as one of the permutations, so p is never 0 and the test keeps its level).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from harness.stats.correlation import EXACT_MAX, P_EXACT, _permutation_blocks, check_method

P_MONTE_CARLO = "monte-carlo"
"""How a joint p-value was got beyond `EXACT_MAX` encoders: random permutations, (b+1)/(m+1)."""

PERMUTATIONS = 99_999
"""Random permutations of a Monte-Carlo joint test (p resolves to 1e-5)."""

_CHUNK = 20_000
"""Random permutations drawn at once."""

_TOLERANCE = 1e-9
"""Statistics (mean correlations, in [-1, 1]) this close to the observed one count as tied."""


@dataclass(frozen=True)
class JointTest:
    """A mean correlation over tasks and its joint permutation p-value.

    `statistic` and `p` are None when undefined (fewer than 3 encoders, a constant diagnostic);
    `p_method` is "exact" or "monte-carlo", `permutations` how many the p is over (n! or m).
    """

    statistic: float | None
    p: float | None
    p_method: str | None
    permutations: int


def mean_correlation_test(x: np.ndarray, table: np.ndarray, method: str = "spearman", *,
                          exact_max: int = EXACT_MAX, permutations: int = PERMUTATIONS,
                          seed: int = 0) -> JointTest:
    """Return the mean over tasks of the correlation of `x` (n encoders) with each column of
    `table` (n encoders x T tasks), with its two-sided joint permutation p-value.

    Every value must be finite and no column constant (the caller leaves such tasks out).
    Exact with at most `exact_max` encoders, else Monte-Carlo over `permutations` random
    permutations drawn from `seed`.
    """
    check_method(method)
    x = np.asarray(x, dtype=np.float64)
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] != x.shape[0] or table.shape[1] == 0:
        raise ValueError(f"need an n-vector and an n x T table (T >= 1), got {x.shape} and "
                         f"{table.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(table))):
        raise ValueError("the joint test needs every value finite")
    if np.any(np.ptp(table, axis=0) == 0):
        raise ValueError("a task whose scores are all equal has no correlation")
    n = len(x)
    if n < 3 or np.ptp(x) == 0:
        return JointTest(None, None, None, 0)
    a, weights = _linear_form(x, table, method)
    observed = float(_statistics(a, weights, np.arange(n)[None, :], method)[0])
    exact = n <= exact_max
    blocks = _permutation_blocks(n) if exact else _random_blocks(n, permutations, seed)
    count = math.factorial(n) if exact else permutations
    extreme = sum(int(np.count_nonzero(np.abs(_statistics(a, weights, block, method))
                                       >= abs(observed) - _TOLERANCE)) for block in blocks)
    p = extreme / count if exact else (extreme + 1) / (count + 1)
    return JointTest(observed, float(min(p, 1.0)), P_EXACT if exact else P_MONTE_CARLO, count)


def _linear_form(x: np.ndarray, table: np.ndarray, method: str
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(a, w): the permuted terms and their weights, so that the mean correlation of the
    permutation pi is `_statistics(a, w, pi)` (module docstring)."""
    from scipy.stats import rankdata

    if method == "kendall":
        first, second = np.triu_indices(len(x), k=1)
        pairs = len(first)
        x_ties = pairs - np.count_nonzero(np.sign(x[first] - x[second]))
        signs = np.sign(table[first] - table[second])  # (pairs, T)
        y_ties = pairs - np.count_nonzero(signs, axis=0)
        scale = np.sqrt((pairs - x_ties) * (pairs - y_ties).astype(np.float64))
        return x, (signs / scale).mean(axis=1)
    if method == "spearman":
        x, table = rankdata(x), rankdata(table, axis=0)
    a = x - x.mean()
    b = table - table.mean(axis=0)
    weights = (b / np.sqrt((b ** 2).sum(axis=0))).mean(axis=1) / math.sqrt(float(a @ a))
    return a, weights


def _statistics(a: np.ndarray, weights: np.ndarray, pairings: np.ndarray, method: str
                ) -> np.ndarray:
    """The mean correlation for each row of `pairings` (index arrays pi: x is read as a[pi])."""
    permuted = a[pairings]
    if method != "kendall":
        return permuted @ weights
    first, second = np.triu_indices(len(a), k=1)
    return np.sign(permuted[:, first] - permuted[:, second]) @ weights


def _random_blocks(n: int, permutations: int, seed: int) -> Iterator[np.ndarray]:
    """`permutations` uniformly random permutations of range(n), in chunks, from `seed`."""
    rng = np.random.default_rng(seed)
    for start in range(0, permutations, _CHUNK):
        size = min(_CHUNK, permutations - start)
        yield np.argsort(rng.random((size, n)), axis=1)
