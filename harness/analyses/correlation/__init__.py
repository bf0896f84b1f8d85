"""The correlation analysis (Kerscher & Eger 2020, section 3): its spec section (`spec`), the
correlations (`correlate`), their records (`results`), the report's sections (`report`,
`scatter`, `table1`, `multiplicity`) and heatmap (`heatmap`); `analysis.CorrelationAnalysis` is
what the runner calls.
"""

from __future__ import annotations

from harness.analyses.registration import Registration
from harness.protocols import AnalysisParts

PARTS = AnalysisParts(
    section="correlation", settings=f"{__name__}.spec:CorrelationSection",
    results={"correlations": f"{__name__}.results:Correlations"},
    check=f"{__name__}.checks:check_correlation",
    preflight=f"{__name__}.checks:primary_problems",
    tables=f"{__name__}.tables:table_results")
"""What the analysis brings besides its class, named as "module:attribute" so that registering
imports none of it (`harness.protocols.AnalysisParts`)."""


ANALYSIS = Registration(
    package=__name__, name="correlation", cls="CorrelationAnalysis",
    description=(
        "Spearman (or Pearson, Kendall) of each diagnostic with each task across "
        "encoders, with exact p, Holm and Fisher-z intervals (paper Figure 2)"
    ),
    needs=("downstream",),
    parts=PARTS,
    commands=True,
)
"""How the correlation analysis registers (`harness.analyses.registration`)."""
