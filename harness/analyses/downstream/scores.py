"""Downstream (SentEval) scores per encoder, from a reference table or computed by the jobs
(`harness.stages.evaluate`).

A reference table is YAML: `source:` (citation), `tasks:` (names, in order), `scores:` (row ->
task -> score) and `models:` (row -> the model the row measured; `harness.results.declarations`). Tasks named
in the spec are evaluated by the harness itself (each task plugin's own procedure: SentEval's
for the first-party tasks), once per encoder and task, cached. A table row is bound to the model
that earned it: it applies to an encoder only when the encoder declares that model
(`harness.results.declarations.row_mismatch`), whatever the names. An encoder with an applying row keeps
the row's scores; the others get computed ones; encoders with neither are listed as missing,
with the reason, never filled in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.protocols import CombinedColumns, TaskResult
from harness.results.declarations import read_table, row_mismatch


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
    (`harness.results.declarations.read_table` has its `kind` and `models` too)."""
    table = read_table(path)
    return table.source, table.tasks, table.scores


def table_row(results: Iterable[TaskResult],
              combiners: Iterable[CombinedColumns] = ()) -> dict[str, float]:
    """Return reference-table column -> value for one encoder's task results: each result's
    `columns`, then the columns the tasks combine from several results (`CombinedColumns`:
    SentEval's STS12-16 mean, `STS`)."""
    row: dict[str, float] = {}
    by_task = {}
    for result in results:
        row.update(result.columns)
        by_task[result.task] = result
    for task in combiners:
        row.update(task.combined_columns(by_task))
    return row


def downstream_scores(reference: Path | None, encoders: list[str],
                      computed: dict[str, list[TaskResult]] | None = None, *,
                      declared: Mapping[str, Mapping[str, Any] | None],
                      combiners: Iterable[CombinedColumns] = ()) -> Downstream:
    """Return the downstream scores of `encoders`, and the ones that have none with the reason.

    `declared` holds what each encoder declares it is (`EncoderDescription.declares`): a row of
    the reference table counts for an encoder only when it declares the row's model; an encoder
    without a description (its job failed) matches no row. A declaration of None marks a row of
    another published table (a table spec), paired by name. `computed` holds the harness's own
    task results per encoder (`TaskResult`s): they count for encoders no row applies to; without
    them (the spec has no tasks) such encoders are missing. `combiners` are the spec's tasks
    that add columns combined from several results (`CombinedColumns`).
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
            mismatch = (row_mismatch(table.models.get(name), declared[name])
                        if name in declared else "its job recorded no description")
            if mismatch is None:
                scores[name], origin[name] = table.scores[name], "reference"
                continue
            why.append(f"{source}: {mismatch}")
        if computed and computed.get(name):
            scores[name] = table_row(computed[name], combiners)
            origin[name] = "computed"
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


