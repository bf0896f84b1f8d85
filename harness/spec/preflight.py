"""Preflight: what keeps a well-formed spec from running on this machine, found before any work.

A loaded spec is well formed; it may still lack what it needs here: files a command prepares
(News Crawl, SentEval data), components that are unavailable (missing weights or packages), the
device it names. `preflight` lists every such problem, each located like a spec error, so
`harness validate` can print them all and `harness run` refuses to start.

`preflight_warnings` lists what will run but not as the user may expect, without stopping a
run: an encoder that has a row in the downstream reference table whose model is not the one
the encoder declares (the row's scores will not be used for it; `harness.results.declarations`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.errors import HarnessError, SpecError
from harness.protocols import (
    BuildContext,
    ComponentInfo,
    GeneratedTask,
    declared_model,
)
from harness.protocols.task import data_command
from harness.registry.checks import component_problems
from harness.results.declarations import (
    PreviewVocabulary,
    describe,
    preview_vocabulary,
    read_table,
    row_mismatch,
    split_declaration,
    unstated_note,
)
from harness.spec.resolve import (
    PATH_FIELDS,
    exists,
    located_entries,
    missing_path_message,
    path_values,
    prepare_hint,
)
from harness.spec.schema import Component, Spec, TableSpec


def preflight(spec: Spec | TableSpec) -> list[SpecError]:
    """Every reason the spec cannot run here: missing prepared files, unavailable components,
    task data that is not there, a device this machine lacks."""
    problems = _prepared_files(spec)
    problems += _reference_tables(spec)
    if isinstance(spec, Spec):
        problems += _unavailable_components(spec)
        problems += _task_data(spec)
        problems += _device(spec)
    for info in _analyses(spec):
        check = info.parts.preflight_part()
        if check is not None:
            problems += check(spec)
    return problems


def _analyses(spec: Spec | TableSpec) -> list[ComponentInfo]:
    """The analyses a run of `spec` runs: a resolved spec's `analyses:`, or those that
    compute results from published tables for a table spec."""
    if isinstance(spec, TableSpec):
        return list(spec.table_analyses)
    return [] if spec.analyses == "all" else [entry.info for entry in spec.analyses]


def refuse(problems: Iterable[SpecError], sections: tuple[str, ...] | None = None) -> None:
    """Raise the first problem, before any work is done; with `sections`, only problems of
    those top-level sections count (`corpus`, `encoders`, ...)."""
    relevant = [p for p in problems
                if sections is None or (p.field or "").split(".")[0] in sections]
    if relevant:
        more = (f" (and {len(relevant) - 1} more: see `harness validate`)"
                if len(relevant) > 1 else "")
        raise HarnessError(f"{relevant[0]}{more}")


def _prepared_files(spec: Spec | TableSpec) -> list[SpecError]:
    """Files and directories the spec says how to make, that are not made yet."""
    problems = []
    for field in PATH_FIELDS:
        for loc, path in path_values(spec, field):
            if not exists(path, field):
                message = missing_path_message(path, field, prepare_hint(spec, field))
                problems.append(spec.positions.error(message, loc))
    return problems


def _reference_tables(spec: Spec | TableSpec) -> list[SpecError]:
    """Published tables that are there but malformed: found before any training, not when the
    downstream stage or the report reads them."""
    problems = []
    fields = [("downstream", "reference"), ("diagnostics", "reference"), ("report", "compare")]
    for loc, path in (item for field in fields for item in path_values(spec, field)):
        if path.is_file():
            try:
                read_table(path)
            except HarnessError as exc:
                problems.append(spec.positions.error(str(exc), loc))
    return problems


def _unavailable_components(spec: Spec) -> list[SpecError]:
    """Components whose availability check, given their options, says they cannot run here,
    and components whose plugin is broken in a way only building them would otherwise show
    (an option default its own type refuses, a factory module that fails to import)."""
    problems = []
    for kind, loc, component in located_entries(spec):
        where = (*loc, "name")
        status = component.info.status(component.settings)
        if status != "ok":
            problems.append(spec.positions.error(f"{kind} {component.name!r} is {status}",
                                                 where))
        problems += [spec.positions.error(problem, where) for problem in
                     component_problems(component.info, component.settings)]
    return problems


def _task_data(spec: Spec) -> list[SpecError]:
    """The files the downstream tasks would read and cannot: found now, not after every
    decoder has trained; each with the command its plugin says makes it (`PreparedData`)."""
    problems = []
    data_dir = spec.downstream.data_dir
    for index, component in enumerate(spec.components("task")):
        if component.info.status(component.settings) != "ok":
            continue  # already a problem
        task = component.build(BuildContext(seed=spec.seed))
        if isinstance(task, GeneratedTask):
            continue  # the harness makes its data
        if data_dir is None:
            command = data_command([task], "DIR")
            raise spec.positions.error(
                f"task {component.name!r} reads its files from a data directory: set it"
                + (f" (make one with `{command}`)" if command else ""), ("downstream", "data_dir"))
        missing = [path for path in task.files(data_dir) if not path.is_file()]
        if missing:
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            command = data_command([task], data_dir)
            problems.append(spec.positions.error(
                f"task {task.name} needs {missing[0]}{more}"
                + (f"; make it with: {command}" if command else ""),
                ("downstream", "tasks", index, "name")))
    return problems


def _device(spec: Spec) -> list[SpecError]:
    """The spec's device, when the executor would need it here and this machine lacks it (the
    executor decides: with a cluster the jobs run elsewhere and each resolves the device where
    it runs; torch is imported only for a GPU)."""
    if spec.device in ("auto", "cpu") or spec.executor.info.status(spec.executor.settings) != "ok":
        return []
    try:
        spec.executor.build(BuildContext(seed=spec.seed)).device(spec.device)
    except HarnessError as exc:
        reason = str(exc).split(": ", 1)[-1]  # without resolve_device's "device 'x'" prefix
        return [spec.positions.error(f"{spec.device!r}: {reason}", ("device",))]
    return []


def preflight_warnings(spec: Spec | TableSpec) -> list[SpecError]:
    """What runs, but not as the user may expect (a run goes on): each encoder named in the
    downstream reference table whose row does not apply to it, because the row declares no
    model or one the encoder does not declare, so the row's scores will not be its scores."""
    reference = spec.downstream.reference
    if not isinstance(spec, Spec) or reference is None or not reference.is_file():
        return []
    try:
        table = read_table(reference)
    except HarnessError:
        return []  # a problem already (`_reference_tables`)
    instead = ("computed by the spec's tasks" if spec.components("task")
               else "listed as missing")
    # no row, or unavailable (a problem already): nothing to warn about
    rowed = [(index, component) for index, component in enumerate(spec.components("encoder"))
             if table.scores.get(component.name)
             and component.info.status(component.settings) == "ok"]
    if not rowed:
        return []
    section = spec.vocab  # one stand-in for every encoder (an imported file is digested once)
    vocab = preview_vocabulary(section.bpe_size, section.dim, section.vectors)
    warnings = []
    for index, component in rowed:
        declared = _declared_before_run(spec, component, vocab)
        row = table.models.get(component.name)
        if isinstance(declared, str):
            reason = f"cannot tell which model it is before the run ({declared})"
        else:
            reason = row_mismatch(row, declared)
            if reason is None:
                continue
            if row:
                reason = (f"the row measured {describe(row)}, but {component.name!r} "
                          f"declares {describe(declared)}{unstated_note(row, declared)}")
        warnings.append(spec.positions.error(
            f"encoder {component.name!r} has a row in {reference.name} ({table.source}) that "
            f"does not apply to it: {reason}; its downstream scores will be {instead}",
            ("encoders", index, "name")))
    return warnings


def _declared_before_run(spec: Spec, component: Component, vocab: PreviewVocabulary | None
                         ) -> dict[str, Any] | str:
    """What the encoder will declare it is, asked of an instance built over `vocab`, the
    stand-in for the run's vocabulary (nothing trained or loaded); why it cannot be told, as a
    string."""
    if vocab is None:
        return f"the dimension of {spec.vocab.vectors} is unknown before the run"
    try:
        encoder = component.build(BuildContext(seed=spec.seed, vocab=vocab))  # type: ignore[arg-type]
        declared = declared_model(encoder)
        return split_declaration(declared, component.plugin, component.name)[0]
    except Exception as exc:  # noqa: BLE001 - a warning, not a failure: the run will say more
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
