"""The Ray executor: each encoder's job as one Ray core task, on a cluster sharing the cache.

`pip install "v2s-harness[ray]"`. Each task runs `harness.executors.jobs.run_encoder_job` for one encoder
(fit, encode, train, generate, score, downstream tasks) against the run's cache, which every
node must see at the same path; it returns only small JSON. Before any job is dispatched, a
task on every node checks that it sees the run's inputs and can write the cache
(`harness.executors.reach`). A job's resources are decided when it is submitted, from what it
trains: a GPU per training process of its decoders (their `workers`, the analyses' attackers
included) when the spec's device is `cuda` (an autoscaling cluster adds GPU nodes for it), or
when it is `auto` and the cluster has GPUs then (option `gpus` overrides both), and `cpus`
CPUs (on CPUs, at least one per training process). The work the analyses declare
(`harness.protocols.Job`: an attacker at one defence level) runs as tasks of its own, each
started by Ray once its encoder's job and what it `needs` are done, with the resources of the
decoders it trains. With
option `shards` > 1 a job encodes each vector file in that many shards: shards 2, 3, ... as
Ray tasks with the job's resources while the job encodes the first
(`harness.stages.encode`). Each job's log goes to `CACHE/logs/SPEC/ENCODER.log`, named when
the run starts, and, with `log_to_driver` (the default), to the driver's console too.

A task whose worker dies (killed, out of memory, node lost) is retried up to `retries` times
and resumes from what the cache holds (decoder training from its last checkpoint, encoding
from each shard's last batch). A task whose plugin or data fails is not retried: its encoder
is reported by name, and the other encoders' results are kept.

Ray is imported here only, and only when a run asks for it.
"""

from __future__ import annotations

import logging
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from harness.errors import HarnessError
from harness.executors.base import Execution, account
from harness.executors.jobs import Outcome, run_encoder_job, run_shard_job
from harness.executors.plan import planned, run_planned_job, with_records
from harness.executors.reach import Input, Token, job_inputs, refusal, unreachable
from harness.protocols import Job
from harness.spec import Spec
from harness.stages.base import RunContext, ShardWork
from harness.stages.corpus import Corpus
from harness.stages.vocab import Vocab
from harness.util.vectors import Shard, shard_claimed, unclaim_shard

log = logging.getLogger("harness.run")

LOG_FORMAT = "%(asctime)s %(levelname)s [%(node)s] %(name)s: %(message)s"


@dataclass(frozen=True)
class Resources:
    """What one task asks Ray for."""

    cpus: float
    gpus: float
    retries: int

    def options(self, name: str) -> dict[str, Any]:
        """The task options of a task called `name` with these resources."""
        return {"num_cpus": self.cpus, "num_gpus": self.gpus, "max_retries": self.retries,
                "retry_exceptions": False, "name": name}


def encoder_job(spec: Spec, encoder: str, cache_root: str, corpus: Corpus, log_file: str,
                shards: int, resources: Resources) -> dict[str, Any]:
    """The body of a Ray task: `{"outcome": ...}`, or `{"error": ...}` for a failure that a
    retry would repeat (a plugin's or the data's, one line), which Ray must not retry. The
    job's log (and an internal error's traceback) goes to `log_file`."""
    node = _node()
    use_cpus(resources.cpus)
    with _logging_to(Path(log_file), node) as job_log:
        runner = RayShards(spec, cache_root, corpus, shards, resources) if shards > 1 else None
        try:
            outcome = run_encoder_job(spec, encoder, Path(cache_root), corpus=corpus,
                                      shards=runner)
        except HarnessError as exc:
            job_log.error("job %s failed: %s", encoder, exc)
            return {"error": str(exc)}
        except BaseException:
            job_log.error("job %s: internal error\n%s", encoder, traceback.format_exc())
            raise
        job_log.info("job %s: done on %s", encoder, outcome.device)
    return {"outcome": outcome.model_copy(update={"node": node}).model_dump(mode="json")}


