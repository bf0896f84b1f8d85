"""Runs a spec end to end: every stage, in data-flow order, through the artifact cache.

One job is one encoder's pipeline (`harness.executors.jobs`), run by the spec's executor
(`harness.executors`, registered by name: local, or Ray at scale), which also decides the
device. The runner prepares the corpus and vocabulary first, then runs the spec's analyses
over the jobs' results (`harness.analyses`), builds the typed `RunResults` and writes the run
directory.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.analyses.run import AnalysisRun, results_fields, run_analyses
from harness.errors import HarnessError
from harness.executors import Execution, Executor
from harness.executors.jobs import Outcome, check_curve
from harness.executors.plan import missing_jobs, planned
from harness.protocols import BuildContext
from harness.reference.archive import (
    STATISTICS_ARCHIVE,
    SharedArtifact,
    artifact_files,
    write_archive,
)
from harness.reference.join import (
    check_signature,
    install_shared,
    joined_spec,
    open_join,
    reference_outcomes,
)
from harness.reference.signature import protocol_fields, with_vocabulary
from harness.report.write import write_run
from harness.results.declarations import published_tables, read_table, row_declarations
from harness.results.model import (
    CacheCounts,
    CorpusCounts,
    Example,
    ExampleOutput,
    RunResults,
)
from harness.results.provenance import provenance as _provenance
from harness.results.signature import signed
from harness.spec import Spec, TableSpec, preflight, refuse
from harness.stages.base import RunContext
from harness.stages.corpus import prepare_corpus
from harness.stages.likelihood import unconditional_nll_keys
from harness.stages.vocab import prepare_vocab
from harness.util.cache import Cache

log = logging.getLogger("harness.run")
EXAMPLES = 5


def run_spec(spec: Spec, out: Path, *, cache: Cache | None = None) -> RunResults:
    """Run every stage of `spec`, write the run directory `out`, and return the results.

    The corpus and vocabulary are prepared here; the encoder jobs run on the spec's executor;
    the spec's analyses (`harness.analyses`) and the report run here once, over the jobs that
    succeeded. When a job failed for good, the others' results are written and a
    `HarnessError` names the failed encoders.
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
    join = open_join(spec)
    fields = protocol_fields(ctx, corpus)
    if join is not None:  # refused before anything is trained, the vocabulary included
        check_signature(join, signed(fields))
        install_shared(join, ctx.cache)  # the bundle's vocabulary and unconditional NLLs
    vocab = prepare_vocab(ctx, corpus)
    signature = with_vocabulary(fields, ctx, vocab)
    if join is not None:
        check_signature(join, signature)  # the vocabulary too (a cache may hold another)
        ctx = replace(ctx, spec=joined_spec(join, spec))
        log.info("reference: %d encoders from bundle %s; %d to run here (%s)",
                 len(join.labels), join.bundle.id, len(ctx.spec.components("encoder")),
                 ", ".join(e.name for e in ctx.spec.components("encoder")) or "none")
    plan = planned(ctx)  # the analyses' work, after the encoders' jobs
    for found in plan:
        if found.jobs:
            log.info("plan: %s: %d jobs (%s)", found.entry.name, len(found.jobs),
                     ", ".join(job.name for job in found.jobs))
    execution = executor.run(ctx, corpus, vocab)
    missing = missing_jobs(plan, execution.outcomes)
    if missing:
        raise HarnessError(f"executor {spec.executor.name!r} returned no record of the planned "
                           f"jobs {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}: "
                           "an executor runs them after the encoders' jobs "
                           "(harness.plugin.run_planned_job, or run_planned in this process) "
                           "and attaches their records (with_records)")
    if join is not None:
        execution = Execution(outcomes=reference_outcomes(join, ctx.cache) + execution.outcomes,
                              failures=execution.failures)
    # The analyses read their jobs' records; the cache builds nothing for them.
    reading = replace(ctx, cache=ctx.cache.read_only())
    run = AnalysisRun(ctx=reading, corpus=corpus, vocab=vocab, execution=execution, out=out)
    assert spec.analyses != "all"  # resolved when the spec was loaded
    fields = run_analyses(run, spec.analyses)
    ctx.add_time("total", time.perf_counter() - started)
    devices = sorted({o.device for o in execution.outcomes if o.device}) or [ctx.device]
    provenance = _provenance(
        spec, ", ".join(devices), ctx.timings,
        cache=CacheCounts(root=str(ctx.cache.root), hits=ctx.cache.hits,
                          builds=ctx.cache.builds),
        corpus=CorpusCounts(train=len(corpus.train), test=len(corpus.test)),
        vocab=vocab.summary)
    samples = _sample_files(execution.outcomes)
    results = RunResults(
        spec=spec_record(spec), provenance=provenance, runs=run.runs,
        encoders=run.descriptions or None,
        published=published_tables(spec.report.compare, run.declared) or None,
        examples=_examples({pair: files[0] for pair, files in samples.items()}),
        failures=execution.failures or None, signature=signature,
        reference=join.record if join is not None else None, **fields)
    write_statistics(out, run)
    write_run(out, results, {(encoder, label): path
                             for (encoder, decoder), files in samples.items()
                             for label, path in zip(_seed_labels(spec, decoder), files)},
              spec.report.formats)
    log.info("run %s: done in %.1f s (%d artifacts cached, %d built); results in %s",
             spec.name, time.perf_counter() - started, ctx.cache.hits, ctx.cache.builds, out)
    if execution.failures:
        failed = "; ".join(execution.failures.values())
        raise HarnessError(f"{len(execution.failures)} of {len(run.encoders)} encoder jobs "
                           f"failed (the others' results are in {out}): {failed}")
    return results


