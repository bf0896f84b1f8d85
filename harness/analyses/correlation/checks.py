"""Checks of the spec's `correlation.primary` beyond its schema
(`harness.analyses.correlation.spec`): the declared diagnostics must be measured and the declared
tasks scored, found when the spec is read (a benchmark spec's metrics) or by preflight (a
published table's columns), before any work, each located at its file:line and field."""

from __future__ import annotations

from pathlib import Path

from harness.analyses.correlation.spec import correlation_settings
from harness.errors import HarnessError, SpecError
from harness.protocols import BuildContext, CombinedColumns
from harness.results.declarations import read_table
from harness.spec.positions import Loc, Positions
from harness.spec.schema import Spec, TableSpec

PRIMARY: Loc = ("correlation", "primary")


def check_correlation(spec: Spec, positions: Positions) -> None:
    """The `correlation:` section against the resolved spec: an explicit `rank_by` names one
    of the metrics (the default is only used when it does: the run notes that no rank was made
    otherwise), and `primary` (`check_primary`)."""
    metrics = [m.name for m in spec.components("metric")]
    rank_by = correlation_settings(spec).rank_by
    if metrics and rank_by not in metrics and "rank_by" in correlation_settings(spec).model_fields_set:
        raise positions.error(f"{rank_by!r} is not among the spec's metrics "
                              f"({', '.join(metrics)})", ("correlation", "rank_by"))
    check_primary(spec, positions)


def check_primary(spec: Spec, positions: Positions) -> None:
    """Raise for a declared diagnostic that is not one of the spec's metrics. Declared tasks are
    checked against a reference table's columns by preflight (`primary_problems`); the columns
    computed tasks give (`TaskResult.columns`, SentEval's combined STS) are known only once they
    ran, so a declared task without scores is named in the primary analysis's notes."""
    section = correlation_settings(spec).primary
    metrics = [m.name for m in spec.components("metric")]
    if section.diagnostics is not None:
        _raise_unknown(section.diagnostics, metrics, "metrics", "diagnostics", positions)
    tasks = [t.name for t in spec.components("task")]
    if isinstance(section.tasks, list) and tasks and spec.downstream.reference is None:
        # A computed task's columns are its name and NAME-SCORE (MRPC, MRPC-F1); a task that
        # combines several (SentEval's STS) names its column only when it runs.
        names = {name.lower() for name in tasks}
        combines = any(isinstance(spec_task.build(BuildContext()), CombinedColumns)
                       for spec_task in spec.components("task"))
        for index, name in enumerate(section.tasks):
            if name.lower() in names or name.split("-")[0].lower() in names or combines:
                continue
            raise positions.error(f"{name!r} is not among the spec's downstream tasks "
                                  f"({', '.join(tasks)})", (*PRIMARY, "tasks", index))


def _raise_unknown(named: list[str], known: list[str], what: str, key: str,
                   positions: Positions) -> None:
    for index, name in enumerate(named):
        if name not in known:
            raise positions.error(f"{name!r} is not among the spec's {what} "
                                  f"({', '.join(known) or 'none'})", (*PRIMARY, key, index))


def primary_problems(spec: Spec | TableSpec) -> list[SpecError]:
    """Declared diagnostics that are not columns of a table spec's diagnostics table, and declared
    tasks that are not columns of the downstream reference table when every score comes from
    it (the spec computes no tasks): found before any work."""
    section = correlation_settings(spec).primary
    problems = []
    if isinstance(spec, TableSpec) and section.diagnostics is not None:
        columns = _columns(spec.diagnostics.reference)
        if columns is not None:
            problems += _unknown(section.diagnostics, columns,
                                 f"columns of {spec.diagnostics.reference.name}", "diagnostics",
                                 spec)
    reference = spec.downstream.reference
    computes = isinstance(spec, Spec) and bool(spec.components("task"))
    if isinstance(section.tasks, list) and reference is not None and not computes:
        columns = _columns(reference)
        if columns is not None:
            problems += _unknown(section.tasks, columns, f"columns of {reference.name}",
                                 "tasks", spec)
    return problems


def _columns(path: Path) -> list[str] | None:
    """A reference table's columns; None when it is missing or malformed (already a problem)."""
    try:
        return list(read_table(path).tasks)
    except HarnessError:
        return None


def _unknown(named: list[str], known: list[str], what: str, key: str,
             spec: Spec | TableSpec) -> list[SpecError]:
    """Errors for the names not in `known`; task names in any case (as the analysis reads them),
    diagnostics exactly."""
    fold = str.lower if key == "tasks" else str
    by_name = {fold(name) for name in known}
    return [spec.positions.error(f"{name!r} is not among the {what} ({', '.join(known)})",
                                 (*PRIMARY, key, index))
            for index, name in enumerate(named) if fold(name) not in by_name]
