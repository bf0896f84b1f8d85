"""A run whose analyses are watched: how many artifacts they built (none: they read through a
read-only cache), which analysis jobs each encoder's job ran, and every unit of the analyses'
work, counted where it happens (an attack point, an attack, a canary set and its recovery, a
pair's probes) with the phase it happened in: in a job, or in an analysis's `run`."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import harness.runner
from harness.analyses.run import AnalysisRun, run_analyses
from harness.results.model import RunResults
from harness.util.cache import Cache

Key = Callable[[tuple[Any, ...], dict[str, Any]], object]

WORK: dict[str, list[tuple[str, str, Key]]] = {
    # one encoder's vectors, clean or at a defence level, attacked by the privacy attacker
    "attack point": [("harness.analyses.privacy.study", "attack_point",
                      lambda a, k: (a[2].encoder, k.get("defence", ""), k.get("level")))],
    # one attack of `privacy.attacks` on one target
    "attack": [("harness.analyses.privacy.attacks", "_inversion",
                lambda a, k: (a[3].label, a[6]))],
    # the run's canary set, drawn (once) where it is cached
    "canary set": [("harness.analyses.privacy.canaries", "canary_set", lambda a, k: "drawn")],
    # the canaries decoded from one set of vectors
    "canary recovery": [("harness.analyses.privacy.point", "canary_recovery",
                         lambda a, k: (a[3].encoder, a[3].keys.get("test"))),
                        ("harness.analyses.privacy.canary_floor", "canary_recovery",
                         lambda a, k: (a[3].encoder, "floor"))],
    # one encoder x decoder pair's probes
    "probes": [("harness.analyses.probes.probing", "probe_pair",
                lambda a, k: (a[0].encoder, a[0].decoder))],
}
"""Kind of work -> (module, function, key of one call) for each place that work is done."""


@dataclass
class Watched:
    """The run's results, the artifacts built while the analyses ran, per encoder the analysis
    jobs its job ran ("analysis: what"), and each unit of work as (phase, kind, key), the
    phase "job" or "run"."""

    results: RunResults | None = None
    analysis_builds: int = -1
    jobs: dict[str, list[str]] = field(default_factory=dict)
    work: list[tuple[str, str, object]] = field(default_factory=list)

    def done(self, kind: str, phase: str = "job") -> Counter[object]:
        """How often each unit of `kind` was done in `phase`."""
        return Counter(key for at, what, key in self.work if (at, what) == (phase, kind))


def watched_run(spec: Any, out: Path, cache: Cache) -> Watched:
    """Run `spec` as `harness run` does, counting the cache's builds around the analyses and
    every unit of `WORK` where it is done."""
    watched = Watched()
    phase = ["job"]

    def counting(run: AnalysisRun, entries: list[Any]) -> dict[str, Any]:
        before = run.ctx.cache.builds
        phase[0] = "run"
        fields = run_analyses(run, entries)
        watched.analysis_builds = run.ctx.cache.builds - before
        watched.jobs = {o.encoder: list(o.analysis_jobs) for o in run.execution.outcomes}
        return fields

    def counted(kind: str, function: Callable[..., Any], key: Key) -> Callable[..., Any]:
        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            watched.work.append((phase[0], kind, key(args, kwargs)))
            return function(*args, **kwargs)
        return call

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(harness.runner, "run_analyses", counting)
        for kind, places in WORK.items():
            for module, name, key in places:
                patch.setattr(f"{module}.{name}",
                              counted(kind, getattr(__import__(module, fromlist=[name]), name),
                                      key))
        watched.results = harness.runner.run_spec(spec, out, cache=cache)
    return watched
