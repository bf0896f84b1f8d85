"""Executors: how a run's jobs (one per encoder, `harness.executors.jobs`) are carried out.

Executors are registered by name through the `register_executors` hook, each with its own
options, and the spec's `executor:` picks one (`harness list` shows them). The first-party
ones are implemented here and registered by `harness.executors.registration`: `local` (the
default) runs the jobs in this process, one after another; `ray` runs each as a Ray core task
on a cluster whose nodes share the artifact cache (`harness.executors.ray`; Ray is an
optional extra and is imported only there). Every
executor assembles a job the same way (`harness.executors.jobs.start_job`, `finish_job`, or both in
`run_encoder_job`), leaves every artifact in the cache and hands the runner an `Execution`,
from which it correlates and reports once.
"""

from __future__ import annotations

from harness.executors.base import Execution, account
from harness.protocols import Executor

__all__ = ["Execution", "Executor", "account"]