def write_statistics(out: Path, run: AnalysisRun) -> None:
    """`out/statistics.zip` (`harness.reference.archive`): every row's per-sentence statistics,
    and the vocabulary and unconditional NLLs a run joining this one shares with it."""
    statistics, chance = run.statistics
    cache = run.ctx.cache
    shared = [(SharedArtifact(stage="vocab", key=run.vocab.key),
               artifact_files(cache.path("vocab", run.vocab.key)))]
    for decoder, seed, key in unconditional_nll_keys(run.ctx, run.corpus, run.vocab):
        if cache.exists("nll", key):
            shared.append((SharedArtifact(stage="nll", key=key, decoder=decoder, seed=seed),
                           artifact_files(cache.path("nll", key))))
    out.mkdir(parents=True, exist_ok=True)
    write_archive(out / STATISTICS_ARCHIVE, statistics, chance, shared)


def spec_record(spec: Spec) -> dict[str, Any]:
    """The spec as results.json keeps it: its JSON form, each analysis with the plugin that
    registered it and that plugin's distribution, so `harness report` elsewhere can say what
    to install to draw the section of one that is missing there."""
    record = spec.record()
    assert spec.analyses != "all"  # resolved when the spec was loaded
    record["analyses"] = [{**given, "plugin": entry.plugin,
                           "distribution": entry.info.distribution or None}
                          for given, entry in zip(record["analyses"], spec.analyses)]
    return record


def run_tables(spec: TableSpec, out: Path) -> RunResults:
    """Results from published tables alone, by every analysis that computes its results from
    them (`AnalysisParts.tables`: the correlation analysis's, the paper's Figure 2 from its
    Tables 4 and 5); write the run directory."""
    refuse(preflight(spec))
    started = time.perf_counter()
    if not spec.table_analyses:
        raise HarnessError(f"{spec.source}: no installed analysis computes results from "
                           "published tables (`harness list` shows the analyses)")
    fields: dict[str, Any] = {}
    for info in spec.table_analyses:
        fields.update(results_fields(info.name, info.parts.tables_part()(spec),
                                     plugin=info.plugin))
    rows = row_declarations(read_table(spec.diagnostics.reference))
    results = RunResults(
        spec=spec.record(),
        provenance=_provenance(spec, None, {"total": round(time.perf_counter() - started, 3)}),
        published=published_tables(spec.report.compare, rows) or None, **fields)
    write_run(out, results, {}, spec.report.formats)
    log.info("run %s: correlated the tables; results in %s", spec.name, out)
    return results


def _sample_files(outcomes: list[Outcome]) -> dict[tuple[str, str], list[Path]]:
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
