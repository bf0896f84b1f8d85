"""The downstream scores the diagnostics are correlated with (encoder x task), where each
encoder's came from (computed by the harness or a published reference table), and the encoders
that have none, with why."""

from __future__ import annotations

from harness.report.elements import Section, Table, fmt
from harness.results import RunResults

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
    return Section("Downstream scores", text, tables=tables)
