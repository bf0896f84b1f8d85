"""The rankings analysis: rank intervals from paired tests over the test sentences (`rank`), their
records (`results`) and report section (`report`); `analysis.RankingsAnalysis` is what the
runner calls.
"""

from __future__ import annotations

from harness.protocols import AnalysisParts, BuildContext, Options
from harness.registry.hookspecs import Register, RegisterCommand

PARTS = AnalysisParts(results={"rankings": f"{__name__}.results:Rankings"})
"""What the analysis brings besides its class, named as "module:attribute" so that registering
imports none of it (`harness.protocols.AnalysisParts`)."""


DESCRIPTION = (
    "rank intervals of the encoders on each diagnostic from paired tests over the "
    "test sentences, Holm-corrected")
"""What `harness list` says the analysis does."""


def register_analysis(register: Register) -> None:
    """Register the rankings analysis; its module is imported when a run builds it."""
    register("rankings", _build, description=DESCRIPTION, parts=PARTS)


def _build(options: Options, context: BuildContext) -> object:
    """A new rankings analysis (it reads its spec section, not options)."""
    from harness.analyses.rankings.analysis import RankingsAnalysis

    return RankingsAnalysis()


def register_commands(register: RegisterCommand) -> None:
    """Register the rankings analysis's commands (`commands.COMMANDS`)."""
    from harness.analyses.rankings.commands import COMMANDS

    for command in COMMANDS:
        register(command)
