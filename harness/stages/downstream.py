"""Stage 8: downstream (SentEval) scores per encoder, from a reference table or computed.

A reference table is YAML: `source:` (citation), `tasks:` (names, in order), `scores:` (row ->
task -> score) and `models:` (row -> the model the row measured; `harness.identity`). Tasks named
in the spec are evaluated by the harness itself (each task plugin's own procedure: SentEval's
for the first-party tasks), once per encoder and task, cached. A table row is bound to the model
that earned it: it applies to an encoder only when the encoder declares that model
(`harness.identity.row_mismatch`), whatever the names. An encoder with an applying row keeps
the row's scores; the others get computed ones; encoders with neither are listed as missing,
with the reason, never filled in.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.data.senteval_tasks import STS_YEARS
from harness.errors import DataError, plugin_call
from harness.identity import read_table, row_mismatch
from harness.protocols import GeneratedTask, TaskResult
from harness.stages.base import RunContext, file_digest
from harness.stages.encode import Encoded

VERSION = 2
RESULT_FILE = "result.json"


@dataclass(frozen=True)
class Downstream:
    """Downstream scores of the run's encoders, and which encoders have none and why
    (`reasons`: encoder -> reason)."""

    source: str
    tasks: list[str]
    scores: dict[str, dict[str, float]]
    missing: list[str] = field(default_factory=list)
    origin: dict[str, str] = field(default_factory=dict)  # encoder -> "reference" | "computed"
    details: dict[str, dict[str, TaskResult]] = field(default_factory=dict)  # encoder -> task
    reasons: dict[str, str] = field(default_factory=dict)


def read_reference_table(path: Path) -> tuple[str, list[str], dict[str, dict[str, float]]]:
    """Return (citation, tasks, encoder -> task -> score) from a reference table file
    (`harness.identity.read_table` has its `kind` and `models` too)."""
    table = read_table(path)
    return table.source, table.tasks, table.scores


def table_row(results: Iterable[TaskResult]) -> dict[str, float]:
    """Return reference-table column -> value for one encoder's task results.

    Merges each result's `columns`; when every STS12-16 result is present it adds `STS`, their
    mean headline score (mean Pearson r): Vec2Sent's Table 5 has one STS column.
    """
    row: dict[str, float] = {}
    by_task = {}
    for result in results:
        row.update(result.columns)
        by_task[result.task] = result
    if all(year in by_task for year in STS_YEARS):
        row["STS"] = sum(by_task[year].score for year in STS_YEARS) / len(STS_YEARS)
    return row


def downstream_scores(reference: Path | None, encoders: list[str],
                      computed: dict[str, list[TaskResult]] | None = None, *,
                      identities: Mapping[str, Mapping[str, Any] | None]) -> Downstream:
    """Return the downstream scores of `encoders`, and the ones that have none with the reason.

    `identities` holds what each encoder declares it is (`EncoderIdentity.declares`): a row of
    the reference table counts for an encoder only when it declares the row's model; an encoder
    without an identity matches no row. An identity of None marks a row of another published
    table (a table spec), paired by name. `computed` holds the harness's own task results per
    encoder (`TaskResult`s): they count for encoders no row applies to; without them (the spec
    has no tasks) such encoders are missing.
    """
    table = None if reference is None else read_table(reference)
    source = table.source if table is not None else ""
    scores: dict[str, dict[str, float]] = {}
    origin: dict[str, str] = {}
    details: dict[str, dict[str, Any]] = {}
    reasons: dict[str, str] = {}
    for name in encoders:
        why = []
        if table is not None and not table.scores.get(name):
            why.append(f"not in {source}")
        elif table is not None:
            mismatch = (row_mismatch(table.models.get(name), identities[name])
                        if name in identities else "its job recorded no identity")
            if mismatch is None:
                scores[name], origin[name] = table.scores[name], "reference"
                continue
            why.append(f"{source}: {mismatch}")
        if computed and computed.get(name):
            scores[name], origin[name] = table_row(computed[name]), "computed"
            details[name] = {r.task: r for r in computed[name]}
            continue
        if computed is not None:
            why.append("no task results")
        reasons[name] = "; ".join(why) or "the spec names no downstream scores"
    tasks = list(table.tasks) if table is not None and "reference" in origin.values() else []
    for row in scores.values():
        tasks += [task for task in row if task not in tasks]
    if computed is not None:
        source = " + ".join(filter(None, [source, "computed by the harness"]))
    missing = [name for name in encoders if name not in scores]
    return Downstream(source=source, tasks=tasks, scores=scores, missing=missing,
                      origin=origin, details=details, reasons=reasons)


def evaluate_tasks(ctx: RunContext, encodings: list[Encoded]) -> dict[str, list[TaskResult]]:
    """Return each encoder's results on the spec's downstream tasks, computing what the cache
    lacks."""
    results: dict[str, list[TaskResult]] = {}
    for component in ctx.spec.components("task"):
        started = time.perf_counter()
        task = ctx.build_once(component)
        data_dir, data_identity = _task_data(ctx, task)
        for encoded in encodings:
            parts = {"version": VERSION, "task": component.identity(),
                     "task_version": task.version, "config": ctx.spec.downstream.config,
                     "seed": ctx.spec.seed, "data": data_identity, "encoder": encoded.identity,
                     "normalise": _task_normalisation(ctx, encoded)}
            results.setdefault(encoded.encoder, []).append(
                _evaluate(ctx, task, parts, data_dir, encoded))
        ctx.add_time("downstream", time.perf_counter() - started)
    return results


def _evaluate(ctx: RunContext, task: Any, parts: dict[str, Any], data_dir: Path,
              encoded: Encoded) -> TaskResult:
    """One task's result for one encoder, from the cache or evaluated now."""

    def build(directory: Path) -> dict[str, Any]:
        from harness.corpus import normalise

        options = ctx.spec.corpus.normalise

        def encode(sentences: list[str]) -> Any:
            if parts["normalise"] is not None:
                sentences = [normalise(s, options) for s in sentences]
            return encoded.encode(sentences, ctx.spec.encode.batch_size)

        with plugin_call(parts["task"]["plugin"], f"task {task.name}: evaluate"):
            result = task.evaluate(encode, data_dir, config=ctx.spec.downstream.config,
                                   seed=ctx.spec.seed, device=ctx.device)
        (directory / RESULT_FILE).write_text(json.dumps(result.to_json()), encoding="utf-8")
        return {"score": result.score, "seconds": result.seconds}

    directory = ctx.cache.produce("downstream", parts, build,
                                  label=f"{task.name} {encoded.encoder}")
    return TaskResult.from_json(json.loads((directory / RESULT_FILE).read_text()))


