"""The floor analysis: each encoder's gain over the floor or its chance level (`gains`), its
records (`results`) and report section (`report`); `analysis.FloorAnalysis` is what the runner
calls.
"""

from __future__ import annotations

from harness.protocols import AnalysisParts, BuildContext, Options
from harness.registry.hookspecs import Register

PARTS = AnalysisParts(results={"floor": f"{__name__}.results:FloorGains"})
"""What the analysis brings besides its class, named as "module:attribute" so that registering
imports none of it (`harness.protocols.AnalysisParts`)."""


DESCRIPTION = (
    "each encoder's gain over the random-vector floor or its own chance level")
"""What `harness list` says the analysis does."""


def register_analysis(register: Register) -> None:
    """Register the floor analysis; its module is imported when a run builds it."""
    register("floor", _build, description=DESCRIPTION, parts=PARTS)


def _build(options: Options, context: BuildContext) -> object:
    """A new floor analysis (it reads its spec section, not options)."""
    from harness.analyses.floor.analysis import FloorAnalysis

    return FloorAnalysis()