def planned_job(spec: Spec, name: str, cache_root: str, corpus: Corpus, log_file: str,
                resources: Resources, *needed: dict[str, Any]) -> dict[str, Any]:
    """The body of a planned job's Ray task (`harness.executors.plan.run_planned_job`), which
    Ray starts once the tasks in `needed` (its encoder's job and what it needs) are done:
    `{"outcome": ...}` (its `Outcome`, the record attached), or `{"error": ...}` as
    `encoder_job` returns; a job whose encoder's job or need failed is not run."""
    failed = next((found["error"] for found in needed if "error" in found), None)
    if failed is not None:
        return {"error": f"job {name}: not run, what it needs failed ({failed})",
                "skipped": True}
    use_cpus(resources.cpus)
    with _logging_to(Path(log_file), _node()) as job_log:
        try:
            outcome = run_planned_job(spec, name, Path(cache_root), corpus=corpus)
        except HarnessError as exc:
            job_log.error("job %s failed: %s", name, exc)
            return {"error": f"job {name}: {exc}"}
        except BaseException:
            job_log.error("job %s: internal error\n%s", name, traceback.format_exc())
            raise
        job_log.info("job %s: done", name)
    return {"outcome": outcome.model_dump(mode="json")}


def shard_job(spec: Spec, work: ShardWork, shard: Shard, cache_root: str, corpus: Corpus,
              cpus: float) -> dict[str, Any]:
    """The body of a shard's Ray task: `{}`, or `{"error": ...}` as `encoder_job` returns."""
    use_cpus(cpus)
    try:
        run_shard_job(spec, work, shard, Path(cache_root), corpus)
    except HarnessError as exc:
        return {"error": str(exc)}
    return {}


class RayShards:
    """Encodes a vector file's shards as Ray tasks (`harness.stages.base.ShardRunner`), the
    job's own process taking the first."""

    def __init__(self, spec: Spec, cache_root: str, corpus: Corpus, count: int,
                 resources: Resources) -> None:
        self.spec, self.cache_root, self.corpus = spec, cache_root, corpus
        self.count, self.resources = count, resources

    def run(self, work: ShardWork, pending: Sequence[Shard],
            local: Callable[[Shard], None]) -> None:
        """Return once every shard is written; raise HarnessError naming the first that
        failed.

        The job encodes the first shard while Ray tasks take the others; then it takes over
        every shard whose task has not started (cancelled, and encoded here from its last
        batch), so a job never waits on a task that cannot start because the job itself holds
        the GPU it would need. Tasks not collected when this ends are cancelled."""
        import ray

        task = ray.remote(shard_job).options(**self.resources.options("harness-encode-shard"))
        for shard in pending:
            unclaim_shard(work.path, shard)
        refs = {task.remote(self.spec, work, shard, self.cache_root, self.corpus,
                            self.resources.cpus): shard for shard in pending[1:]}
        try:
            local(pending[0])
            for ref, shard in list(refs.items()):
                if not shard_claimed(work.path, shard):
                    ray.cancel(ref)  # not started: this process encodes it instead
                what = f"encoder {work.encoder!r} {work.split} rows {shard.start}-{shard.stop}"
                result = _result(ray, ref, what, self.resources.retries)
                del refs[ref]
                if result.get("cancelled"):
                    log.info("%s: its task had not started; encoded by the job", what)
                    local(shard)
                elif "error" in result:
                    raise HarnessError(result["error"])
        finally:
            for ref in refs:
                ray.cancel(ref, force=True)


