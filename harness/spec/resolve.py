"""Resolution of a validated spec: relative paths made absolute, and every component entry
looked up in the registry once, with its options validated by the component's own class.

Each step returns a new spec; a validated spec is never changed in place.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from harness.errors import HarnessError, SpecError
from harness.protocols import BuildContext, Options
from harness.protocols.task import data_command
from harness.registry.components import Registry
from harness.spec.positions import Loc, Positions, raise_validation_error
from harness.spec.schema import AnalysisEntry, Component, DefenceEntry, Entry, Spec, TableSpec

Model = TypeVar("Model", bound=BaseModel)
EntryT = TypeVar("EntryT", bound=Entry)

SECTION_FOR_KIND: dict[str, Loc] = {"encoder": ("encoders",), "decoder": ("decoders",),
                                    "metric": ("metrics",), "task": ("downstream", "tasks")}
"""Where each kind's entries sit in a spec."""

PATH_FIELDS: tuple[Loc, ...] = (("corpus", "train", "path"), ("corpus", "test", "path"),
                                ("corpus", "fit", "path"),
                                ("downstream", "reference"), ("diagnostics", "reference"),
                                ("vocab", "model"), ("vocab", "vectors"),
                                ("downstream", "data_dir"), ("report", "compare"))
"""The spec's path fields; `data_dir` is a directory, the others are files, and
`report.compare` is a list of files (`path_values`)."""


def located_entries(spec: Spec) -> Iterator[tuple[str, Loc, Entry]]:
    """Every component entry of `spec` with its kind and where it sits: each kind's section in
    order, then the analyses (once resolved) and the components their sections name (the
    privacy analysis's attacks and defences), and the executor."""
    for kind, section in SECTION_FOR_KIND.items():
        for index, component in enumerate(spec.components(kind)):
            yield kind, (*section, index), component
    if spec.analyses != "all":
        for index, analysis in enumerate(spec.analyses):
            yield "analysis", ("analyses", index), analysis
        for analysis in spec.analyses:  # the components their sections name (attacks, defences)
            part = analysis.info.parts if analysis.is_resolved else None
            for name, kind in (part.components.items() if part and part.section else ()):
                for index, entry in enumerate(getattr(getattr(spec, part.section), name)):
                    if isinstance(entry, Entry) and entry.is_resolved:
                        yield kind, (part.section, name, index), entry
    yield "executor", ("executor",), spec.executor


def path_values(spec: BaseModel, loc: Loc) -> list[tuple[Loc, Path]]:
    """The path(s) at the path field `loc`, each with its own location: one for a single path,
    one per item (`report.compare.0`, ...) for a list of paths, none when unset."""
    value = field_at(spec, loc)
    if isinstance(value, list):
        return [((*loc, index), path) for index, path in enumerate(value)]
    return [] if value is None else [(loc, value)]


def field_at(model: BaseModel, loc: Loc) -> Any:
    """The value at `loc` under `model`, or None where a section on the way is absent."""
    value: Any = model
    for part in loc:
        value = getattr(value, part, None)
    return value


def replace_at(model: Model, loc: Loc, value: Any) -> Model:
    """A copy of `model` with the field at `loc` set to `value`, its sections copied on the way
    (the models are frozen)."""
    head, rest = loc[0], loc[1:]
    new = replace_at(getattr(model, head), rest, value) if rest else value
    return model.model_copy(update={head: new})


def missing_path_message(path: Path, loc: Loc, prepare: str | None) -> str:
    """What to say about a spec path that does not exist, with the command that makes it."""
    kind = "directory" if loc[-1] == "data_dir" else "file"
    return f"{kind} not found: {path}" + (f"; make it with: {prepare}" if prepare else "")


def prepare_hint(spec: Spec | TableSpec, loc: Loc) -> str | None:
    """The command that makes the file or directory at `loc`, when the spec declares one; for
    `data_dir`, what the plugins of the spec's tasks say makes their files (`data_command`)."""
    if loc[-1] == "data_dir":
        if not isinstance(spec, Spec):
            return None
        tasks = []
        for entry in spec.components("task"):
            if entry.info.status(entry.settings) == "ok":
                try:
                    tasks.append(entry.build(BuildContext(seed=spec.seed)))
                except HarnessError:  # reported where the task is checked (preflight)
                    continue
        return data_command(tasks, field_at(spec, loc))
    return getattr(field_at(spec, loc[:-1]), "prepare", None)


