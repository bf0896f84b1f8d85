"""A learning curve fitted with its uncertainty: a diagnostic's growth with the number of
training sentences as a power law, value = c N^b, by least squares on log value against log N.

With m >= 3 points (x_j = ln N_j, y_j = ln value_j, every value above 0) the fit is ordinary
least squares, y = a + b x, its residual standard error s on m - 2 degrees of freedom and the
slope's 95% interval b +- t(0.975, m - 2) s / sqrt(Sxx) (the textbook regression interval,
scipy.stats.linregress's stderr). Where a target value is projected, the sizes N whose
confidence band of the mean, a + b x +- t s sqrt(1/m + (x - x_bar)^2 / Sxx), contains ln target
are its interval (Fieller's inversion; a quadratic in x): unbounded on a side where the band
never excludes the target, which is what two or three points usually say.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

LEVEL = 0.95


@dataclass(frozen=True)
class PowerLaw:
    """value = exp(intercept) N^slope, fitted on `points` sizes; `slope_ci95` its interval,
    `residual_se` s, `df` m - 2 (None and NaN where fewer than 3 points)."""

    intercept: float
    slope: float
    slope_ci95: tuple[float, float]
    residual_se: float
    df: int
    x_mean: float
    sxx: float
    points: int

    def value_at(self, sentences: float) -> float:
        """The fitted value at `sentences`."""
        return math.exp(self.intercept + self.slope * math.log(sentences))


def fit_power_law(sentences: Sequence[float], values: Sequence[float]) -> PowerLaw | None:
    """The power law through (N, value) points (module docstring); None with fewer than 3
    points above 0 or a single size."""
    pairs = [(math.log(n), math.log(v)) for n, v in zip(sentences, values)
             if v is not None and v > 0 and n > 0]
    if len(pairs) < 3 or len({x for x, _ in pairs}) < 2:
        return None
    x, y = np.array(pairs).T
    m = len(x)
    x_mean = float(x.mean())
    sxx = float(((x - x_mean) ** 2).sum())
    slope = float(((x - x_mean) * (y - y.mean())).sum() / sxx)
    intercept = float(y.mean() - slope * x_mean)
    residuals = y - (intercept + slope * x)
    se = math.sqrt(float((residuals ** 2).sum()) / (m - 2))
    half = float(stats.t.ppf(0.5 + LEVEL / 2, m - 2)) * se / math.sqrt(sxx)
    return PowerLaw(intercept=intercept, slope=slope, slope_ci95=(slope - half, slope + half),
                    residual_se=se, df=m - 2, x_mean=x_mean, sxx=sxx, points=m)


def sentences_for(fit: PowerLaw, target: float) -> tuple[float, float | None, float | None]:
    """(N at which the fit reaches `target`, low and high ends of its 95% interval): the sizes
    whose confidence band contains ln target; None for an end the band never reaches (the
    data cannot bound it). The point estimate is NaN for a flat or falling fit."""
    y0 = math.log(target)
    estimate = (math.exp((y0 - fit.intercept) / fit.slope) if fit.slope > 0 else math.nan)
    t = float(stats.t.ppf(0.5 + LEVEL / 2, fit.df))
    # (a + b x - y0)^2 <= t^2 s^2 (1/m + (x - xm)^2 / Sxx): A x^2 + B x + C <= 0
    k = (t * fit.residual_se) ** 2
    d = fit.intercept - y0
    a2 = fit.slope ** 2 - k / fit.sxx
    b1 = 2 * fit.slope * d + 2 * k * fit.x_mean / fit.sxx
    c0 = d ** 2 - k / fit.points - k * fit.x_mean ** 2 / fit.sxx
    if a2 <= 0:  # the slope is not significantly non-zero: the band never closes on a side
        return estimate, None, None
    disc = b1 ** 2 - 4 * a2 * c0
    if disc < 0 and disc > -1e-9 * (b1 ** 2 + abs(4 * a2 * c0)):
        disc = 0.0  # an exact fit: the band is the line, the interval the point
    if disc < 0:
        return estimate, None, None
    low = (-b1 - math.sqrt(disc)) / (2 * a2)
    high = (-b1 + math.sqrt(disc)) / (2 * a2)
    return estimate, math.exp(low), math.exp(high)
