"""The downstream analysis: each encoder's downstream scores, from the spec's reference table
(a row counts only for the model that earned it) or computed by the jobs' tasks (`scores`), and
its report section (`report`); `analysis.DownstreamAnalysis` is what the runner calls.
"""

from __future__ import annotations

from harness.analyses.registration import Registration

ANALYSIS = Registration(
    package=__name__, name="downstream", cls="DownstreamAnalysis",
    description=(
        "downstream scores per encoder: a reference table's rows bound to the model "
        "that earned them, or computed by the spec's tasks"
    ),
)
"""How the downstream analysis registers (`harness.analyses.registration`)."""