class RayExecutor:
    """Runs one Ray task per encoder; the driver (this process) waits for them. Options as
    registered (`harness.executors.registration.RayOptions`)."""

    def __init__(self, *, address: str | None = None, gpus: float | None = None,
                 cpus: float = 1.0, retries: int = 3, shards: int = 1,
                 log_to_driver: bool = True) -> None:
        self.address, self.gpus, self.cpus, self.retries = address, gpus, cpus, retries
        self.shards, self.log_to_driver = shards, log_to_driver

    def device(self, requested: str) -> str:
        """Always "cpu": the driver only prepares data; each job resolves `requested` where it
        runs."""
        return "cpu"

    def run(self, ctx: RunContext, corpus: Corpus, vocab: Vocab) -> Execution:
        """Every encoder's job as a Ray task, then every planned job as a task that Ray starts
        once its encoder's job and what it needs are done; the tasks' timings and cache counts
        are added to `ctx`."""
        ray = _import_ray()
        cache_root = str(ctx.cache.root)
        names = [e.name for e in ctx.spec.components("encoder")]
        jobs = [job for found in planned(ctx) for job in found.jobs]
        logs = ctx.cache.root / "logs" / ctx.spec.name
        logs.mkdir(parents=True, exist_ok=True)
        with _connected(ray, self.address, self.log_to_driver):
            check_nodes(ray, job_inputs(ctx.spec, _forwarded_environment()), cache_root)
            log.info("ray: %d encoder jobs and %d planned jobs; their logs: %s%sJOB.log",
                     len(names), len(jobs), logs, os.sep)
            refs: dict[str, Any] = {}  # an encoder's name, or a planned job's -> its task
            workers = decoder_workers(ctx.spec)
            for name in names:
                resources = self.resources(ray, ctx.spec.device, max(
                    [workers[d.name] for d in ctx.spec.decoders if d.trains_for(name)],
                    default=1))
                task = ray.remote(encoder_job).options(
                    **resources.options("harness-encoder-job"))
                log.info("job %s: %g CPU, %g GPU", name, resources.cpus, resources.gpus)
                refs[name] = task.remote(ctx.spec, name, cache_root, corpus,
                                         str(logs / f"{name}.log"), self.shards, resources)
            for job in jobs:
                resources = self.resources(ray, ctx.spec.device, max(
                    [workers.get(d, 1) for d in job.trains], default=1))
                task = ray.remote(planned_job).options(
                    **resources.options("harness-planned-job"))
                needed = [refs[job.encoder], *(refs[need] for need in job.needs)]
                refs[job.name] = task.remote(ctx.spec, job.name, cache_root, corpus,
                                             str(logs / f"{_file_name(job.name)}.log"),
                                             resources, *needed)
            return self._collect(ray, ctx, refs, names, jobs)

    def resources(self, ray: Any, device: str, workers: int = 1) -> Resources:
        """A job's resources, decided when it is submitted, for a job whose decoders train in
        at most `workers` processes (`decoder_workers`): option `gpus` when given, else a GPU per
        training process for device `cuda`, none for `cpu`, and for `auto` those when the
        cluster has GPUs now; `cpus` CPUs, or a CPU per training process on CPUs when that
        is more."""
        gpus = self.gpus
        if gpus is None:
            kind = device.partition(":")[0]
            has_gpus = ray.cluster_resources().get("GPU", 0) > 0
            gpus = float(workers) if kind == "cuda" or (kind == "auto" and has_gpus) else 0.0
        cpus = self.cpus if gpus else max(self.cpus, float(workers))
        return Resources(cpus=cpus, gpus=gpus, retries=self.retries)

    def _collect(self, ray: Any, ctx: RunContext, refs: dict[str, Any], names: list[str],
                 jobs: list[Job]) -> Execution:
        """The jobs' outcomes and failures, waited for in the order they finish; a planned
        job's record attached to its encoder's outcome, and a planned job that failed failing
        its encoder (whose results would be incomplete)."""
        results: dict[str, dict[str, Any]] = {}
        pending = {ref: name for name, ref in refs.items()}
        with tqdm(total=len(refs), desc="jobs", unit="job", disable=None) as bar:
            while pending:
                (ref,), _ = ray.wait(list(pending), num_returns=1)
                name = pending.pop(ref)
                results[name] = _result(ray, ref, f"encoder {name!r}" if name in names
                                        else f"job {name!r}", self.retries)
                if "error" in results[name] and not results[name].get("skipped"):
                    log.error("job %s: failed: %s", name, results[name]["error"])
                elif name in names:
                    log.info("job %s: done on %s (node %s)", name,
                             results[name]["outcome"]["device"],
                             results[name]["outcome"]["node"])
                bar.update(1)
        failures = {n: results[n]["error"] for n in names if "error" in results[n]}
        for job in jobs:
            if "error" in results[job.name] and job.encoder not in failures:
                failures[job.encoder] = results[job.name]["error"]
        outcomes = [Outcome.model_validate(results[n]["outcome"]) for n in names
                    if n not in failures]
        for outcome in outcomes:
            account(ctx, outcome)
        done = [Outcome.model_validate(results[job.name]["outcome"]) for job in jobs
                if job.encoder not in failures]
        for found in done:
            account(ctx, found)
        return Execution(with_records(outcomes, done),
                         {n: failures[n] for n in names if n in failures})


def decoder_workers(spec: Spec) -> dict[str, int]:
    """Decoder -> the processes it trains in (its `workers`): a job asks for the most that any
    decoder it trains asks for. Parallelism is set there, once."""
    return {decoder.name: int(getattr(decoder.settings, "workers", 1))
            for decoder in spec.decoders}


def _file_name(name: str) -> str:
    """A job's name as a log file's name (its `:` and `/` replaced)."""
    return name.replace(":", ".").replace("/", "_")


