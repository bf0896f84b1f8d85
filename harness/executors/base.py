"""What every executor shares: the `Execution` it returns and the accounting of a job run
elsewhere. The contract itself is `harness.protocols.Executor`."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.executors.jobs import Outcome
from harness.protocols import OutcomeView, RunContextView


@dataclass(frozen=True)
class Execution:
    """The jobs' outcomes in the spec's encoder order, and the encoders whose job failed for
    good, with why (their results are missing; the others' are kept)."""

    outcomes: list[Outcome]
    failures: dict[str, str] = field(default_factory=dict)


def account(ctx: RunContextView, outcome: OutcomeView) -> None:
    """Add the time per stage and the cache counts of a job run in another process
    (`harness.executors.jobs.run_encoder_job`, `harness.executors.plan.run_planned_job`) to
    the run's."""
    for stage, seconds in outcome.timings.items():
        ctx.add_time(stage, seconds)
    ctx.cache.hits += outcome.hits
    ctx.cache.builds += outcome.builds
