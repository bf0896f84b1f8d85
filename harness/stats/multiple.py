"""Multiple comparisons: Holm's step-down adjustment (family-wise error) and Benjamini &
Hochberg's step-up procedure (false discovery rate).

A report that tests many hypotheses (every pair of encoders on a diagnostic, every diagnostic
against every task) claims only what survives the correction it names.
"""

from __future__ import annotations

from collections.abc import Sequence

ALPHA = 0.05
"""The significance level of every test the harness reports, before correction."""


def holm_adjusted(pvalues: Sequence[float]) -> list[float]:
    """Return Holm's (1979) adjusted p-values, in the given order.

    With p_(1) <= ... <= p_(m) sorted ascending, p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)).
    A hypothesis is rejected at family-wise error rate alpha exactly when p~ <= alpha.
    """
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 0.0
    for step, index in enumerate(order):
        running = max(running, min(1.0, (m - step) * float(pvalues[index])))
        adjusted[index] = running
    return adjusted


def holm(pvalues: Sequence[float], alpha: float = ALPHA) -> list[bool]:
    """Which hypotheses Holm's procedure rejects (family-wise error rate `alpha`): the p-values
    sorted ascending are compared with alpha / m, alpha / (m - 1), ...; every hypothesis before
    the first that fails is rejected, none after it."""
    return [p <= alpha for p in holm_adjusted(pvalues)]


def benjamini_hochberg(pvalues: Sequence[float], alpha: float = ALPHA) -> list[bool]:
    """Which hypotheses Benjamini & Hochberg's (1995) procedure rejects (false discovery rate
    `alpha`): with the p-values sorted ascending, k is the largest rank whose p-value is at most
    k x alpha / m; the k smallest are rejected."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    cutoff = 0
    for rank, index in enumerate(order, start=1):
        if pvalues[index] <= rank * alpha / m:
            cutoff = rank
    rejected = [False] * m
    for index in order[:cutoff]:
        rejected[index] = True
    return rejected
