"""Correlations across encoders, with exact permutation p-values (Kerscher & Eger 2020, section 3).

Vec2Sent asks whether a diagnostic ranks encoders as downstream tasks do: it reports the Spearman
rank correlation, across encoders, between each diagnostic and each SentEval task (Figure 2), and
their average and minimum over tasks. Pearson and Kendall are offered for comparison.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

CORRELATIONS: dict[str, str] = {
    "spearman": "spearmanr",
    "pearson": "pearsonr",
    "kendall": "kendalltau",
}
"""Correlation methods by name -> the `scipy.stats` function computing (statistic, p-value)."""

EXACT_MAX = 10
"""Largest number of encoders whose p-value enumerates all n! permutations (10! = 3,628,800)."""

_BLOCK = 8
"""Permutations are enumerated in blocks over the last 8 positions: 8! = 40,320 rows at once."""

P_EXACT, P_SCIPY = "exact", "scipy"
"""How a p-value was obtained: full permutation enumeration, or scipy's own p-value."""

FISHER_Z = "fisher-z"
"""How a correlation's interval was got (`Correlations.interval`): Fisher's z transformation
across the encoders (`fisher_interval`)."""

_FISHER_VARIANCE = {"pearson": (1.0, 3), "kendall": (0.437, 4)}
"""(c, d) of Var(atanh r) ~ c / (n - d): Fisher (1921) for Pearson's r; Fieller, Hartley &
Pearson (1957) for Kendall's tau. Spearman's rho has its own (`fisher_variance`)."""


@dataclass(frozen=True)
class Correlation:
    """A correlation across encoders: rho, its p-value and how it was got, over n encoders.

    rho and p are None when undefined; `p_method` is "exact" (all n! permutations) or "scipy".
    """

    rho: float | None
    p: float | None
    n: int
    p_method: str | None = None

    def to_json(self) -> dict[str, float | int | str | None]:
        """Return {"rho", "p", "p_method", "n"}, the results.json form (no p_method when
        undefined, so an undefined cell reads {"rho": None, "p": None, "n": n})."""
        if self.p_method is None:
            return {"rho": self.rho, "p": self.p, "n": self.n}
        return {"rho": self.rho, "p": self.p, "p_method": self.p_method, "n": self.n}


def check_method(method: str) -> None:
    """Raise ValueError unless `method` is one of `CORRELATIONS`."""
    if method not in CORRELATIONS:
        raise ValueError(f"unknown correlation method {method!r}; choose one of "
                         f"{', '.join(CORRELATIONS)}")


def _finite(value: object) -> bool:
    try:
        return math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _none_if_nan(value: float) -> float | None:
    value = float(value)
    return None if math.isnan(value) else value


def correlate(x: Mapping[str, float | None], y: Mapping[str, float | None],
              method: str = "spearman", *,
              exact_max: int = EXACT_MAX) -> Correlation:
    """Return the correlation across encoders of two encoder -> value maps (paper section 3).

    Pairwise deletion: only encoders with a finite value on both sides count, and `n` says how
    many did. rho and p are None when fewer than 3 remain or a side is constant (undefined).
    The paper uses Spearman's rho; Pearson and Kendall's tau are offered for comparison.
    With at most `exact_max` encoders p is the exact two-sided permutation p-value
    (`permutation_pvalue`); with more, scipy's p-value (t approximation for Spearman and
    Pearson, exact or normal for Kendall), and `p_method` says which.
    """
    check_method(method)
    common = [key for key in x if key in y and _finite(x[key]) and _finite(y[key])]
    xs = np.array([float(x[key]) for key in common])
    ys = np.array([float(y[key]) for key in common])
    if len(common) < 3 or np.ptp(xs) == 0 or np.ptp(ys) == 0:
        return Correlation(rho=None, p=None, n=len(common))
    # scipy.stats is imported on use: it is slow to import and most commands never correlate.
    from scipy import stats as scipy_stats

    result = getattr(scipy_stats, CORRELATIONS[method])(xs, ys)
    if len(common) <= exact_max:
        return Correlation(rho=_none_if_nan(result[0]), p=permutation_pvalue(xs, ys, method),
                           n=len(common), p_method=P_EXACT)
    return Correlation(rho=_none_if_nan(result[0]), p=_none_if_nan(result[1]), n=len(common),
                       p_method=P_SCIPY)


