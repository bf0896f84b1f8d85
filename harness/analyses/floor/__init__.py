"""The floor analysis: each encoder's gain over the floor or its chance level (`gains`), its
records (`results`) and report section (`report`); `analysis.FloorAnalysis` is what the runner
calls.
"""

from __future__ import annotations

from harness.analyses.registration import Registration
from harness.protocols import AnalysisParts

PARTS = AnalysisParts(results={"floor": f"{__name__}.results:FloorGains"})
"""What the analysis brings besides its class, named as "module:attribute" so that registering
imports none of it (`harness.protocols.AnalysisParts`)."""


ANALYSIS = Registration(
    package=__name__, name="floor", cls="FloorAnalysis",
    description=(
        "each encoder's gain over the random-vector floor or its own chance level"
    ),
    parts=PARTS,
)
"""How the floor analysis registers (`harness.analyses.registration`)."""
