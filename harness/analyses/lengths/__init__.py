"""The lengths analysis: its spec section (`spec`, `breakdown:`), the breakdown by reference length
(`breakdown`), its records (`results`), report section and figure (`report`);
`analysis.LengthsAnalysis` is what the runner calls.
"""

from __future__ import annotations

from harness.protocols import AnalysisParts, BuildContext, Options
from harness.registry.hookspecs import Register

PARTS = AnalysisParts(
    section="breakdown", settings=f"{__name__}.spec:BreakdownSection",
    results={"lengths": f"{__name__}.results:LengthBreakdown"},
    resolve=f"{__name__}.checks:check_bins")
"""What the analysis brings besides its class, named as "module:attribute" so that registering
imports none of it (`harness.protocols.AnalysisParts`)."""


DESCRIPTION = (
    "every diagnostic per bin of reference length (`breakdown:`)")
"""What `harness list` says the analysis does."""


def register_analysis(register: Register) -> None:
    """Register the lengths analysis; its module is imported when a run builds it."""
    register("lengths", _build, description=DESCRIPTION, parts=PARTS)


def _build(options: Options, context: BuildContext) -> object:
    """A new lengths analysis (it reads its spec section, not options)."""
    from harness.analyses.lengths.analysis import LengthsAnalysis

    return LengthsAnalysis()