def permutation_pvalue(x: np.ndarray, y: np.ndarray, method: str = "spearman") -> float:
    """Return the exact two-sided permutation p-value of a correlation, over all n! pairings.

    Under the null hypothesis of no association every pairing of the x values with the y values
    is equally likely (Pitman 1937); p is the fraction of the n! pairings whose statistic is at
    least as extreme as the observed one, |T(pi)| >= |T_obs|. For Spearman (on ranks, ties
    averaged) and Pearson, T = sum_i a_i b_pi(i) with centred a and b; for Kendall,
    T = sum_{i<j} sign(x_i - x_j) sign(y_pi(i) - y_pi(j)). Their normalisations do not depend on
    the pairing, so ranking the pairings by T ranks them by rho or tau. Feasible up to about 10
    values; the null distribution is cached, so a matrix of tasks over the same encoders
    enumerates once per distinct set of (sorted) values.
    """
    check_method(method)
    a, b = _centred_terms(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64), method)
    if len(a) != len(b) or len(a) < 2:
        raise ValueError(f"need two equal-length samples of 2 or more values, got {len(a)} and "
                         f"{len(b)}")
    observed = abs(_statistic(a, b, np.arange(len(a))[None, :], method)[0])
    null = _null_distribution(method, tuple(np.sort(a)), tuple(np.sort(b)))
    # Statistics tied with the observed one must count as "as extreme" despite rounding.
    tolerance = 1e-9 * (1.0 + np.abs(a).sum() * np.abs(b).max())
    extreme = len(null) - np.searchsorted(null, observed - tolerance, side="left")
    return float(extreme / len(null))


def _centred_terms(x: np.ndarray, y: np.ndarray, method: str) -> tuple[np.ndarray, np.ndarray]:
    from scipy.stats import rankdata

    if method == "pearson":
        return x - x.mean(), y - y.mean()
    # Kendall's T only reads the signs of differences, which ranks keep; ranks also make the
    # cached null distribution shared by every sample with the same ties.
    x, y = rankdata(x), rankdata(y)
    return (x, y) if method == "kendall" else (x - x.mean(), y - y.mean())


def _statistic(a: np.ndarray, b: np.ndarray, pairings: np.ndarray, method: str) -> np.ndarray:
    """T for each row of `pairings` (index arrays pi): b is read as b[pi]."""
    permuted = b[pairings]
    if method != "kendall":
        return permuted @ a
    first, second = np.triu_indices(len(a), k=1)
    signs_a = np.sign(a[first] - a[second])
    return np.sign(permuted[:, first] - permuted[:, second]) @ signs_a


@lru_cache(maxsize=4)
def _null_distribution(method: str, a: tuple[float, ...], b: tuple[float, ...]) -> np.ndarray:
    """Sorted |T| over all n! pairings of a and b (depends only on the two multisets)."""
    a_values, b_values = np.array(a), np.array(b)
    parts = [np.abs(_statistic(a_values, b_values, block, method))
             for block in _permutation_blocks(len(a))]
    return np.sort(np.concatenate(parts))


@lru_cache(maxsize=2)
def _all_permutations(m: int) -> np.ndarray:
    return np.array(list(itertools.permutations(range(m))), dtype=np.intp).reshape(-1, m)


def _permutation_blocks(n: int) -> Iterator[np.ndarray]:
    """Yield every permutation of range(n) exactly once, in blocks of at most 8! rows."""
    tail = min(n, _BLOCK)
    base = _all_permutations(tail)
    if tail == n:  # one block: the cached table itself, read only
        yield base
        return
    for prefix in itertools.permutations(range(n), n - tail):
        rest = np.array([i for i in range(n) if i not in prefix], dtype=np.intp)
        block = np.empty((len(base), n), dtype=np.intp)
        block[:, :n - tail] = prefix
        block[:, n - tail:] = rest[base]
        yield block


def correlation_matrix(diagnostics: Mapping[str, Mapping[str, float | None]],
                       downstream: Mapping[str, Mapping[str, float]],
                       method: str = "spearman", *,
                       exact_max: int = EXACT_MAX) -> dict[str, dict[str, Correlation]]:
    """Return diagnostic -> task -> correlation across encoders (paper Figure 2).

    `diagnostics` maps diagnostic -> encoder -> value; `downstream` maps encoder -> task -> score.
    Tasks appear in the order they are first met in `downstream`.
    """
    tasks = list(dict.fromkeys(task for scores in downstream.values() for task in scores))
    by_task = {task: {encoder: scores[task] for encoder, scores in downstream.items()
                      if task in scores}
               for task in tasks}
    return {diagnostic: {task: correlate(values, by_task[task], method, exact_max=exact_max)
                         for task in tasks}
            for diagnostic, values in diagnostics.items()}