def exists(path: Path, loc: Loc) -> bool:
    """True when the file (or, for `data_dir`, the directory) at a spec path exists."""
    return path.is_dir() if loc[-1] == "data_dir" else path.is_file()


def resolve_paths(spec: Model, positions: Positions, spec_folder: Path) -> Model:
    """The spec with its relative paths made absolute; raise for a missing file the spec gives
    no command to make (a typo). A missing file it says how to make is left to `preflight`."""
    for loc in PATH_FIELDS:
        value = field_at(spec, loc)
        if isinstance(value, list):  # published tables to show: a missing one is preflight's
            spec = replace_at(spec, loc, [path if path.is_absolute()
                                          else positions.base(loc, spec_folder) / path
                                          for path in value])
            continue
        if value is None:
            continue
        path = value if value.is_absolute() else positions.base(loc, spec_folder) / value
        spec = replace_at(spec, loc, path)
        # A data directory is made by its tasks' plugin (`preflight` says how); any other
        # missing file the spec gives no command for is a typo.
        if not exists(path, loc) and loc[-1] != "data_dir" and not prepare_hint(spec, loc):
            raise positions.error(missing_path_message(path, loc, None), loc)
    return spec


def check_sizes(spec: Spec, positions: Positions) -> None:
    """Refuse what cannot fit the corpus the spec states, before any work: a learning-curve
    size not below the training split's stated size, and component options that need more
    test sentences than the test split can hold (`Options.test_size_problem`)."""
    train = spec.stated_size("train")
    for index, size in enumerate(spec.curve.train_sizes):
        if train is not None and size >= train:
            raise positions.error(f"{size} is not below the {train} training sentences the "
                                  "corpus states (the full split is the curve's last point); "
                                  "give smaller sizes", ("curve", "train_sizes", index))
    test = spec.stated_size("test")
    if test is None:
        return
    for kind, section in SECTION_FOR_KIND.items():
        for index, component in enumerate(spec.components(kind)):
            problem = component.settings.test_size_problem(test)
            if problem is not None:
                option, why = problem
                raise positions.error(f"{component.name}: {why}", (*section, index, option))


def resolve_reference(spec: Spec, positions: Positions, spec_folder: Path) -> Spec:
    """The spec with its `reference.bundle` made a file: a bundle shipped with the harness by
    its name (`quickstart`), else a path, relative ones made absolute; a missing file is
    refused here, naming the field and the shipped names."""
    if spec.reference is None:
        return spec
    from harness.reference.bundles import shipped_bundle, shipped_names

    loc = ("reference", "bundle")
    given = spec.reference.bundle
    path = shipped_bundle(given) or Path(given).expanduser()
    if not path.is_absolute():
        path = positions.base(loc, spec_folder) / path
    if not path.is_file():
        raise positions.error(f"reference bundle {given}: no such file (make one with "
                              "`harness bundle RUN_DIR --out FILE`, or name one shipped with "
                              f"the harness: {', '.join(shipped_names())})", loc)
    return replace_at(spec, loc, str(path))


def resolve_components(spec: Spec, registry: Registry, positions: Positions,
                       spec_folder: Path) -> Spec:
    """The spec with `encoders: all` expanded and every component entry (the executor's too)
    resolved: looked up in the registry (tasks are spelled MR or mr alike) and its options
    validated, relative paths in them made absolute."""
    if spec.encoders == "all":
        every = [Component(name=info.name) for info in registry
                 if info.kind == "encoder" and info.status() == "ok"]
        if not every:
            raise positions.error("`encoders: all` found no available encoder", ("encoders",))
        spec = spec.model_copy(update={"encoders": every})
    for kind, section in SECTION_FOR_KIND.items():
        resolved = []
        for index, component in enumerate(spec.components(kind)):
            loc = (*section, index)
            resolved.append(_resolve(component, kind, loc, registry, positions, spec_folder))
            _check_trained_for(component, kind, loc, spec, positions)
        if kind == "task":  # each task records how many classifier seeds it asks for
            resolved = [task.model_copy(update={"seeds": len(spec.downstream.task_seeds(task))})
                        for task in resolved]
        spec = replace_at(spec, section, resolved)
    executor = _resolve(spec.executor, "executor", ("executor",), registry, positions,
                        spec_folder)
    spec = spec.model_copy(update={
        "executor": executor, "analyses": _analyses(spec, registry, positions, spec_folder)})
    _check_unique_names(spec, positions)
    _check_curve_encoders(spec, positions)
    return spec


