"""One encoder's pipeline, the unit of work an executor runs: fit, encode, then for each decoder
trained for the encoder train, generate and score, then the downstream tasks. The work the
spec's analyses declare for the encoder (`harness.protocols.Job`: the privacy analysis's
attackers, the probes' decoding) runs after it (`harness.executors.plan`).

The one assembly of a job, in two halves every executor calls: `start_job` (fit, encode, and
what the encoder is) and `finish_job` (the decoders and the downstream tasks). The local
executor starts every encoder's job before it finishes any, so a broken encoder fails a run
before hours of training; `run_encoder_job` runs both halves in a process of its own.

A job reads the run's corpus and vocabulary from the artifact cache (the runner prepares them
first), writes every artifact there, and returns an `Outcome`: small JSON, so an executor
can run jobs in other processes or on other machines that see the same cache.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from harness.errors import HarnessError
from harness.protocols import (
    SpecView,
    TaskResult,
)
from harness.results.model import EncoderDescription, PairResult, SeedRun, SizePoint
from harness.spec import Component, Spec
from harness.stages.base import RunContext, ShardRunner, ShardWork
from harness.stages.corpus import Corpus, prepare_corpus
from harness.stages.describe import describe_encoder
from harness.stages.encode import Encoded, encode_corpus, encode_shard
from harness.stages.evaluate import evaluate_tasks
from harness.stages.generate import generate_samples
from harness.stages.likelihood import Decoding
from harness.stages.score import scored, seeds_score
from harness.stages.train import train_decoder_for
from harness.stages.vocab import Vocab, prepare_vocab
from harness.util.cache import Cache
from harness.util.vectors import Shard


class Outcome(BaseModel):
    """What a job returns to its executor, as small JSON. An encoder's job: its pairs'
    results, where their samples and per-sentence metric statistics lie in the cache (one file
    per decoder seed, in seed order), its downstream task results and what the encoder is. A
    planned job (`harness.executors.plan`): its record, under its analysis. Either with the
    job's own bookkeeping (device, time per stage, artifacts reused and built). The executor
    attaches the planned jobs' outcomes to their encoder's (`with_records`)."""

    model_config = ConfigDict(frozen=True)

    encoder: str
    runs: list[PairResult] = []
    samples: dict[str, list[Path]] = {}  # decoder -> samples file per seed
    statistics: dict[str, dict[str, list[Path]]] = {}  # decoder -> metric -> file per seed
    tasks: list[TaskResult] = []
    device: str = "cpu"
    node: str = ""  # the cluster node the job ran on, when an executor ran it on one
    timings: dict[str, float] = {}
    hits: int = 0
    builds: int = 0
    description: EncoderDescription | None = None  # what the encoder is (results.json `encoders`)
    analysis_jobs: list[str] = []  # the planned jobs whose records are attached (`Job.name`)
    # analysis -> what each of its jobs for this encoder returned (`PlannedAnalysis.run_job`),
    # attached by the executor (`harness.executors.plan.with_records`)
    analysis_records: dict[str, list[dict[str, Any]]] = {}


@dataclass(frozen=True)
class Decoded:
    """An encoder's decoders, trained, generated and scored: the pairs' results and, per
    decoder, the samples file and each metric's per-sentence statistics file of every seed."""

    runs: list[PairResult]
    samples: dict[str, list[Path]]
    statistics: dict[str, dict[str, list[Path]]]


