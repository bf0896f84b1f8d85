"""The downstream analysis: each encoder's downstream scores, from the spec's reference table
(a row counts only for the model that earned it) or computed by the jobs' tasks, and the
encoders that have none, with why."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.analyses.downstream.report import downstream_section
from harness.analyses.downstream.scores import downstream_scores
from harness.analyses.run import AnalysisRun
from harness.protocols import CombinedColumns
from harness.report.elements import Section
from harness.results.model import RunResults


class DownstreamAnalysis:
    """Fills `downstream`, `downstream_source`, `downstream_origin`, `downstream_details` and
    `downstream_missing`."""

    def run(self, run: AnalysisRun) -> Mapping[str, Any]:
        spec = run.spec
        tasks = spec.components("task")
        computed = {o.encoder: o.tasks for o in run.execution.outcomes} if tasks else None
        combiners = [task for task in (run.ctx.build_once(c) for c in tasks)
                     if isinstance(task, CombinedColumns)]
        found = downstream_scores(spec.downstream.reference, run.encoders, computed,
                                  declared=run.declared, combiners=combiners)
        return {"downstream": found.scores, "downstream_source": found.source,
                "downstream_origin": found.origin, "downstream_details": found.details,
                "downstream_missing": found.reasons or None}

    def sections(self, results: RunResults, figures: Mapping[str, bytes]) -> list[Section]:
        return [s for s in [downstream_section(results)] if s is not None]

    def figures(self, results: RunResults) -> dict[str, bytes]:
        return {}
