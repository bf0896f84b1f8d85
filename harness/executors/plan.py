"""The analyses' plan: the jobs the spec's analyses declare (`harness.protocols.Job`), in an
order where each comes after what it `needs`, each carried out (here, or in a process of its
own) and its record attached to its encoder's outcome.

An executor runs every encoder's job first (`harness.executors.jobs`), then the planned jobs:
the local executor one after another in the plan's order; the Ray executor each as a task of
its own that starts when its encoder's job and what it needs are done, so that jobs that need
nothing of each other (two defence levels' attackers) run at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from harness.errors import PluginError
from harness.executors.jobs import Outcome, job_setup
from harness.protocols import (
    BuildContext,
    Job,
    JobInputs,
    JobRecord,
    OutcomeView,
    PlannedAnalysis,
    SpecView,
)
from harness.spec import Entry, Spec
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.vocab import Vocab


@dataclass(frozen=True)
class Planned:
    """One analysis of the spec that declares jobs: its entry, the analysis built, its jobs."""

    entry: Entry
    analysis: PlannedAnalysis
    jobs: list[Job]


def planned(ctx: RunContext) -> list[Planned]:
    """The spec's analyses that declare jobs, each with its jobs, in the spec's order; each
    analysis built once in the run's process (`RunContext.build_once`), so the runner's plan
    and the local executor's share their analyses."""
    return plan(ctx.spec, ctx.build_once)


def plan(spec: Spec, build: Callable[[Entry], object] | None = None) -> list[Planned]:
    """`planned` for a resolved spec, its analyses built by `build` (new ones, with the spec's
    seed, by default); a plugin error when an analysis names a job after another analysis,
    gives two jobs one name, or has a job need something that is neither an encoder of the
    spec nor one of its jobs declared before it."""
    build = build or partial(_built, BuildContext(seed=spec.seed))
    found = []
    assert spec.analyses != "all"  # resolved when the spec was loaded
    encoders = {e.name for e in spec.components("encoder")}
    for entry in spec.analyses:
        analysis = build(entry)
        if not isinstance(analysis, PlannedAnalysis):
            continue
        jobs = list(analysis.jobs(spec))
        _check_jobs(entry, jobs, encoders)
        found.append(Planned(entry, analysis, jobs))
    return found


def _built(context: BuildContext, entry: Entry) -> object:
    return entry.build(context)


def _check_jobs(entry: Entry, jobs: Sequence[Job], encoders: set[str]) -> None:
    """Refuse jobs that are not the entry's, share a name, or need what is not before them."""
    before: set[str] = set()
    for job in jobs:
        if job.analysis != entry.name:
            raise PluginError(entry.plugin, f"analysis {entry.name!r} declared a job for "
                                            f"analysis {job.analysis!r}: name each job after "
                                            f"the analysis that runs it ({entry.name!r})")
        if job.name in before:
            raise PluginError(entry.plugin, f"analysis {entry.name!r} declared job "
                                            f"{job.name!r} twice: give each a part of its own")
        unknown = [need for need in job.needs if need not in encoders and need not in before]
        if unknown:
            raise PluginError(entry.plugin, f"analysis {entry.name!r}'s job {job.name!r} needs "
                                            f"{unknown[0]!r}, which is neither an encoder of "
                                            "the spec nor a job declared before it")
        before.add(job.name)


def decoders_to_train(spec: Spec) -> int:
    """How many decoders a run of `spec` trains: the encoders' own (`Spec.decoders_to_train`)
    and those its analyses' jobs train (`Job.trains`: the privacy analysis's attackers, one
    per encoder and defence level)."""
    extra = sum(len(job.trains) for found in plan(spec)
                for job in found.jobs)
    return spec.decoders_to_train() + extra


def carry_out(analysis: PlannedAnalysis, job: Job, work: JobInputs, plugin: str) -> JobRecord:
    """`job` run by `analysis` (registered by `plugin`), its record checked."""
    record = analysis.run_job(job, work)
    if not isinstance(record, JobRecord):
        raise PluginError(plugin, f"analysis {job.analysis!r}'s job returned "
                                  f"{type(record).__name__}, not a record: return a subclass "
                                  "of harness.plugin.JobRecord")
    return record