def _task_normalisation(ctx: RunContext, encoded: Encoded) -> dict[str, Any] | None:
    """How task text is normalised before `encoded` reads it: like the run's corpus for an
    encoder built from that corpus (its vocabulary, its fit), which never saw other text; not at
    all (None) for a pretrained one, which reads it as SentEval hands it to any encoder."""
    return None if encoded.pretrained else ctx.spec.corpus.normalise.model_dump()


def _task_data(ctx: RunContext, task: Any) -> tuple[Path, Any]:
    """The task's data directory and what identifies its content, read once per run (every
    encoder's job asks for it)."""
    key = f"task-data:{task.name}"
    if key not in ctx.built:
        ctx.built[key] = _read_task_data(ctx, task)
    return ctx.built[key]


def _read_task_data(ctx: RunContext, task: Any) -> tuple[Path, Any]:
    """The task's data directory and the digests of its files, generating synthetic data."""
    if isinstance(task, GeneratedTask):
        key = task.data_key()
        directory = ctx.cache.produce("task-data", {"task": task.name, "data": key},
                                      lambda d: task.generate(d), label=task.name)
        return directory, key
    data_dir = ctx.spec.downstream.data_dir
    if data_dir is None:
        raise DataError(f"downstream task {task.name} reads SentEval data: set "
                        "`downstream.data_dir` (make it with `harness data senteval --dir DIR`)")
    return data_dir, {str(path.relative_to(data_dir)): file_digest(path)
                      for path in task.files(data_dir)}
