"""The downstream scores the diagnostics are correlated with (encoder x task), where each
encoder's came from (computed by the harness or a published reference table), the spread of the
computed ones over classifier seeds, and the encoders that have none, with why."""

from __future__ import annotations

from collections.abc import Sequence

from harness.protocols import TaskResult
from harness.report.elements import Section, Table, fmt, fmt_span
from harness.results.model import RunResults

ORIGINS = {"computed": "computed", "reference": "reference table"}


def downstream_tasks(results: RunResults) -> list[str]:
    """The downstream columns, in order of first appearance."""
    return list(dict.fromkeys(t for scores in results.downstream.values() for t in scores))


def missing_downstream(results: RunResults) -> dict[str, str]:
    """Encoder -> why it has no downstream scores: `downstream_missing`, plus encoders of the
    run that have none and no recorded reason (an older results.json)."""
    missing = dict(results.downstream_missing or {})
    if results.downstream or missing:
        for run in results.runs:
            if run.encoder not in results.downstream and run.encoder not in missing:
                missing[run.encoder] = "no reason recorded"
    return missing


def downstream_section(results: RunResults) -> Section | None:
    """The encoder x task table of downstream scores, their origin, and what is missing."""
    tasks = downstream_tasks(results)
    missing = missing_downstream(results)
    if not tasks and not missing:
        return None
    origin = results.downstream_origin or {}
    details = results.downstream_details or {}
    rows = []
    for encoder, scores in results.downstream.items():
        rows.append([encoder, ORIGINS.get(origin.get(encoder, ""), origin.get(encoder, "–")),
                     *[fmt(scores.get(t), 2) for t in tasks]])
    text = []
    if results.downstream_source:
        text.append(f"Source: {results.downstream_source}. An encoder with a row in a reference "
                    "table keeps the table's scores (origin \"reference table\"); the others "
                    "get the scores the harness computed (\"computed\"). Scores are on each "
                    "task's own scale (accuracy in %, correlations in [-1, 1]).")
    metrics = {result.task: result.metric for per_task in details.values()
               for result in per_task.values()}
    if metrics:
        text.append("Computed tasks and their metric: "
                    + ", ".join(f"{task} ({metric})" for task, metric in metrics.items()) + ".")
    if missing:
        text.append("No downstream scores, so left out of every correlation:")
        text += [f"- {encoder}: {reason}" for encoder, reason in missing.items()]
    tables = [Table("", ["encoder", "origin", *tasks], rows)] if rows else []
    spread = seed_spread_table(details)
    if spread is not None:
        text.append("Computed scores are those at the first classifier seed. Over seeds (each "
                    "a full run of the task's procedure on the same vectors), a score's mean, "
                    "sample standard deviation, minimum and maximum:")
        tables.append(spread)
    return Section("Downstream scores", text, tables=tables)


def seed_spread_table(details: dict[str, dict[str, TaskResult]]) -> Table | None:
    """The table of computed scores over classifier seeds (encoder x task), or None when no
    result has a spread."""
    rows = []
    for encoder, per_task in details.items():
        for task, result in per_task.items():
            spread = result.spread
            if spread is None:
                continue
            # Accuracies are percentages (2 decimals); correlations lie in [-1, 1] (4).
            digits = 2 if abs(result.score) > 1 else 4
            rows.append([encoder, task, result.metric, fmt(result.score, digits),
                         fmt(spread.mean, digits), fmt(spread.sd, digits),
                         fmt(spread.min, digits), fmt(spread.max, digits),
                         seed_list(spread.seeds)])
    if not rows:
        return None
    return Table("Spread over classifier seeds",
                 ["encoder", "task", "metric", "score (first seed)", "mean", "sd", "min", "max",
                  "seeds"], rows)


def seed_list(seeds: Sequence[int]) -> str:
    """"1111–1115" for consecutive seeds, else the seeds separated by commas."""
    consecutive = list(seeds) == list(range(seeds[0], seeds[0] + len(seeds)))
    return fmt_span(seeds[0], seeds[-1]) if consecutive else ", ".join(map(str, seeds))
