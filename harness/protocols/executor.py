"""The executor contract: what carries out a run's jobs, one per encoder.

Typed against the ground floor's views of the runner's types: the run's context, corpus and
vocabulary (`RunContextView`, `CorpusView`, `VocabView`, met by `harness.stages.base.RunContext`,
`harness.stages.corpus.Corpus`, `harness.stages.vocab.Vocab`) and the `Execution` returned
(`ExecutionView`, met by `harness.executors.Execution`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from harness.protocols.views import CorpusView, ExecutionView, RunContextView, VocabView


@runtime_checkable
class Executor(Protocol):
    """Carries out a run's jobs, one per encoder (`harness.executors.jobs`), after the runner prepared
    the corpus and the vocabulary. Registered by name (`register_executors`), built from its
    own options; the spec's `executor:` chooses one."""

    def device(self, requested: str) -> str:
        """The device the runner's own process works on for a spec asking for `requested`
        (auto, cpu, cuda, cuda:N, mps): the jobs' device when they run in this process;
        "cpu" when they run elsewhere and each resolves `requested` where it runs. Raises
        `HarnessError` when this machine lacks a device the jobs would need here."""

    def run(self, ctx: RunContextView, corpus: CorpusView, vocab: VocabView) -> ExecutionView:
        """Every encoder's job of `ctx.spec` on the run's corpus and vocabulary, against
        `ctx.cache`: an `Execution`, the jobs' timings and cache counts added to `ctx`. Every
        job is assembled by `harness.executors.jobs` (`start_job` and `finish_job` here,
        `run_encoder_job` in another process)."""
