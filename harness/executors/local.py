"""The local executor: every job in this process, one after another.

Every encoder encodes before any decoder trains (`harness.executors.jobs.start_job`), so a broken encoder
fails the run before hours of training; then each encoder's decoders train, generate and score
and its downstream tasks run (`harness.executors.jobs.finish_job`); then the analyses' jobs, in the
plan's order (`harness.executors.plan`). A failure stops the run (the cache keeps what was done:
a rerun resumes).
"""

from __future__ import annotations

from harness.executors.base import Execution
from harness.executors.jobs import finish_job, start_job
from harness.executors.plan import run_planned, with_records
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.vocab import Vocab
from harness.util.devices import resolve_device


class LocalExecutor:
    """Runs the jobs in the runner's process, with the runner's context."""

    def device(self, requested: str) -> str:
        """`requested` as this machine has it (`harness.util.devices.resolve_device`)."""
        return resolve_device(requested)

    def run(self, ctx: RunContext, corpus: Corpus, vocab: Vocab) -> Execution:
        """Every encoder's job, then every planned job, in this process; timings and counts
        accrue in `ctx`."""
        encoders = ctx.spec.components("encoder")
        started = [start_job(ctx, encoder, corpus, vocab) for encoder in encoders]
        outcomes = [finish_job(ctx, encoder, first, corpus, vocab)
                    for encoder, first in zip(encoders, started)]
        return Execution(with_records(outcomes, run_planned(ctx, corpus, vocab)))
