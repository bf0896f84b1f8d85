"""`check_executor`: what the runner relies on from an executor, checked on a tiny real run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.testing.failures import fail, name_of
from harness.testing.runs import PLANNED, tiny_execution, tiny_spec


def check_executor(executor: Any, workdir: Path) -> None:
    """Check `executor` as the runner uses it, on a tiny run of the first-party components
    (`harness.testing.runs.TINY_SPEC`) in `workdir`:

    - `device("cpu")` answers "cpu";
    - `run(ctx, corpus, vocab)` returns an `Execution` with one outcome per encoder, in the
      spec's order, and no failures;
    - the jobs the analyses plan (the probes' decoding here) ran after the encoders' jobs,
      their records attached to their encoders' outcomes;
    - its results (each pair's metric values and intervals, the planned jobs' records) equal
      the local executor's on the same spec, each run against a cache of its own (so both
      compute everything).
    """
    from harness.executors import Execution
    from harness.executors.local import LocalExecutor
    from harness.executors.plan import missing_jobs, planned

    name = name_of(executor)
    for method in ("device", "run"):
        if not callable(getattr(executor, method, None)):
            raise fail(f"{name} has no {method}() method",
                       "implement harness.executors.Executor: device(requested) and "
                       "run(ctx, corpus, vocab)")
    device = executor.device("cpu")
    if device != "cpu":
        raise fail(f"{name}.device('cpu') returned {device!r}",
                   "return the device the runner's process works on: 'cpu' here")
    spec = tiny_spec(workdir, PLANNED)
    values = {}
    for label, runner in (("local", LocalExecutor()), (name, executor)):
        ctx, *_, execution = tiny_execution(spec, runner, workdir / f"cache-{label}")
        if not isinstance(execution, Execution):
            raise fail(f"{label}.run returned {type(execution).__name__}",
                       "return harness.executors.Execution(outcomes, failures)")
        if execution.failures:
            raise fail(f"{label}.run reported failures: {execution.failures}",
                       "run every encoder's job with harness.executors.jobs.run_encoder_job (or "
                       "start_job and finish_job)")
        order = [outcome.encoder for outcome in execution.outcomes]
        if order != ["avg", "random-gaussian"]:
            raise fail(f"{label}.run returned outcomes for {order}",
                       "return one outcome per encoder, in the spec's encoder order")
        missing = missing_jobs(planned(ctx), execution.outcomes)
        if missing:
            raise fail(f"{label}.run returned no record of the planned jobs {missing}",
                       "after the encoders' jobs run every job of harness.plugin.planned_jobs "
                       "(run_planned_job) and attach their records with with_records")
        values[label] = {(run.encoder, run.decoder, metric): (score.value, score.ci95)
                         for outcome in execution.outcomes for run in outcome.runs
                         for metric, score in run.metrics.items()}
        # the records as JSON, where the files they name lie in the cache wherever that is
        values[label].update({(outcome.encoder, analysis, "records"):
                              str(records).replace(str(ctx.cache.root), "CACHE")
                              for outcome in execution.outcomes
                              for analysis, records in outcome.analysis_records.items()})
    if values[name] != values["local"]:
        differ = sorted(key for key in values["local"] if values[name].get(key)
                        != values["local"][key])
        raise fail(f"{name}'s results differ from the local executor's at {differ[:3]}",
                   "assemble every job with harness.executors.jobs (run_encoder_job), against the run's "
                   "cache, with the spec the runner passes")