def run_planned(ctx: RunContext, corpus: Corpus, vocab: Vocab) -> list[Outcome]:
    """Every planned job carried out in this process, in the plan's order (each after what it
    needs); their time goes to each analysis's stage, in `ctx`. One outcome per job, its
    record attached (for `with_records`)."""
    return [_carried_out(ctx, corpus, vocab, found, job)
            for found in planned(ctx) for job in found.jobs]


def run_planned_job(spec: SpecView, name: str, cache_root: Path, *,
                    corpus: Corpus | None = None) -> Outcome:
    """The planned job called `name` (`Job.name`) carried out in this process, against the
    cache at `cache_root`, once its encoder's job and what it needs are done: its outcome, the
    record attached, with the job's time per stage and cache counts (for
    `harness.executors.account`)."""
    if not isinstance(spec, Spec):
        raise TypeError(f"expected the run's resolved spec, got {type(spec).__name__}")
    found, job = _find(plan(spec), name)
    ctx, _, corpus, vocab = job_setup(spec, job.encoder, cache_root, corpus)
    outcome = _carried_out(ctx, corpus, vocab, found, job)
    return outcome.model_copy(update={"timings": dict(ctx.timings), "hits": ctx.cache.hits,
                                      "builds": ctx.cache.builds})


def _carried_out(ctx: RunContext, corpus: Corpus, vocab: Vocab, found: Planned, job: Job
                 ) -> Outcome:
    """`job` of `found`'s analysis carried out with the run's context, its time added to the
    analysis's stage: an outcome for its encoder with the record (as JSON) attached."""
    started = time.perf_counter()
    record = carry_out(found.analysis, job, JobInputs(ctx, corpus, vocab, found.entry.settings),
                       found.entry.plugin)
    ctx.add_time(found.entry.name, time.perf_counter() - started)
    return recorded(job, record).model_copy(update={"device": ctx.device})


def recorded(job: Job, record: JobRecord) -> Outcome:
    """The outcome of planned job `job` that returned `record`: the record (as JSON) under
    its analysis, for its encoder (`with_records` attaches it)."""
    return Outcome(encoder=job.encoder, analysis_jobs=[job.name],
                   analysis_records={job.analysis: [record.model_dump(mode="json")]})


def planned_jobs(spec: SpecView) -> list[Job]:
    """Every job the spec's analyses declare, in the plan's order (each after what it
    needs): what an executor runs after the encoders' jobs (`run_planned_job`)."""
    if not isinstance(spec, Spec):
        raise TypeError(f"expected the run's resolved spec, got {type(spec).__name__}")
    return [job for found in plan(spec) for job in found.jobs]


def _find(planned_: list[Planned], name: str) -> tuple[Planned, Job]:
    for found in planned_:
        for job in found.jobs:
            if job.name == name:
                return found, job
    raise KeyError(f"no planned job is called {name!r}")


def with_records(outcomes: Sequence[Outcome], planned_: Sequence[OutcomeView]
                 ) -> list[Outcome]:
    """The encoders' `outcomes` with the planned jobs' outcomes (`run_planned_job`) attached
    to their encoder's: each job's record under its analysis (`Outcome.analysis_records`, in
    the order of `planned_`) and its name in `analysis_jobs`. Their bookkeeping is the
    executor's to account (`harness.executors.account`)."""
    records: dict[str, dict[str, list[Mapping[str, object]]]] = {}
    names: dict[str, list[str]] = {}
    for found in planned_:
        for analysis, recorded in found.analysis_records.items():
            records.setdefault(found.encoder, {}).setdefault(analysis, []).extend(recorded)
        names.setdefault(found.encoder, []).extend(found.analysis_jobs)
    return [outcome.model_copy(update={
        "analysis_records": {**outcome.analysis_records, **records.get(outcome.encoder, {})},
        "analysis_jobs": [*outcome.analysis_jobs, *names.get(outcome.encoder, [])]})
        for outcome in outcomes]


def missing_jobs(planned_: Sequence[Planned], outcomes: Sequence[OutcomeView]) -> list[str]:
    """The planned jobs of the encoders in `outcomes` that no outcome lists as run (an
    executor that ran only the encoders' jobs)."""
    ran = {name for outcome in outcomes for name in outcome.analysis_jobs}
    present = {outcome.encoder for outcome in outcomes}
    return [job.name for found in planned_ for job in found.jobs
            if job.encoder in present and job.name not in ran]
