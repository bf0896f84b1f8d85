"""Multiple comparisons over a correlation matrix: how many of its tests would be significant by
chance, and which survive Holm's step-down and Benjamini-Hochberg's step-up procedures."""

from __future__ import annotations

from dataclasses import dataclass

from harness.report.model import ALPHA
from harness.results import Correlations


def holm(pvalues: list[float], alpha: float = ALPHA) -> list[bool]:
    """Which hypotheses Holm's procedure rejects (family-wise error rate `alpha`).

    The p-values sorted ascending are compared with alpha / m, alpha / (m - 1), ...; every
    hypothesis before the first that fails is rejected, none after it.
    """
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    rejected = [False] * len(pvalues)
    for step, index in enumerate(order):
        if pvalues[index] > alpha / (len(pvalues) - step):
            break
        rejected[index] = True
    return rejected


def benjamini_hochberg(pvalues: list[float], alpha: float = ALPHA) -> list[bool]:
    """Which hypotheses Benjamini-Hochberg's procedure rejects (false discovery rate `alpha`).

    With the p-values sorted ascending, k is the largest rank whose p-value is at most
    k x alpha / m; the k smallest are rejected.
    """
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


@dataclass(frozen=True)
class Multiplicity:
    """What a matrix of tests says once their number is taken into account."""

    tests: int
    significant: int
    expected: float
    holm: int
    bh: int
    alpha: float = ALPHA

    def sentence(self) -> str:
        """The report's note on multiple comparisons."""
        if not self.tests:
            return "No correlation has a p-value, so nothing was tested."
        return (f"Multiple comparisons: the matrix holds {self.tests} tests; "
                f"{self.significant} have p < {self.alpha:g}, where about "
                f"{self.expected:.1f} would by chance alone if no diagnostic tracked any task; "
                f"{self.holm} {'survives' if self.holm == 1 else 'survive'} Holm's correction "
                f"(family-wise error {self.alpha:g}) and {self.bh} Benjamini-Hochberg's "
                f"(false discovery rate {self.alpha:g}).")


def multiplicity(correlations: Correlations, alpha: float = ALPHA) -> Multiplicity:
    """Count the matrix's tests (cells with a p-value), those under `alpha`, the number expected
    under it by chance, and the survivors of Holm and Benjamini-Hochberg."""
    pvalues = [cell.p for row in correlations.matrix.values() for cell in row.values()
               if cell.p is not None]
    return Multiplicity(tests=len(pvalues), significant=sum(p < alpha for p in pvalues),
                        expected=alpha * len(pvalues), holm=sum(holm(pvalues, alpha)),
                        bh=sum(benjamini_hochberg(pvalues, alpha)), alpha=alpha)
