"""Multiple comparisons over a correlation matrix: how many of its tests would be significant by
chance, and which survive Holm's step-down and Benjamini-Hochberg's step-up procedures
(`harness.stats.multiple`)."""

from __future__ import annotations

from dataclasses import dataclass

from harness.analyses.correlation.results import Correlations
from harness.stats.multiple import ALPHA, benjamini_hochberg, holm


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
