"""Executors: how a run's jobs (one per encoder, `harness.jobs`) are carried out.

`local` (the default) runs them in this process, one after another; `ray` runs each as a Ray
core task on a cluster whose nodes share the artifact cache (`harness.executors.ray`; Ray is an
optional extra and is imported only there). Both leave every artifact in the cache and hand the
runner the same `Execution`, from which it correlates and reports once.
"""

from __future__ import annotations

from harness.executors.base import Execution, Executor
from harness.spec import ExecutorSection

__all__ = ["Execution", "Executor", "executor_for"]


def executor_for(section: ExecutorSection) -> Executor:
    """The executor a spec's `executor:` section names."""
    if section.name == "ray":
        from harness.executors.ray import RayExecutor

        return RayExecutor(section)
    from harness.executors.local import LocalExecutor

    return LocalExecutor()
