"""Runs a spec end to end: every stage, in data-flow order, through the artifact cache.

One job is one encoder x decoder pipeline (`Spec.pairs`); jobs run sequentially on the local
executor. The runner builds the typed `RunResults` and writes the run directory.
"""

from __future__ import annotations

import importlib.metadata as md
import logging
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from harness import __version__
from harness.cache import Cache
from harness.devices import resolve_device
from harness.errors import HarnessError
from harness.results import (
    CacheCounts,
    CorpusCounts,
    Example,
    ExampleOutput,
    GenerateSummary,
    PairResult,
    Provenance,
    RunResults,
    VocabSummary,
)
from harness.spec import Spec, SpecDocument, TableSpec, preflight, refuse
from harness.stages.base import RunContext
from harness.stages.corpus import prepare_corpus
from harness.stages.correlate import correlate_diagnostics, correlations_from_tables
from harness.stages.downstream import downstream_scores, evaluate_tasks
from harness.stages.encode import encode_corpus
from harness.stages.generate import Samples, generate_samples
from harness.stages.report import write_run
from harness.stages.score import score_samples
from harness.stages.train import train_decoder_for
from harness.stages.vocab import prepare_vocab

log = logging.getLogger("harness.run")
PACKAGES = ("v2s-harness", "numpy", "torch", "sentencepiece", "fasttext", "sacrebleu", "pluggy",
            "scipy")
EXAMPLES = 5


def run_spec(spec: Spec, out: Path, *, cache: Cache | None = None) -> RunResults:
    """Run every stage of `spec`, write the run directory `out`, and return the results."""
    refuse(preflight(spec))
    started = time.perf_counter()
    ctx = RunContext(spec=spec, cache=cache or Cache(), device=resolve_device(spec.device))
    log.info("run %s: device %s, cache %s", spec.name, ctx.device, ctx.cache.root)
    corpus = prepare_corpus(ctx)
    vocab = prepare_vocab(ctx, corpus)
    # Every encoder encodes before any decoder trains, so a broken encoder fails the run early.
    encodings = {encoder.name: encode_corpus(ctx, encoder, corpus, vocab)
                 for encoder in spec.components("encoder")}
    runs: list[PairResult] = []
    samples: dict[tuple[str, str], Samples] = {}
    for encoder, decoder in spec.pairs():
        encoded = encodings[encoder.name]
        trained = train_decoder_for(ctx, decoder, encoded, corpus, vocab)
        generated = generate_samples(ctx, decoder, trained, encoded, corpus, vocab)
        samples[(encoder.name, decoder.name)] = generated
        runs.append(PairResult(
            encoder=encoder.name, decoder=decoder.name,
            metrics={m.name: score_samples(ctx, m, generated) for m in spec.components("metric")},
            train=trained.summary,
            generate=GenerateSummary(sentences_per_s=generated.sentences_per_s),
            dim=encoded.dim))
    names = [e.name for e in spec.components("encoder")]
    computed = (evaluate_tasks(ctx, list(encodings.values())) if spec.components("task")
                else None)
    downstream = downstream_scores(spec.downstream.reference, names, computed)
    primary = spec.decoders[0].name if spec.decoders else ""
    diagnostics = {m.name: {r.encoder: r.metrics[m.name].value
                            for r in runs if r.decoder == primary}
                   for m in spec.components("metric")}
    lower_is_better = frozenset(name for r in runs for name, score in r.metrics.items()
                                if not score.higher_is_better)
    correlations = correlate_diagnostics(diagnostics, downstream, method=spec.correlation.method,
                                         decoder=primary, rank_by=spec.correlation.rank_by,
                                         lower_is_better=lower_is_better)
    for note in correlations.notes:
        log.warning("%s", note)
    ctx.add_time("total", time.perf_counter() - started)
    provenance = _provenance(
        spec, ctx.device, ctx.timings,
        cache=CacheCounts(root=str(ctx.cache.root), hits=ctx.cache.hits,
                          builds=ctx.cache.builds),
        corpus=CorpusCounts(train=len(corpus.train), test=len(corpus.test)),
        vocab=vocab.summary)
    results = RunResults(
        spec=spec.model_dump(mode="json"), provenance=provenance, runs=runs,
        downstream=downstream.scores, downstream_source=downstream.source,
        downstream_origin=downstream.origin, downstream_details=downstream.details,
        correlations=correlations, examples=_examples(samples))
    write_run(out, results, {k: s.path for k, s in samples.items()}, spec.report.formats)
    log.info("run %s: done in %.1f s (%d artifacts cached, %d built); results in %s",
             spec.name, time.perf_counter() - started, ctx.cache.hits, ctx.cache.builds, out)
    return results


def run_tables(spec: TableSpec, out: Path) -> RunResults:
    """Correlate a published diagnostics table with a downstream table; write the run dir."""
    refuse(preflight(spec))
    started = time.perf_counter()
    if spec.downstream.reference is None:
        raise HarnessError(f"{spec.source}: downstream.reference: a table spec needs a "
                           "downstream table to correlate with")
    correlations = correlations_from_tables(spec.diagnostics.reference,
                                            spec.downstream.reference, spec.correlation.method,
                                            rank_by=spec.correlation.rank_by)
    for note in correlations.notes:
        log.warning("%s", note)
    downstream = downstream_scores(spec.downstream.reference,
                                   sorted({e for row in correlations.diagnostics.values()
                                           for e in row}))
    results = RunResults(
        spec=spec.model_dump(mode="json"),
        provenance=_provenance(spec, None, {"total": round(time.perf_counter() - started, 3)}),
        diagnostics=correlations.diagnostics,
        diagnostics_source=correlations.sources.get("diagnostics", ""),
        downstream=downstream.scores, downstream_source=downstream.source,
        correlations=correlations)
    write_run(out, results, {}, spec.report.formats)
    log.info("run %s: correlated the tables; results in %s", spec.name, out)
    return results


def _provenance(spec: SpecDocument, device: str | None, timings: dict[str, float], *,
                cache: CacheCounts | None = None, corpus: CorpusCounts | None = None,
                vocab: VocabSummary | None = None) -> Provenance:
    """What produced a run's results: versions, commit, spec hash, seed, device, timings."""
    distributions = ({c.info.distribution for kind in ("encoder", "decoder", "metric", "task")
                      for c in spec.components(kind) if c.info.distribution}
                     if isinstance(spec, Spec) else set())
    return Provenance(harness_version=__version__, git_commit=_git_commit(),
                      spec_sha256=spec.sha256, packages=_versions({*PACKAGES, *distributions}),
                      seed=spec.seed, device=device, timings=timings, cache=cache,
                      corpus=corpus, vocab=vocab)


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _versions(names: Iterable[str]) -> dict[str, str]:
    """Installed version of each distribution that is installed, by name."""
    versions = {}
    for name in sorted(names):
        try:
            versions[name] = md.version(name)
        except md.PackageNotFoundError:
            continue
    return versions


def _examples(samples: dict[tuple[str, str], Samples]) -> list[Example]:
    """The first test inputs decoded by every encoder x decoder (paper Table 2, left)."""
    if not samples:
        return []
    first = next(iter(samples.values()))
    count = min(EXAMPLES, len(first.records))
    return [Example(reference=first.records[i]["reference"],
                    outputs=[ExampleOutput(encoder=enc, decoder=dec,
                                           hypothesis=s.records[i]["hypothesis"])
                             for (enc, dec), s in samples.items()])
            for i in range(count)]