def decode_and_score(ctx: RunContext, encoder: Component, encoded: Encoded, corpus: Corpus,
                     vocab: Vocab) -> Decoded:
    """Each decoder trained for the encoder, once per seed of its `seeds:`: trained, its test
    samples generated and scored by every metric. With several seeds a pair's scores are the
    means over the seeds, with intervals over test sentences and seeds (`harness.stats`)."""
    runs: list[PairResult] = []
    samples: dict[str, list[Path]] = {}
    statistics: dict[str, dict[str, list[Path]]] = {}
    for decoder in ctx.spec.decoders:
        if not decoder.trains_for(encoder.name):
            continue
        seeds: list[SeedRun] = []
        files: dict[str, list[Path]] = {m.name: [] for m in ctx.spec.metrics}
        for seed in ctx.spec.decoder_seeds(decoder):
            trained = train_decoder_for(ctx, decoder, encoded, corpus, vocab, seed=seed)
            generated = generate_samples(ctx, decoder, trained, encoded, corpus, vocab)
            samples.setdefault(decoder.name, []).append(generated.path)
            scores = {}
            decoding = Decoding(decoder, trained, encoded, corpus, vocab)
            for metric in ctx.spec.metrics:
                # The encoder goes on only to metrics that declare they need it (cosine), the
                # decoder to those that need it (retrieval, info).
                scores[metric.name], path = scored(ctx, metric, generated, encoded, decoding)
                files[metric.name].append(path)
            seeds.append(SeedRun(seed=seed, metrics=scores, train=trained.summary,
                                 generate=generated.summary))
        statistics[decoder.name] = files
        first = seeds[0]
        metrics = first.metrics if len(seeds) == 1 else {
            m.name: seeds_score(ctx, m, files[m.name]) for m in ctx.spec.metrics}
        by_size = learning_curve(ctx, decoder, encoded, corpus, vocab)
        if by_size:
            by_size.append(SizePoint(sentences=len(corpus.train), metrics=metrics,
                                     train=first.train))
        runs.append(PairResult(encoder=encoder.name, decoder=decoder.name, metrics=metrics,
                               train=first.train, generate=first.generate, dim=encoded.dim,
                               seeds=seeds if len(seeds) > 1 else None,
                               by_size=by_size or None))
    return Decoded(runs=runs, samples=samples, statistics=statistics)


def learning_curve(ctx: RunContext, decoder: Component, encoded: Encoded, corpus: Corpus,
                   vocab: Vocab) -> list[SizePoint]:
    """The decoder trained on the first N training sentences for each N of the spec's
    `curve.train_sizes`, once per seed of its `seeds:` as at the full size, generated and
    scored on the whole test set: with several seeds each point's scores are the means over
    them with intervals over sentences and seeds, as the full size's (none for an encoder the
    curve's `encoders` leaves out)."""
    points: list[SizePoint] = []
    if not ctx.spec.curve.draws_for(encoded.encoder):
        return points
    seeds = ctx.spec.decoder_seeds(decoder)
    for size in ctx.spec.curve.train_sizes:  # each below the split's size (`check_curve`)
        files: dict[str, list[Path]] = {metric.name: [] for metric in ctx.spec.metrics}
        first: tuple[dict[str, Any], Any] | None = None
        for seed in seeds:
            trained = train_decoder_for(ctx, decoder, encoded, corpus, vocab, seed=seed,
                                        sentences=size)
            generated = generate_samples(ctx, decoder, trained, encoded, corpus, vocab)
            decoding = Decoding(decoder, trained, encoded, corpus, vocab)
            scores = {}
            for metric in ctx.spec.metrics:
                scores[metric.name], path = scored(ctx, metric, generated, encoded, decoding)
                files[metric.name].append(path)
            first = first or (scores, trained.summary)
        assert first is not None  # a decoder has at least one seed
        metrics = first[0] if len(seeds) == 1 else {
            metric.name: seeds_score(ctx, metric, files[metric.name])
            for metric in ctx.spec.metrics}
        points.append(SizePoint(sentences=size, metrics=metrics, train=first[1]))
    return points


def start_job(ctx: RunContext, encoder: Component, corpus: Corpus, vocab: Vocab
              ) -> tuple[Encoded, Outcome]:
    """Fit and encode (`harness.stages.encode`), and identify the encoder: the job's half that
    fails fast on a broken encoder. The encoded corpus, and the outcome so far (the encoder
    and what it is) for `finish_job`."""
    encoded = encode_corpus(ctx, encoder, corpus, vocab)
    return encoded, Outcome(encoder=encoder.name, device=ctx.device,
                            description=describe_encoder(encoder, encoded, vocab))


