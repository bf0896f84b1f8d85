"""The Gaussian mechanism's calibration: the noise standard deviation sigma that makes
x + N(0, sigma^2 I) (epsilon, delta)-differentially private for a query of L2 sensitivity
Delta, and back, the epsilon a given sigma is worth.

- classic: sigma = sqrt(2 ln(1.25 / delta)) * Delta / epsilon (Dwork & Roth 2014, The
  Algorithmic Foundations of Differential Privacy, Theorem A.1), proved for epsilon < 1 only;
- analytic: the smallest sigma with
  Phi(Delta / (2 sigma) - epsilon sigma / Delta) - e^epsilon Phi(-Delta / (2 sigma) - epsilon
  sigma / Delta) <= delta, the exact condition for (epsilon, delta)-DP of the Gaussian
  mechanism, for every epsilon > 0 (Balle & Wang 2018, Improving the Gaussian Mechanism for
  Differential Privacy: Analytical Calibration and Optimal Denoising, ICML, Theorem 8), solved
  here with scipy's Brent root finder rather than the paper's Algorithm 1.
"""

from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.stats import norm

CALIBRATIONS = ("classic", "analytic")


def classic_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """sigma = sqrt(2 ln(1.25 / delta)) * Delta / epsilon (Dwork & Roth 2014, Theorem A.1;
    (epsilon, delta)-DP for epsilon < 1, which the caller checks)."""
    return math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / epsilon


def analytic_delta(epsilon: float, sigma: float, sensitivity: float) -> float:
    """The smallest delta for which x + N(0, sigma^2 I) is (epsilon, delta)-DP at L2
    sensitivity Delta: Phi(Delta/(2 sigma) - epsilon sigma/Delta) - e^epsilon Phi(-Delta/(2
    sigma) - epsilon sigma/Delta) (Balle & Wang 2018, Theorem 8), the second term through
    log Phi so that a large epsilon does not overflow."""
    a, b = sensitivity / (2.0 * sigma), epsilon * sigma / sensitivity
    second = math.exp(epsilon + float(norm.logcdf(-a - b)))
    return max(0.0, float(norm.cdf(a - b)) - second)


def analytic_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """The smallest sigma with `analytic_delta(epsilon, sigma, Delta) <= delta` (Balle & Wang
    2018, Theorem 8; the delta falls as sigma grows), to a relative 1e-12."""
    def excess(log_sigma: float) -> float:
        return analytic_delta(epsilon, math.exp(log_sigma), sensitivity) - delta

    low = high = math.log(sensitivity)
    while excess(low) <= 0:
        low -= 1.0
    while excess(high) > 0:
        high += 1.0
    return math.exp(brentq(excess, low, high, xtol=1e-13, rtol=1e-13))


def analytic_epsilon(sigma: float, delta: float, sensitivity: float) -> float:
    """The smallest epsilon >= 0 with `analytic_delta(epsilon, sigma, Delta) <= delta`: what
    N(0, sigma^2) noise is worth at sensitivity Delta (the delta falls as epsilon grows)."""
    def excess(epsilon: float) -> float:
        return analytic_delta(epsilon, sigma, sensitivity) - delta

    if excess(0.0) <= 0:
        return 0.0
    high = 1.0
    while excess(high) > 0:
        high *= 2.0
    return float(brentq(excess, 0.0, high, xtol=1e-14, rtol=1e-13))


def gaussian_sigma(calibration: str, epsilon: float, delta: float, sensitivity: float
                   ) -> float:
    """sigma by the `calibration` named ("classic" or "analytic")."""
    if calibration == "classic":
        if epsilon >= 1:
            raise ValueError(f"the classic calibration holds for epsilon < 1 (Dwork & Roth "
                             f"2014, Theorem A.1), not {epsilon:g}: use `calibration: "
                             "analytic` (Balle & Wang 2018)")
        return classic_sigma(epsilon, delta, sensitivity)
    if calibration == "analytic":
        return analytic_sigma(epsilon, delta, sensitivity)
    raise ValueError(f"unknown calibration {calibration!r}; known: {', '.join(CALIBRATIONS)}")


def per_dimension_epsilon(calibration: str, epsilon: float, delta: float, sigma: float,
                          sensitivity: float, dim: int) -> float:
    """The epsilon (at the same delta) one coordinate alone is worth when its share of the L2
    sensitivity is Delta / sqrt(d), the vector's mass spread evenly over its d coordinates:
    the d coordinates' Gaussian mechanisms compose in L2 (sum of Delta_j^2 = Delta^2) into the
    vector's. Classic: epsilon / sqrt(d), by the same formula; analytic: solved from Theorem 8
    of Balle & Wang 2018."""
    if calibration == "classic":
        return epsilon / math.sqrt(dim)
    return analytic_epsilon(sigma, delta, sensitivity / math.sqrt(dim))
