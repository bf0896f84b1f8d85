"""The downstream analysis: each encoder's downstream scores, from the spec's reference table
(a row counts only for the model that earned it) or computed by the jobs' tasks (`scores`), and
its report section (`report`); `analysis.DownstreamAnalysis` is what the runner calls.
"""

from __future__ import annotations

from harness.protocols import BuildContext, Options
from harness.registry.hookspecs import Register

DESCRIPTION = (
    "downstream scores per encoder: a reference table's rows bound to the model "
    "that earned them, or computed by the spec's tasks")
"""What `harness list` says the analysis does."""


def register_analysis(register: Register) -> None:
    """Register the downstream analysis; its module is imported when a run builds it."""
    register("downstream", _build, description=DESCRIPTION)


def _build(options: Options, context: BuildContext) -> object:
    """A new downstream analysis (it reads its spec section, not options)."""
    from harness.analyses.downstream.analysis import DownstreamAnalysis

    return DownstreamAnalysis()