def _analyses(spec: Spec, registry: Registry, positions: Positions,
              spec_folder: Path) -> list[AnalysisEntry]:
    """The spec's analyses resolved, in an order where each comes after those it `needs`:
    `all` is every registered analysis that can run here, in registration order."""
    if spec.analyses == "all":
        named = [(("analyses",), AnalysisEntry(name=info.name))
                 for info in registry.in_order("analysis") if info.status() == "ok"]
    else:
        named = [(("analyses", index), entry) for index, entry in enumerate(spec.analyses)]
        _check_once("analysis", ("analyses",), spec.analyses, positions)
    resolved = {entry.name: (loc, _resolve(entry, "analysis", loc, registry, positions,
                                           spec_folder)) for loc, entry in named}
    ordered: list[AnalysisEntry] = []

    def place(name: str, after: tuple[str, ...]) -> None:
        if any(entry.name == name for entry in ordered):
            return
        loc, entry = resolved[name]
        if name in after:
            raise positions.error(f"analysis {name!r} needs itself, through "
                                  f"{' -> '.join(after)}", loc)
        for need in entry.info.needs:
            if need not in resolved:
                raise positions.error(f"analysis {name!r} needs the analysis {need!r}: add "
                                      f"{need} to `analyses:` before it", loc)
            place(need, (*after, name))
        ordered.append(entry)

    for name in resolved:
        place(name, ())
    return ordered


def resolve_section_components(spec: Spec, sections: Mapping[str, Mapping[str, str]],
                               registry: Registry, positions: Positions, spec_folder: Path
                               ) -> Spec:
    """`spec` with the component entries of its analyses' sections resolved: `sections` maps
    a section key to its fields that name components and their kind
    (`AnalysisParts.components`); each entry is resolved like the spec's own components, and an
    entry given twice in one field (the same name and options) is refused: one name with
    other options is another component (`align` with 10 and with 1000 leaked pairs)."""
    for key, fields in sections.items():
        section = getattr(spec, key)
        updates = {}
        for name, kind in fields.items():
            loc: Loc = (key, name)
            entries: list[Entry] = [
                _defence(DefenceEntry.model_validate(raw), (*loc, index), registry, positions,
                         spec_folder) if kind == "defence"
                else _resolve(Entry.model_validate(raw), kind, (*loc, index), registry,
                              positions, spec_folder)
                for index, raw in enumerate(getattr(section, name))]
            if kind == "defence":  # each defence once, at all its levels
                _check_once(kind, loc, entries, positions)
            seen: dict[str, int] = {}
            for index, entry in enumerate(entries):
                identity = json.dumps(entry.identity(), sort_keys=True, default=str)
                if identity in seen:
                    raise positions.error(f"{kind} {entry.name!r} appears twice with the same "
                                          f"options (also entry {seen[identity]}): keep one",
                                          (*loc, index, "name"))
                seen[identity] = index
            updates[name] = entries
        if updates:
            spec = spec.with_section(key, section.model_copy(update=updates))
    return spec


def _defence(entry: DefenceEntry, loc: Loc, registry: Registry, positions: Positions,
             spec_folder: Path) -> DefenceEntry:
    """A defence entry resolved, with one entry per level: its options with the option its
    options class names in `LEVEL` set to the level, each validated by that class."""
    resolved = _resolve(entry, "defence", loc, registry, positions, spec_folder)
    if entry.levels is None:
        return resolved
    option = getattr(resolved.info.options, "LEVEL", "")
    if not option:
        raise positions.error(f"defence {resolved.name!r} has one setting, no level to vary: "
                              "remove `levels`", (*loc, "levels"))
    if not entry.levels:
        raise positions.error("give at least one level, e.g. `levels: [0.5, 1, 2]`",
                              (*loc, "levels"))
    levels = []
    for index, level in enumerate(entry.levels):
        at = (*loc, "levels", index)
        try:
            settings = resolved.info.options.model_validate({**entry.options, option: level})
        except ValidationError as exc:
            first = exc.errors()[0]
            raise positions.error(f"level {level!r} of `{option}`: {first['msg']}", at) from None
        levels.append(entry.resolved(resolved.info, _absolute_paths(settings, at, positions,
                                                                     spec_folder)))
    return resolved.with_levels(levels)