def check_nodes(ray: Any, inputs: list[Input], cache_root: str) -> None:
    """Raise a one-line HarnessError unless every alive node of the cluster sees `inputs` and
    shares the cache: reads the file this process writes there, and can write (a task pinned
    to each node runs `harness.executors.reach.unreachable` there)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    probe = ray.remote(unreachable)
    token = Token.place(cache_root)
    try:
        refs = {}
        for node in ray.nodes():
            if node.get("Alive"):
                pinned = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
                ref = probe.options(num_cpus=0, scheduling_strategy=pinned,
                                    name="harness-reach").remote(inputs, cache_root, token)
                refs[ref] = f"{node.get('NodeManagerAddress', '?')} ({node['NodeID'][:8]})"
        for ref, node in refs.items():
            line = refusal(node, ray.get(ref), cache_root)
            if line is not None:
                raise HarnessError(line)
    finally:
        token.remove(cache_root)


def use_cpus(cpus: float) -> None:
    """Let torch use as many threads as the task has CPUs (a reused worker process keeps the
    count of the task it ran before)."""
    import torch

    torch.set_num_threads(max(1, int(cpus)))


def _node() -> str:
    """This worker's node: its IP address and the start of its Ray node id."""
    import ray

    context = ray.get_runtime_context()
    return f"{ray.util.get_node_ip_address()} ({context.get_node_id()[:8]})"


@contextmanager
def _logging_to(path: Path, node: str) -> Iterator[logging.Logger]:
    """The harness's log records (INFO and above) appended to `path`, and written to stderr
    (which Ray forwards to the driver with `log_to_driver`), while the block runs, each naming
    `node`; yields the run log."""
    handlers: list[logging.Handler] = [logging.FileHandler(path, encoding="utf-8"),
                                       logging.StreamHandler(sys.stderr)]
    for handler in handlers:
        handler.setFormatter(logging.Formatter(LOG_FORMAT, defaults={"node": node}))
        handler.setLevel(logging.INFO)
    root = logging.getLogger("harness")
    previous = root.level
    for handler in handlers:
        root.addHandler(handler)
    if root.getEffectiveLevel() > logging.INFO:
        root.setLevel(logging.INFO)
    try:
        yield log
    finally:
        for handler in handlers:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(previous)


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise HarnessError("executor ray: Ray is not installed here (`harness list` says how "
                           "to install it)") from None
    return ray


@contextmanager
def _connected(ray: Any, address: str | None, log_to_driver: bool) -> Iterator[None]:
    """Connected to the cluster at `address` (a local one started for the run when none is
    given), disconnected afterwards if this run connected."""
    if ray.is_initialized():
        yield
        return
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=log_to_driver,
                 runtime_env={"env_vars": _forwarded_environment()})
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = address or "a local Ray instance"
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise HarnessError(f"executor ray: cannot connect to {where}: {first}") from None
    try:
        yield
    finally:
        ray.shutdown()


def _forwarded_environment() -> dict[str, str]:
    """The harness's settings the workers need as the driver has them (plugin selection, the
    tokenizers' and hubs' offline switches)."""
    names = ("HARNESS_PLUGINS", "HARNESS_DISABLE_PLUGINS", "HF_HUB_OFFLINE",
             "TRANSFORMERS_OFFLINE", "HARNESS_INFERSENT_WEIGHTS",
             "HARNESS_INFERSENT_WORD_VECTORS", "HARNESS_QUICKTHOUGHT_WEIGHTS",
             "HARNESS_LASER_WEIGHTS")
    return {name: os.environ[name] for name in names if name in os.environ}


def _result(ray: Any, ref: Any, what: str, retries: int) -> dict[str, Any]:
    """The task's result, or {"error": one line naming `what` it ran} when it failed for
    good."""
    from ray import exceptions

    try:
        return dict(ray.get(ref))
    except exceptions.TaskCancelledError:
        return {"cancelled": True, "error": f"{what}: cancelled"}
    except exceptions.RayTaskError as exc:  # an exception the harness did not expect
        cause = getattr(exc, "cause", None) or exc
        first = (str(cause).strip().splitlines() or [""])[0]
        return {"error": f"{what}: internal error in its task: "
                         f"{type(cause).__name__}: {first}"}
    except (exceptions.WorkerCrashedError, exceptions.NodeDiedError,
            exceptions.OutOfMemoryError) as exc:
        return {"error": f"{what}: the worker running its task died "
                         f"{retries + 1} times ({type(exc).__name__}); the cache keeps its "
                         "progress: rerun to resume"}
