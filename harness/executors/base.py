"""What every executor shares: the `Executor` protocol and the `Execution` it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

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


class Executor(Protocol):
    """Runs one job per encoder of `ctx.spec`, against `ctx.cache`, after the runner prepared
    the corpus and the vocabulary; adds the jobs' timings and cache counts to `ctx`."""

    def run(self, ctx: RunContext, corpus: Corpus, vocab: Vocab) -> Execution:
        """Every encoder's job, carried out."""
