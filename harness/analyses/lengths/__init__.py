"""The lengths analysis: its spec section (`spec`, `breakdown:`), the breakdown by reference length
(`breakdown`), its records (`results`), report section and figure (`report`);
`analysis.LengthsAnalysis` is what the runner calls.
"""

from __future__ import annotations

from harness.analyses.registration import Registration
from harness.protocols import AnalysisParts

PARTS = AnalysisParts(
    section="breakdown", settings=f"{__name__}.spec:BreakdownSection",
    results={"lengths": f"{__name__}.results:LengthBreakdown"},
    resolve=f"{__name__}.checks:check_bins")
"""What the analysis brings besides its class, named as "module:attribute" so that registering
imports none of it (`harness.protocols.AnalysisParts`)."""


ANALYSIS = Registration(
    package=__name__, name="lengths", cls="LengthsAnalysis",
    description=(
        "every diagnostic per bin of reference length (`breakdown:`)"
    ),
    parts=PARTS,
)
"""How the lengths analysis registers (`harness.analyses.registration`)."""
