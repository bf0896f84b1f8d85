"""The correlation analysis (Kerscher & Eger 2020, section 3): its spec section (`spec`), the
correlations (`correlate`), their records (`results`), the report's sections (`report`,
`scatter`, `table1`, `multiplicity`) and heatmap (`heatmap`); `analysis.CorrelationAnalysis` is
what the runner calls.
"""

from __future__ import annotations

from harness.protocols import AnalysisParts, BuildContext, Options
from harness.registry.hookspecs import Register, RegisterCommand

PARTS = AnalysisParts(
    section="correlation", settings=f"{__name__}.spec:CorrelationSection",
    results={"correlations": f"{__name__}.results:Correlations"},
    check=f"{__name__}.checks:check_correlation",
    preflight=f"{__name__}.checks:primary_problems",
    tables=f"{__name__}.tables:table_results")
"""What the analysis brings besides its class, named as "module:attribute" so that registering
imports none of it (`harness.protocols.AnalysisParts`)."""


DESCRIPTION = (
    "Spearman (or Pearson, Kendall) of each diagnostic with each task across "
    "encoders, with exact p, Holm and Fisher-z intervals (paper Figure 2)")
"""What `harness list` says the analysis does."""


def register_analysis(register: Register) -> None:
    """Register the correlation analysis; its module is imported when a run builds it."""
    register("correlation", _build, description=DESCRIPTION, needs=("downstream",), parts=PARTS)


def _build(options: Options, context: BuildContext) -> object:
    """A new correlation analysis (it reads its spec section, not options)."""
    from harness.analyses.correlation.analysis import CorrelationAnalysis

    return CorrelationAnalysis()


def register_commands(register: RegisterCommand) -> None:
    """Register the correlation analysis's commands (`commands.COMMANDS`)."""
    from harness.analyses.correlation.commands import COMMANDS

    for command in COMMANDS:
        register(command)
