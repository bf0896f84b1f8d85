"""What every executor shares: the `Executor` protocol and the `Execution` it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from harness.jobs import EncoderOutcome
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.vocab import Vocab


@dataclass(frozen=True)
class Execution:
    """The jobs' outcomes in the spec's encoder order, and the encoders whose job failed for
    good, with why (their results are missing; the others' are kept)."""

    outcomes: list[EncoderOutcome]
    failures: dict[str, str] = field(default_factory=dict)


def account(ctx: RunContext, outcome: EncoderOutcome) -> None:
    """Add the time per stage and the cache counts of a job run in another process
    (`harness.jobs.run_encoder_job`) to the run's."""
    for stage, seconds in outcome.timings.items():
        ctx.add_time(stage, seconds)
    ctx.cache.hits += outcome.hits
    ctx.cache.builds += outcome.builds


@runtime_checkable
class Executor(Protocol):
    """Carries out a run's jobs, one per encoder (`harness.jobs`), after the runner prepared
    the corpus and the vocabulary. Registered by name (`register_executors`), built from its
    own options; the spec's `executor:` chooses one."""

    def device(self, requested: str) -> str:
        """The device the runner's own process works on for a spec asking for `requested`
        (auto, cpu, cuda, cuda:N, mps): the jobs' device when they run in this process;
        "cpu" when they run elsewhere and each resolves `requested` where it runs. Raises
        `HarnessError` when this machine lacks a device the jobs would need here."""

    def run(self, ctx: RunContext, corpus: Corpus, vocab: Vocab) -> Execution:
        """Every encoder's job of `ctx.spec`, against `ctx.cache`; the jobs' timings and cache
        counts are added to `ctx`."""
