"""One encoder's pipeline, the unit of work an executor runs: fit, encode, then for each decoder
trained for the encoder train, generate and score, then the downstream tasks.

A job reads the run's corpus and vocabulary from the artifact cache (the runner prepares them
first), writes every artifact there, and returns an `EncoderOutcome`: small JSON, so an executor
can run jobs in other processes or on other machines that see the same cache.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from harness.cache import Cache
from harness.errors import HarnessError
from harness.protocols import TaskResult
from harness.results import GenerateSummary, PairResult
from harness.spec import Component, Spec
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus, prepare_corpus
from harness.stages.downstream import evaluate_tasks
from harness.stages.encode import Encoded, encode_corpus
from harness.stages.generate import generate_samples
from harness.stages.score import score_samples
from harness.stages.train import train_decoder_for
from harness.stages.vocab import Vocab, prepare_vocab


class EncoderOutcome(BaseModel):
    """What one encoder's job found: its pairs' results, where their samples lie in the cache,
    its downstream task results, and the job's own bookkeeping (device, time per stage,
    artifacts reused and built)."""

    model_config = ConfigDict(frozen=True)

    encoder: str
    dim: int
    runs: list[PairResult] = []
    samples: dict[str, Path] = {}  # decoder -> samples file in the cache
    tasks: list[TaskResult] = []
    device: str = "cpu"
    timings: dict[str, float] = {}
    hits: int = 0
    builds: int = 0


def decode_and_score(ctx: RunContext, encoder: Component, encoded: Encoded, corpus: Corpus,
                     vocab: Vocab) -> tuple[list[PairResult], dict[str, Path]]:
    """Each decoder trained for the encoder: trained, its test samples generated and scored by
    every metric. Returns the pairs' results and their samples files."""
    runs, samples = [], {}
    for decoder in ctx.spec.decoders:
        if not decoder.trains_for(encoder.name):
            continue
        trained = train_decoder_for(ctx, decoder, encoded, corpus, vocab)
        generated = generate_samples(ctx, decoder, trained, encoded, corpus, vocab)
        samples[decoder.name] = generated.path
        runs.append(PairResult(
            encoder=encoder.name, decoder=decoder.name,
            metrics={m.name: score_samples(ctx, m, generated) for m in ctx.spec.metrics},
            train=trained.summary,
            generate=GenerateSummary(sentences_per_s=generated.sentences_per_s),
            dim=encoded.dim))
    return runs, samples


def run_encoder_job(spec: Spec, encoder_name: str, cache_root: Path) -> EncoderOutcome:
    """One encoder's whole pipeline in this process, against the cache at `cache_root`, on the
    device the spec names as this process sees it (an executor's worker may own a GPU the
    driver does not)."""
    from harness.devices import resolve_device

    started = time.perf_counter()
    (encoder,) = [e for e in spec.components("encoder") if e.name == encoder_name]
    device = resolve_device(spec.device)
    # The driver prepared the corpus and vocabulary; a job that has to build them again does
    # not see the driver's cache.
    setup = RunContext(spec=spec, cache=Cache(cache_root), device=device)
    corpus = prepare_corpus(setup)
    vocab = prepare_vocab(setup, corpus)
    if setup.cache.builds:
        raise HarnessError(f"cache {cache_root}: the job for encoder {encoder_name!r} does not "
                           "find the corpus the run prepared; give every node the same cache "
                           "(a shared filesystem path, `--cache DIR`)")
    ctx = RunContext(spec=spec, cache=Cache(cache_root), device=device)
    encoded = encode_corpus(ctx, encoder, corpus, vocab)
    runs, samples = decode_and_score(ctx, encoder, encoded, corpus, vocab)
    tasks = evaluate_tasks(ctx, [encoded]).get(encoder.name, []) if spec.downstream.tasks else []
    ctx.add_time("job", time.perf_counter() - started)
    return EncoderOutcome(encoder=encoder.name, dim=encoded.dim, runs=runs, samples=samples,
                          tasks=tasks, device=ctx.device, timings=dict(ctx.timings),
                          hits=ctx.cache.hits, builds=ctx.cache.builds)
