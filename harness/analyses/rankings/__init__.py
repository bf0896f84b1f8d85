"""The rankings analysis: rank intervals from paired tests over the test sentences (`rank`), their
records (`results`) and report section (`report`); `analysis.RankingsAnalysis` is what the
runner calls.
"""

from __future__ import annotations

from harness.analyses.registration import Registration
from harness.protocols import AnalysisParts

PARTS = AnalysisParts(results={"rankings": f"{__name__}.results:Rankings"})
"""What the analysis brings besides its class, named as "module:attribute" so that registering
imports none of it (`harness.protocols.AnalysisParts`)."""


ANALYSIS = Registration(
    package=__name__, name="rankings", cls="RankingsAnalysis",
    description=(
        "rank intervals of the encoders on each diagnostic from paired tests over the "
        "test sentences, Holm-corrected"
    ),
    parts=PARTS,
    commands=True,
)
"""How the rankings analysis registers (`harness.analyses.registration`)."""
