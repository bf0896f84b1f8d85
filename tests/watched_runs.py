"""A run whose analyses are watched: how many artifacts they built (none, when every analysis
only reads what the jobs left in the cache) and which analysis jobs each encoder's job ran."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import harness.runner
from harness.analyses.run import AnalysisRun, run_analyses
from harness.results.model import RunResults
from harness.util.cache import Cache


@dataclass
class Watched:
    """The run's results, the artifacts built while the analyses ran, and per encoder the
    analysis jobs its job ran ("analysis: what")."""

    results: RunResults | None = None
    analysis_builds: int = -1
    jobs: dict[str, list[str]] = field(default_factory=dict)


def watched_run(spec: Any, out: Path, cache: Cache) -> Watched:
    """Run `spec` as `harness run` does, counting the cache's builds around the analyses."""
    watched = Watched()

    def counting(run: AnalysisRun, entries: list[Any]) -> dict[str, Any]:
        before = run.ctx.cache.builds
        fields = run_analyses(run, entries)
        watched.analysis_builds = run.ctx.cache.builds - before
        watched.jobs = {o.encoder: list(o.analysis_jobs) for o in run.execution.outcomes}
        return fields

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(harness.runner, "run_analyses", counting)
        watched.results = harness.runner.run_spec(spec, out, cache=cache)
    return watched
