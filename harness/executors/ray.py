"""The Ray executor: each encoder's job as one Ray core task, on a cluster sharing the cache.

`pip install "v2s-harness[ray]"`. Each task runs `harness.jobs.run_encoder_job` for one encoder
(fit, encode, train, generate, score, downstream tasks) with one GPU when the cluster has GPUs
(option `gpus`), else `cpus` CPUs, against the run's cache, which every node must see at the
same path; it returns only small JSON. A task whose worker dies (killed, out of memory, node
lost) is retried up to `retries` times and resumes from what the cache holds
(decoder training from its last checkpoint). A task whose plugin or data fails is not retried:
its encoder is reported by name, and the other encoders' results are kept.

Ray is imported here only, and only when a run asks for it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from harness.errors import HarnessError
from harness.executors.base import Execution, account
from harness.jobs import EncoderOutcome, run_encoder_job
from harness.spec import Spec
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.vocab import Vocab

log = logging.getLogger("harness.run")

INSTALL = 'pip install "v2s-harness[ray]"'


def encoder_job(spec: Spec, encoder: str, cache_root: str) -> dict[str, Any]:
    """The body of a Ray task: `{"outcome": ...}`, or `{"error": ...}` for a failure that a
    retry would repeat (a plugin's or the data's, one line), which Ray must not retry."""
    try:
        return {"outcome": run_encoder_job(spec, encoder, Path(cache_root)).model_dump(
            mode="json")}
    except HarnessError as exc:
        return {"error": str(exc)}


class RayExecutor:
    """Runs one Ray task per encoder; the driver (this process) waits for them. Options as
    registered (`harness_plugins.executors.RayOptions`)."""

    def __init__(self, *, address: str | None = None, gpus: float | None = None,
                 cpus: float = 1.0, retries: int = 3) -> None:
        self.address, self.gpus, self.cpus, self.retries = address, gpus, cpus, retries

    def device(self, requested: str) -> str:
        """Always "cpu": the driver only prepares data; each job resolves `requested` where it
        runs."""
        return "cpu"

    def run(self, ctx: RunContext, corpus: Corpus, vocab: Vocab) -> Execution:
        """Every encoder's job as a Ray task; the tasks' timings and cache counts are added to
        `ctx`."""
        ray = _import_ray()
        with _connected(ray, self.address):
            gpus = self.gpus
            if gpus is None:  # a GPU each when the cluster has GPUs
                gpus = 1.0 if ray.cluster_resources().get("GPU", 0) > 0 else 0.0
            task = ray.remote(encoder_job).options(
                num_cpus=self.cpus, num_gpus=gpus, max_retries=self.retries,
                retry_exceptions=False, name="harness-encoder-job")
            names = [e.name for e in ctx.spec.components("encoder")]
            log.info("ray: %d jobs, %g CPU and %g GPU each, cache %s", len(names),
                     self.cpus, gpus, ctx.cache.root)
            refs = {task.remote(ctx.spec, name, str(ctx.cache.root)): name for name in names}
            outcomes, failures = {}, {}
            pending = list(refs)
            with tqdm(total=len(refs), desc="encoder jobs", unit="job", disable=None) as bar:
                while pending:  # in the order they finish
                    (ref,), pending = ray.wait(pending, num_returns=1)
                    name = refs[ref]
                    result = _result(ray, ref, name, self.retries)
                    if "outcome" in result:
                        outcomes[name] = EncoderOutcome.model_validate(result["outcome"])
                        account(ctx, outcomes[name])
                        log.info("job %s: done on %s", name, outcomes[name].device)
                    else:
                        failures[name] = result["error"]
                        log.error("job %s: failed: %s", name, result["error"])
                    bar.update(1)
        return Execution([outcomes[n] for n in names if n in outcomes],
                         {n: failures[n] for n in names if n in failures})


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise HarnessError(f"executor ray: Ray is not installed here; {INSTALL}") from None
    return ray


@contextmanager
def _connected(ray: Any, address: str | None) -> Iterator[None]:
    """Connected to the cluster at `address` (a local one started for the run when none is
    given), disconnected afterwards if this run connected."""
    if ray.is_initialized():
        yield
        return
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
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


def _result(ray: Any, ref: Any, encoder: str, retries: int) -> dict[str, Any]:
    """The task's result, or {"error": one line} when it failed for good."""
    from ray import exceptions

    try:
        return dict(ray.get(ref))
    except exceptions.RayTaskError as exc:  # an exception the harness did not expect
        cause = getattr(exc, "cause", None) or exc
        first = (str(cause).strip().splitlines() or [""])[0]
        return {"error": f"encoder {encoder!r}: internal error in its job: "
                         f"{type(cause).__name__}: {first}"}
    except (exceptions.WorkerCrashedError, exceptions.NodeDiedError,
            exceptions.OutOfMemoryError) as exc:
        return {"error": f"encoder {encoder!r}: the worker running its job died "
                         f"{retries + 1} times ({type(exc).__name__}); the cache keeps its "
                         "progress: rerun to resume"}