def _resolve(component: EntryT, kind: str, loc: Loc, registry: Registry,
             positions: Positions, spec_folder: Path) -> EntryT:
    name = component.name.lower() if kind == "task" else component.name
    try:
        info = registry.get(kind, name)
    except HarnessError as exc:
        raise SpecError(str(exc), **positions.where(loc + ("name",))) from None
    try:
        settings = info.options.model_validate(component.options)
    except ValidationError as exc:
        # Options sit beside `name` in YAML: no `options` level in the path.
        raise_validation_error(exc, positions, prefix=loc, model=info.options)
    return component.resolved(info, _absolute_paths(settings, loc, positions, spec_folder))


def _absolute_paths(settings: Options, loc: Loc, positions: Positions,
                    spec_folder: Path) -> Options:
    """`settings` with its relative `Path` values made absolute (an option given with `--set`
    against the current directory, one in the file against the spec's folder)."""
    updates = {name: positions.base(loc + (name,), spec_folder) / value
               for name, value in settings
               if isinstance(value, Path) and not value.is_absolute()}
    return settings.model_copy(update=updates) if updates else settings


def _check_trained_for(component: Component, kind: str, loc: Loc, spec: Spec,
                       positions: Positions) -> None:
    """Only decoders take `encoders:`, only decoders and downstream tasks `seeds:`, and
    `encoders:` names encoders of the spec."""
    if kind not in ("decoder", "task") and "seeds" in component.model_fields_set:
        raise positions.error("only decoders and downstream tasks take `seeds:`",
                              (*loc, "seeds"))
    if kind != "encoder" and component.family is not None:
        raise positions.error("only encoders take `family:`", (*loc, "family"))
    if component.encoders is None:
        return
    loc = (*loc, "encoders")
    if kind != "decoder":
        raise positions.error("only decoders take `encoders:`", loc)
    known = [e.name for e in spec.components("encoder")]
    unknown = [name for name in component.encoders if name not in known]
    if unknown:
        raise positions.error(f"{', '.join(unknown)} not among the spec's encoders "
                              f"({', '.join(known)})", loc)


ONCE: dict[str, str] = {
    "defence": "the privacy analysis keys its points by defence name, so the two would be "
               "merged: keep one entry and list every level in its `levels:`",
    "analysis": "an analysis runs once per run and files its results under its name: keep one "
                "entry, with its options",
}
"""Why a defence or an analysis may appear once in a spec, and what to do instead."""


def _check_unique_names(spec: Spec, positions: Positions) -> None:
    """Each component may appear once per section: results, samples and ranks are keyed by
    name, so two entries of one name would overwrite each other; so may each defence."""
    for kind, section in SECTION_FOR_KIND.items():
        _check_once(kind, section, spec.components(kind), positions)


def _check_once(kind: str, section: Loc, entries: list[Any], positions: Positions) -> None:
    """Raise at the second entry of a name in `entries`, the spec's `section`."""
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        if entry.name in seen:
            why = ONCE.get(kind, "results are keyed by name: keep one entry, or compare option "
                                 "settings in two runs (`harness compare`)")
            raise positions.error(f"{kind} {entry.name!r} appears twice (also entry "
                                  f"{seen[entry.name]}); {why}", (*section, index, "name"))
        seen[entry.name] = index


def _check_curve_encoders(spec: Spec, positions: Positions) -> None:
    """`curve.encoders` names encoders of the spec."""
    if spec.curve.encoders is None:
        return
    known = [e.name for e in spec.components("encoder")]
    unknown = [name for name in spec.curve.encoders if name not in known]
    if unknown:
        raise positions.error(f"{', '.join(unknown)} not among the spec's encoders "
                              f"({', '.join(known)})", ("curve", "encoders"))