def summarise(matrix: dict[str, dict[str, Correlation]]) -> dict[str, dict[str, float | None]]:
    """Return diagnostic -> {"mean", "min", "tasks"} of rho over tasks (paper section 3's avg
    and min; `tasks` counts the tasks they are over).

    Tasks whose correlation is undefined are left out; mean and min are None when none is
    defined.
    """
    summary: dict[str, dict[str, float | None]] = {}
    for diagnostic, row in matrix.items():
        rhos = [c.rho for c in row.values() if c.rho is not None]
        summary[diagnostic] = {"mean": float(np.mean(rhos)) if rhos else None,
                               "min": float(min(rhos)) if rhos else None, "tasks": len(rhos)}
    return summary


def fisher_variance(rho: float, n: int, method: str = "spearman") -> float:
    """Return Var(atanh r) of a correlation r = `rho` over n encoders (n above d below).

    Spearman: (1 + r^2 / 2) / (n - 3), Bonett & Wright (2000), which grows with |r| where the
    constant 1.06 / (n - 3) of Fieller, Hartley & Pearson (1957) does not and so undercovers
    strong correlations over few encoders. Pearson: 1 / (n - 3) (Fisher 1921); Kendall:
    0.437 / (n - 4) (Fieller, Hartley & Pearson 1957).
    """
    check_method(method)
    if method == "spearman":
        return (1.0 + rho * rho / 2.0) / (n - 3)
    c, d = _FISHER_VARIANCE[method]
    return c / (n - d)


_ROUNDING = 1e-12
"""A correlation this close to +-1 is +-1 (`fisher_interval`)."""


@lru_cache(maxsize=64)
def _quantile(level: float, n: int, method: str) -> float:
    """The two-sided quantile of `fisher_interval`: Student's t with n - 2 degrees of freedom for
    Spearman, the standard normal otherwise."""
    from scipy.stats import norm, t

    upper = (1.0 + level) / 2.0
    return float(t.ppf(upper, n - 2) if method == "spearman" else norm.ppf(upper))


def fisher_interval(rho: float, n: int, method: str = "spearman", level: float = 0.95
                    ) -> tuple[float, float]:
    """Return the interval of a correlation over n encoders by Fisher's z transformation.

    z = atanh(rho) is roughly normal with variance `fisher_variance`: (1 + rho^2 / 2) / (n - 3)
    for Spearman (Bonett & Wright 2000), 1/(n-3) for Pearson, 0.437/(n-4) for Kendall
    (Fieller, Hartley & Pearson 1957); the interval is tanh(z -/+ q sqrt(variance)). q is the
    normal quantile z_{(1+level)/2} for Pearson and Kendall and, for Spearman, Student's
    t_{n-2, (1+level)/2}: a small-sample allowance for the sample rho's bias towards 0 at
    strong correlations (E r_s = ((n-2) rho_s + 3 tau) / (n + 1) for a population Spearman
    rho_s and Kendall tau), with which the normal quantile covers 0.93 at rho_s = 0.95 over 13
    encoders; with t the coverage is at least 0.95 for rho_s in [0, 0.95] and 7 to 30 encoders
    under bivariate normality (tests/test_paired.py simulates it against scipy). It reflects
    the uncertainty across encoders (which encoders happened to be evaluated), not across test
    sentences. At |rho| = 1, where z is infinite, the far bound is taken at the next value a
    rank correlation without ties can reach (1 - 12/(n^3 - n) for Spearman and, by the same
    rule, Pearson: one adjacent swap of ranks; Kendall 1 - 4/(n(n-1))) and the near bound is
    +-1; a |rho| within 1e-12 of 1 is taken as 1 (rounding). Any other |rho| < 1 is transformed
    as it is. With n <= 3 (Kendall 4) it is [-1, 1].
    """
    check_method(method)
    d = 3 if method == "spearman" else _FISHER_VARIANCE[method][1]
    if n <= d or not math.isfinite(rho):
        return -1.0, 1.0
    if abs(rho) >= 1.0 - _ROUNDING:  # 1 up to rounding: a batched Pearson can give 1 - 2e-16
        rho = math.copysign(1.0, rho)
    ceiling = 1.0 - (4.0 / (n * (n - 1)) if method == "kendall" else 12.0 / (n ** 3 - n))
    clipped = math.copysign(ceiling, rho) if abs(rho) >= 1.0 else rho
    half = _quantile(level, n, method) * math.sqrt(fisher_variance(clipped, n, method))
    z = math.atanh(clipped)
    low, high = math.tanh(z - half), math.tanh(z + half)
    if rho >= 1.0:
        high = 1.0
    if rho <= -1.0:
        low = -1.0
    return low, high
