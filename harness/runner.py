"""Runs a spec end to end: every stage, in data-flow order, through the artifact cache.

One job is one encoder x decoder pipeline; jobs run sequentially on the local executor.
"""

from __future__ import annotations

import importlib.metadata as md
import logging
import subprocess
import time
from pathlib import Path
from typing import Any

from harness import __version__
from harness.cache import Cache
from harness.devices import resolve_device
from harness.errors import HarnessError
from harness.registry import Registry
from harness.spec import Spec, TableSpec
from harness.stages.base import RunContext
from harness.stages.corpus import prepare_corpus
from harness.stages.correlate import correlate_diagnostics
from harness.stages.downstream import downstream_scores, evaluate_tasks
from harness.stages.encode import encode_corpus
from harness.stages.generate import Samples, generate_samples
from harness.stages.report import SCHEMA, json_safe, write_run
from harness.stages.score import score_samples
from harness.stages.train import train_decoder_for
from harness.stages.vocab import prepare_vocab

log = logging.getLogger("harness.run")
PACKAGES = ("numpy", "torch", "sentencepiece", "fasttext", "sacrebleu", "pluggy", "scipy")
EXAMPLES = 5


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _versions(registry: Registry) -> dict[str, str]:
    versions = {}
    names = set(PACKAGES) | {info.distribution for info in registry if info.distribution}
    for name in sorted(names):
        try:
            versions[name] = md.version(name)
        except md.PackageNotFoundError:
            continue
    return versions


def refuse_problems(spec: Spec | TableSpec, sections: tuple[str, ...] | None = None) -> None:
    """Raise the first reason the spec cannot run here, before any work is done; with
    `sections`, only problems of those top-level sections count (`corpus`, `encoders`, ...)."""
    problems = [p for p in spec.problems
                if sections is None or (p.field or "").split(".")[0] in sections]
    if problems:
        more = (f" (and {len(problems) - 1} more: see `harness validate`)"
                if len(problems) > 1 else "")
        raise HarnessError(f"{problems[0]}{more}")


def run_spec(spec: Spec, registry: Registry, out: Path, *, cache: Cache | None = None,
             device: str | None = None) -> dict[str, Any]:
    """Run every stage of `spec`, write the run directory `out`, and return the results."""
    refuse_problems(spec)
    started = time.perf_counter()
    ctx = RunContext(spec=spec, registry=registry, cache=cache or Cache(),
                     device=resolve_device(device or spec.device))
    log.info("run %s: device %s, cache %s", spec.name, ctx.device, ctx.cache.root)
    corpus = prepare_corpus(ctx)
    vocab = prepare_vocab(ctx, corpus)
    runs: list[dict[str, Any]] = []
    samples: dict[tuple[str, str], Samples] = {}
    # Every encoder encodes before any decoder trains, so a broken encoder fails the run early.
    encodings = [encode_corpus(ctx, encoder, corpus, vocab)
                 for encoder in spec.components("encoder")]
    for encoder, encoded in zip(spec.components("encoder"), encodings):
        for decoder in spec.components("decoder"):
            if decoder.encoders is not None and encoder.name not in decoder.encoders:
                continue
            trained = train_decoder_for(ctx, decoder, encoded, corpus, vocab)
            generated = generate_samples(ctx, decoder, trained, encoded, corpus, vocab)
            samples[(encoder.name, decoder.name)] = generated
            scores = {m.name: score_samples(ctx, m, generated) for m in spec.components("metric")}
            runs.append({
                "encoder": encoder.name, "decoder": decoder.name,
                "metrics": {name: {"value": s.value, "ci95": list(s.ci95), **s.details}
                            for name, s in scores.items()},
                "train": trained.summary,
                "generate": {"sentences_per_s": generated.sentences_per_s},
                "dim": encoded.dim})
    encoders = [e.name for e in spec.components("encoder")]
    computed = evaluate_tasks(ctx, encodings) if spec.components("task") else None
    downstream = downstream_scores(spec.downstream.reference, encoders, computed)
    decoders = spec.components("decoder")
    primary = decoders[0].name if decoders else ""
    diagnostics = {m.name: {r["encoder"]: r["metrics"][m.name]["value"]
                            for r in runs if r["decoder"] == primary}
                   for m in spec.components("metric")}
    lower_is_better = frozenset(name for r in runs for name, entry in r["metrics"].items()
                                if not entry.get("higher_is_better", True))
    correlations = correlate_diagnostics(diagnostics, downstream, method=spec.correlation.method,
                                         decoder=primary, rank_by=spec.correlation.rank_by,
                                         lower_is_better=lower_is_better)
    for note in correlations.notes:
        log.warning("%s", note)
    ctx.add_time("total", time.perf_counter() - started)
    results = {
        "schema": SCHEMA,
        "spec": spec.model_dump(mode="json"),
        "provenance": {"harness_version": __version__, "git_commit": _git_commit(),
                       "spec_sha256": spec.sha256, "packages": _versions(registry),
                       "seed": spec.seed, "device": ctx.device, "timings": ctx.timings,
                       "cache": {"root": str(ctx.cache.root), "hits": ctx.cache.hits,
                                 "builds": ctx.cache.builds},
                       "corpus": {"train": len(corpus.train), "test": len(corpus.test)},
                       "vocab": vocab.summary},
        "runs": runs,
        "downstream": downstream.scores,
        "downstream_source": downstream.source,
        "downstream_origin": downstream.origin,
        "downstream_details": downstream.details,
        "correlations": correlations.to_json(),
        "examples": _examples(samples),
    }
    results = json_safe(results)  # undefined scores (NaN) are null, as in results.json
    out.mkdir(parents=True, exist_ok=True)
    write_run(out, results, {k: s.path for k, s in samples.items()}, spec.report.formats)
    log.info("run %s: done in %.1f s (%d artifacts cached, %d built); results in %s",
             spec.name, time.perf_counter() - started, ctx.cache.hits, ctx.cache.builds, out)
    return results


def run_tables(spec: TableSpec, registry: Registry, out: Path) -> dict[str, Any]:
    """Correlate a published diagnostics table with a downstream table; write the run dir."""
    from harness.stages.correlate import correlations_from_tables

    refuse_problems(spec)
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
    results = {
        "schema": SCHEMA,
        "spec": spec.model_dump(mode="json"),
        "provenance": {"harness_version": __version__, "git_commit": _git_commit(),
                       "spec_sha256": spec.sha256, "packages": _versions(registry),
                       "seed": spec.seed, "device": None,
                       "timings": {"total": round(time.perf_counter() - started, 3)}},
        "runs": [],
        "diagnostics": correlations.diagnostics,
        "diagnostics_source": correlations.sources.get("diagnostics", ""),
        "downstream": downstream.scores,
        "downstream_source": downstream.source,
        "correlations": correlations.to_json(),
        "examples": [],
    }
    results = json_safe(results)
    out.mkdir(parents=True, exist_ok=True)
    write_run(out, results, {}, spec.report.formats)
    log.info("run %s: correlated the tables; results in %s", spec.name, out)
    return results


def _examples(samples: dict[tuple[str, str], Samples]) -> list[dict[str, Any]]:
    """The first test inputs decoded by every encoder x decoder (paper Table 2, left)."""
    if not samples:
        return []
    first = next(iter(samples.values()))
    count = min(EXAMPLES, len(first.records))
    return [{"reference": first.records[i]["reference"],
             "outputs": [{"encoder": enc, "decoder": dec,
                          "hypothesis": s.records[i]["hypothesis"]}
                         for (enc, dec), s in samples.items()]}
            for i in range(count)]
