"""The first-party executors' registration, through the same hook as third-party ones: `local`
(the jobs in this process, one after another) and `ray` (one Ray core task per job on a cluster
sharing the artifact cache), with the Ray executor's options. Registering imports neither
executor nor Ray: each factory imports its module when a run builds it.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from pydantic import Field

from harness.protocols import Options
from harness.registry.hookspecs import Register, hookimpl

if TYPE_CHECKING:
    from harness.executors.local import LocalExecutor
    from harness.executors.ray import RayExecutor
    from harness.protocols import BuildContext

RAY_INSTALL = 'pip install "v2s-harness[ray]"'


class RayOptions(Options):
    """Options of the Ray executor."""

    address: str | None = Field(None, description="the cluster to use (\"auto\" finds a running "
                                                   "one; none: start a local Ray instance)")
    gpus: float | None = Field(None, ge=0, description="GPUs per job (default: 1 when the "
                                                       "cluster has GPUs, else 0)")
    cpus: float = Field(1.0, gt=0, description="CPUs per job")
    retries: int = Field(3, ge=0, description="times a job whose worker died is run again "
                                              "(it resumes from the cache)")
    shards: int = Field(1, ge=1, description="shards each vector file is encoded in: the job "
                                             "encodes one, Ray tasks with the job's resources "
                                             "the others")
    log_to_driver: bool = Field(True, description="show the jobs' logs on the driver's console "
                                                  "(they are also in CACHE/logs/SPEC/)")


def ray_availability() -> str | None:
    """None when Ray can be imported here (looked for, not imported), else how to install it."""
    try:
        found = importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):  # a module set to None, or a broken install
        found = False
    return None if found else f"needs Ray: {RAY_INSTALL}"


def _build_local(options: Options, context: BuildContext) -> LocalExecutor:
    from harness.executors.local import LocalExecutor

    return LocalExecutor()


def _build_ray(options: RayOptions, context: BuildContext) -> RayExecutor:
    from harness.executors.ray import RayExecutor

    return RayExecutor(**options.model_dump())


@hookimpl
def register_executors(register: Register) -> None:
    """Register the local and the Ray executor."""
    register("local", _build_local,
             description="every encoder's job in this process, one after another")
    register("ray", _build_ray, options=RayOptions, availability=ray_availability,
             description="one Ray core task per encoder's job (its encoding in shards) and per "
                         "planned job, on a cluster whose nodes share the artifact cache")
