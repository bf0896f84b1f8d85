"""The learning curve's power-law fit and a target's projected size with its interval."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from harness.stats.curves import fit_power_law, sentences_for

SIZES = [2000, 4000, 8000, 16000]
VALUES = [1.1, 2.3, 3.9, 8.4]


def test_the_fit_is_scipys_least_squares_on_log_log():
    fit = fit_power_law(SIZES, VALUES)
    reference = stats.linregress([math.log(n) for n in SIZES], [math.log(v) for v in VALUES])
    assert fit.slope == pytest.approx(reference.slope)
    assert fit.intercept == pytest.approx(reference.intercept)
    half = stats.t.ppf(0.975, 2) * reference.stderr
    assert fit.slope_ci95 == pytest.approx((reference.slope - half, reference.slope + half))
    assert fit.value_at(16000) == pytest.approx(math.exp(reference.intercept
                                                         + reference.slope * math.log(16000)))


def test_fewer_than_three_points_above_zero_give_no_fit():
    assert fit_power_law([2000, 6000], [1.0, 3.0]) is None  # no two-point extrapolation
    assert fit_power_law([2000, 4000, 8000], [0.0, 1.0, 2.0]) is None


def test_an_exact_power_law_projects_a_point():
    sizes = [1000, 2000, 4000, 8000]
    fit = fit_power_law(sizes, [0.5 * (n / 1000) ** 1.5 for n in sizes])
    estimate, low, high = sentences_for(fit, 0.5 * 20 ** 1.5)
    assert estimate == pytest.approx(20000) and low == pytest.approx(20000)
    assert high == pytest.approx(20000)


def test_the_projection_interval_is_where_the_confidence_band_meets_the_target():
    fit = fit_power_law(SIZES, VALUES)
    target = 20.0
    estimate, low, high = sentences_for(fit, target)
    assert low < estimate < high
    t = stats.t.ppf(0.975, fit.df)

    def band_gap(n: float) -> float:  # |fitted - target| - t se(mean) at ln n, in log units
        x = math.log(n)
        se = fit.residual_se * math.sqrt(1 / fit.points + (x - fit.x_mean) ** 2 / fit.sxx)
        return abs(fit.intercept + fit.slope * x - math.log(target)) - t * se

    assert band_gap(low) == pytest.approx(0, abs=1e-9)
    assert band_gap(high) == pytest.approx(0, abs=1e-9)
    assert band_gap(estimate) < 0 and band_gap(low * 0.9) > 0 and band_gap(high * 1.1) > 0


def test_a_slope_not_distinguishable_from_zero_leaves_the_interval_unbounded():
    fit = fit_power_law([2000, 4000, 8000], [1.0, 3.0, 0.9])
    _, low, high = sentences_for(fit, 5.0)
    assert low is None and high is None