def finish_job(ctx: RunContext, encoder: Component, started: tuple[Encoded, Outcome],
               corpus: Corpus, vocab: Vocab) -> Outcome:
    """The job's second half, after `start_job`: every decoder trained for the encoder
    (`decode_and_score`) and the downstream tasks; the outcome the runner collects (the
    analyses' jobs for the encoder run after it: `harness.executors.plan`)."""
    encoded, outcome = started
    decoded = decode_and_score(ctx, encoder, encoded, corpus, vocab)
    tasks = (evaluate_tasks(ctx, [encoded]).get(encoder.name, [])
             if ctx.spec.downstream.tasks else [])
    return outcome.model_copy(update={"runs": decoded.runs, "samples": decoded.samples,
                                      "statistics": decoded.statistics, "tasks": tasks})


def run_encoder_job(spec: SpecView, encoder_name: str, cache_root: Path, *,
                    corpus: Corpus | None = None,
                    shards: ShardRunner | None = None) -> Outcome:
    """One encoder's whole job in this process, against the cache at `cache_root`, on the
    device the spec names as this process sees it (an executor's worker may own a GPU the
    driver does not); the outcome carries the job's time per stage and cache counts. `corpus`
    is the one the driver prepared (its files are read from the cache on use), else it is
    looked up again. With `shards`, its vector files are encoded in shards by other processes
    too."""
    started = time.perf_counter()
    if not isinstance(spec, Spec):
        raise TypeError(f"expected the run's resolved spec, got {type(spec).__name__}")
    ctx, encoder, corpus, vocab = job_setup(spec, encoder_name, cache_root, corpus)
    ctx.shards = shards
    outcome = finish_job(ctx, encoder, start_job(ctx, encoder, corpus, vocab), corpus, vocab)
    ctx.add_time("job", time.perf_counter() - started)
    return outcome.model_copy(update={"timings": dict(ctx.timings), "hits": ctx.cache.hits,
                                      "builds": ctx.cache.builds})


def run_shard_job(spec: Spec, work: ShardWork, shard: Shard, cache_root: Path,
                  corpus: Corpus | None = None) -> None:
    """Encode one shard of a vector file that an encoder's job (`run_encoder_job`) is
    writing, in this process (`harness.stages.encode.encode_shard`)."""
    ctx, encoder, corpus, vocab = job_setup(spec, work.encoder, cache_root, corpus)
    encode_shard(ctx, encoder, corpus, vocab, work, shard)


def job_setup(spec: Spec, encoder_name: str, cache_root: Path, corpus: Corpus | None = None
              ) -> tuple[RunContext, Component, Corpus, Vocab]:
    """The context of a job run in a process of its own: the spec's encoder entry, and the
    corpus and vocabulary the driver prepared, read from the cache at `cache_root`. Given the
    driver's `corpus`, the job does not read (and hash) the corpus source again."""
    from harness.util.devices import resolve_device

    (encoder,) = [e for e in spec.components("encoder") if e.name == encoder_name]
    device = resolve_device(spec.device)
    # The driver prepared the corpus and vocabulary; a job that has to build them again does
    # not see the driver's cache.
    setup = RunContext(spec=spec, cache=Cache(cache_root), device=device)
    if corpus is None:
        corpus = prepare_corpus(setup)
    elif not (corpus.directory / "train.txt").is_file():
        raise HarnessError(f"cache {cache_root}: the job for encoder {encoder_name!r} does not "
                           f"find the corpus the run prepared ({corpus.directory}); give every "
                           "node the same cache (a shared filesystem path, `--cache DIR`)")
    vocab = prepare_vocab(setup, corpus)
    if setup.cache.builds:
        raise HarnessError(f"cache {cache_root}: the job for encoder {encoder_name!r} does not "
                           "find the corpus the run prepared; give every node the same cache "
                           "(a shared filesystem path, `--cache DIR`)")
    return RunContext(spec=spec, cache=Cache(cache_root), device=device), encoder, corpus, vocab


def check_curve(spec: Spec, corpus: Corpus) -> None:
    """Refuse a `curve.train_sizes` entry that is not below the training split's size."""
    too_large = [size for size in spec.curve.train_sizes if size >= len(corpus.train)]
    if too_large:
        raise HarnessError(f"curve.train_sizes: {too_large[0]} is not below the "
                           f"{len(corpus.train)} training sentences (the full split is the "
                           "curve's last point already); give smaller sizes")
