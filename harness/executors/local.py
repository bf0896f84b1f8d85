"""The local executor: every job in this process, one after another.

Every encoder encodes before any decoder trains, so a broken encoder fails the run before hours
of training; then each encoder's decoders train, generate and score; then the downstream tasks
run for every encoder. A failure stops the run (the cache keeps what was done: a rerun resumes).
"""

from __future__ import annotations

from harness.executors.base import Execution
from harness.jobs import EncoderOutcome, decode_and_score
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.downstream import evaluate_tasks
from harness.stages.encode import encode_corpus
from harness.stages.identity import identify_encoder
from harness.stages.vocab import Vocab


class LocalExecutor:
    """Runs the jobs in the runner's process, with the runner's context."""

    def run(self, ctx: RunContext, corpus: Corpus, vocab: Vocab) -> Execution:
        """Every encoder's job, in this process; timings and counts accrue in `ctx`."""
        encoders = ctx.spec.components("encoder")
        encodings = [encode_corpus(ctx, encoder, corpus, vocab) for encoder in encoders]
        identities = [identify_encoder(c, e, vocab) for c, e in zip(encoders, encodings)]
        decoded = [decode_and_score(ctx, encoder, encoded, corpus, vocab)
                   for encoder, encoded in zip(encoders, encodings)]
        tasks = evaluate_tasks(ctx, encodings) if ctx.spec.downstream.tasks else {}
        return Execution([EncoderOutcome(encoder=encoded.encoder, dim=encoded.dim,
                                         runs=result.runs, samples=result.samples,
                                         statistics=result.statistics,
                                         tasks=tasks.get(encoded.encoder, []),
                                         device=ctx.device,
                                         identity=identity)
                          for encoded, result, identity in zip(encodings, decoded, identities)])
