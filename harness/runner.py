"""Runs a spec end to end: every stage, in data-flow order, through the artifact cache.

One job is one encoder's pipeline (`harness.jobs`), run by the spec's executor
(`harness.executors`, registered by name: local, or Ray at scale), which also decides the
device. The runner prepares the corpus and vocabulary first, then correlates the jobs'
results, builds the typed `RunResults` and writes the run directory.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from harness.cache import Cache
from harness.errors import HarnessError
from harness.executors import Executor
from harness.identity import published_tables
from harness.jobs import EncoderOutcome, check_curve
from harness.protocols import BuildContext
from harness.provenance import provenance as _provenance
from harness.results import (
    CacheCounts,
    CorpusCounts,
    Example,
    ExampleOutput,
    RunResults,
)
from harness.spec import Spec, TableSpec, preflight, refuse
from harness.stages.base import RunContext
from harness.stages.corpus import prepare_corpus
from harness.stages.correlate import (
    correlate_diagnostics,
    correlations_from_tables,
    table_identities,
)
from harness.stages.downstream import downstream_scores
from harness.stages.floor import floor_gains
from harness.stages.lengths import length_breakdown
from harness.stages.probes import run_probes, write_probe_items
from harness.stages.rankings import load_statistics, rank_stability, support_notes
from harness.stages.report import write_run
from harness.stages.vocab import prepare_vocab

log = logging.getLogger("harness.run")
EXAMPLES = 5


def run_spec(spec: Spec, out: Path, *, cache: Cache | None = None) -> RunResults:
    """Run every stage of `spec`, write the run directory `out`, and return the results.

    The corpus and vocabulary are prepared here; the encoder jobs run on the spec's executor;
    correlation and the report run here once, over the jobs that succeeded. When a job failed
    for good, the others' results are written and a `HarnessError` names the failed encoders.
    """
    refuse(preflight(spec))
    started = time.perf_counter()
    executor: Executor = spec.executor.build(BuildContext(seed=spec.seed))
    # The executor decides the device: the jobs' own where they run here; with a cluster, each
    # job resolves `device` where it runs and the driver only prepares data.
    ctx = RunContext(spec=spec, cache=cache or Cache(), device=executor.device(spec.device))
    ctx.cache.check_writable()
    log.info("run %s: %s executor, cache %s", spec.name, spec.executor.name, ctx.cache.root)
    corpus = prepare_corpus(ctx)
    check_curve(spec, corpus)  # before any training
    vocab = prepare_vocab(ctx, corpus)
    execution = executor.run(ctx, corpus, vocab)
    runs = [run for outcome in execution.outcomes for run in outcome.runs]
    names = [e.name for e in spec.components("encoder")]
    computed = ({o.encoder: o.tasks for o in execution.outcomes} if spec.components("task")
                else None)
    # A table row counts only for the model that earned it: what each encoder declares it is.
    identities = {o.encoder: o.identity for o in execution.outcomes if o.identity is not None}
    declared = {name: identity.declares for name, identity in identities.items()}
    downstream = downstream_scores(spec.downstream.reference, names, computed,
                                   identities=declared)
    primary = spec.decoders[0].name if spec.decoders else ""
    diagnostics = {m.name: {r.encoder: r.metrics[m.name].value
                            for r in runs if r.decoder == primary}
                   for m in spec.components("metric")}
    lower_is_better = frozenset(name for r in runs for name, score in r.metrics.items()
                                if not score.higher_is_better)
    studied = spec.studied(names)
    controls = tuple(name for name in names if name not in studied)
    correlations = correlate_diagnostics(diagnostics, downstream, method=spec.correlation.method,
                                         decoder=primary, rank_by=spec.correlation.rank_by,
                                         lower_is_better=lower_is_better, controls=controls)
    statistics, chance = load_statistics(execution.outcomes)
    correlations = correlations.model_copy(update={"notes": [
        *correlations.notes, *support_notes(runs, spec.correlation.rank_by, primary,
                                            spec.correlation.min_support)]})
    rankings = rank_stability(ctx, statistics)
    probed = run_probes(ctx, corpus, vocab, skip=execution.failures)  # `probes:`, after training
    lengths = length_breakdown(ctx, statistics, corpus.test)
    floor = floor_gains(ctx, statistics, chance)
    for note in correlations.notes:
        log.warning("%s", note)
    ctx.add_time("total", time.perf_counter() - started)
    devices = sorted({o.device for o in execution.outcomes}) or [ctx.device]
    provenance = _provenance(
        spec, ", ".join(devices), ctx.timings,
        cache=CacheCounts(root=str(ctx.cache.root), hits=ctx.cache.hits,
                          builds=ctx.cache.builds),
        corpus=CorpusCounts(train=len(corpus.train), test=len(corpus.test)),
        vocab=vocab.summary)
    samples = _sample_files(execution.outcomes)
    results = RunResults(
        spec=spec.model_dump(mode="json"), provenance=provenance, runs=runs,
        downstream=downstream.scores, downstream_source=downstream.source,
        downstream_origin=downstream.origin, downstream_details=downstream.details,
        downstream_missing=downstream.reasons or None, encoders=identities or None,
        published=published_tables(spec.report.compare, declared) or None,
        correlations=correlations, rankings=rankings or None, lengths=lengths, floor=floor,
        examples=_examples({pair: files[0] for pair, files in samples.items()}),
        probes=probed.pairs or None, failures=execution.failures or None)
    write_run(out, results, {(encoder, label): path
                             for (encoder, decoder), files in samples.items()
                             for label, path in zip(_seed_labels(spec, decoder), files)},
              spec.report.formats)
    write_probe_items(out, probed)
    log.info("run %s: done in %.1f s (%d artifacts cached, %d built); results in %s",
             spec.name, time.perf_counter() - started, ctx.cache.hits, ctx.cache.builds, out)
    if execution.failures:
        failed = "; ".join(execution.failures.values())
        raise HarnessError(f"{len(execution.failures)} of {len(names)} encoder jobs failed "
                           f"(the others' results are in {out}): {failed}")
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
    rows = table_identities(spec.diagnostics.reference)  # published rows as identities
    downstream = downstream_scores(spec.downstream.reference,
                                   sorted({e for row in correlations.diagnostics.values()
                                           for e in row}), identities=rows)
    results = RunResults(
        spec=spec.model_dump(mode="json"),
        provenance=_provenance(spec, None, {"total": round(time.perf_counter() - started, 3)}),
        diagnostics=correlations.diagnostics,
        diagnostics_source=correlations.sources.get("diagnostics", ""),
        downstream=downstream.scores, downstream_source=downstream.source,
        downstream_missing=downstream.reasons or None,
        published=published_tables(spec.report.compare, rows) or None,
        correlations=correlations)
    write_run(out, results, {}, spec.report.formats)
    log.info("run %s: correlated the tables; results in %s", spec.name, out)
    return results


def _sample_files(outcomes: list[EncoderOutcome]) -> dict[tuple[str, str], list[Path]]:
    """(encoder, decoder) -> the samples file of each of the decoder's seeds."""
    return {(o.encoder, decoder): files for o in outcomes for decoder, files in o.samples.items()}


def _seed_labels(spec: Spec, decoder: str) -> list[str]:
    """How the run directory names a decoder's samples per seed: the decoder's name for the
    first seed (the spec's own), `NAME-seedN` for the others."""
    (component,) = [d for d in spec.decoders if d.name == decoder]
    return [decoder] + [f"{decoder}-seed{seed}" for seed in spec.decoder_seeds(component)[1:]]


def _examples(samples: dict[tuple[str, str], Path]) -> list[Example]:
    """The first test inputs decoded by every encoder x decoder (paper Table 2, left)."""
    if not samples:
        return []
    heads = {pair: _head(path, EXAMPLES) for pair, path in samples.items()}
    first = next(iter(heads.values()))
    return [Example(reference=first[i]["reference"],
                    outputs=[ExampleOutput(encoder=enc, decoder=dec,
                                           hypothesis=records[i]["hypothesis"])
                             for (enc, dec), records in heads.items()])
            for i in range(len(first))]


def _head(path: Path, count: int) -> list[dict[str, Any]]:
    """The first `count` records of a samples file."""
    records = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if len(records) == count:
                break
            records.append(json.loads(line))
    return records
