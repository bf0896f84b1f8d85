"""`load_spec`: a spec file -> a validated, resolved `Spec` (or `TableSpec`), or a `SpecError`
naming file:line and field.

Reading (`positions`), `--set` overrides (`overrides`), validation (`schema`) and resolution
(`resolve`) each have a module; this one runs them in order. Nothing here builds a component or
looks at the machine: `harness.spec.preflight` does, when a command is about to run the spec.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.errors import SpecError
from harness.registry.components import Registry
from harness.registry.parts import GatheredParts, gathered_parts, installed_parts
from harness.results.comparison import moved_to_comparison
from harness.spec.overrides import apply_overrides
from harness.spec.positions import Loc, Positions, raise_validation_error, read_yaml, unknown_key
from harness.spec.resolve import (
    check_sizes,
    resolve_components,
    resolve_paths,
    resolve_reference,
    resolve_section_components,
)
from harness.spec.schema import Spec, TableSpec

log = logging.getLogger("harness.spec")


def _comparison_moved(data: dict[str, Any], positions: Positions) -> dict[str, Any]:
    """`data` with the comparison settings an older spec gives under `correlation:` read as
    `comparison:`'s, each with a deprecation warning naming its file and line; refused when
    both sections give one."""
    moved_data, moved = moved_to_comparison(data)
    given = data.get("comparison") if isinstance(data.get("comparison"), dict) else {}
    for key in moved:
        where = ("correlation", key)
        if key in given:
            raise SpecError(f"correlation.{key} and comparison.{key} are both given: keep "
                            f"comparison.{key} and remove correlation.{key}",
                            file=positions.file, line=positions.line(where))
        log.warning("%s:%s: correlation.%s is deprecated: write it under `comparison:` (read "
                    "as comparison.%s)", positions.file, positions.line(where) or "?", key, key)
    return moved_data


def _defences_moved(data: dict[str, Any], positions: Positions
                    ) -> tuple[dict[str, Any], Positions]:
    """`data` with an older spec's top-level `defences:` read as `privacy.defences` (the
    privacy analysis's section), with a deprecation warning naming its file and line, and
    `positions` locating the moved entries where the file wrote them; refused when both are
    given."""
    if "defences" not in data:
        return data, positions
    privacy = data.get("privacy")
    privacy = dict(privacy) if isinstance(privacy, dict) else {}
    if "defences" in privacy:
        raise SpecError("defences: and privacy.defences are both given: keep privacy.defences "
                        "and remove the top-level defences:", file=positions.file,
                        line=positions.line(("defences",)))
    log.warning("%s:%s: the top-level `defences:` is deprecated: write it under `privacy:` as "
                "`privacy.defences` (read as that)", positions.file,
                positions.line(("defences",)) or "?")
    privacy["defences"] = data["defences"]
    moved = {key: value for key, value in data.items() if key != "defences"}
    moved["privacy"] = privacy

    def under(loc: Loc) -> Loc:
        return ("privacy", *loc) if loc[:1] == ("defences",) else loc

    return moved, replace(positions, lines={**positions.lines, **{
        under(loc): line for loc, line in positions.lines.items() if loc[:1] == ("defences",)}},
        overridden=frozenset(under(loc) for loc in positions.overridden)
        | positions.overridden)


def without_secrets(data: dict[str, Any]) -> dict[str, Any]:
    """`data` without the `seed` of each defence (`privacy.defences`, or an older spec's
    `defences:`): the secret of the defence's noise (docs/privacy.md) stays out of the spec's
    hash, which provenance reports (a hash of a short seed and of a spec otherwise reported
    would give the seed away by trying them)."""
    def unseeded(defences: Any) -> Any:
        if not isinstance(defences, list):
            return defences
        return [{k: v for k, v in entry.items() if k != "seed"} if isinstance(entry, dict)
                else entry for entry in defences]

    found = dict(data)
    if "defences" in found:
        found["defences"] = unseeded(found["defences"])
    privacy = found.get("privacy")
    if isinstance(privacy, dict) and "defences" in privacy:
        found["privacy"] = {**privacy, "defences": unseeded(privacy["defences"])}
    return found


def load_spec(path: Path | str, overrides: Sequence[str] = (), registry: Registry | None = None
              ) -> Spec | TableSpec:
    """Read, override, validate and resolve a spec file; raise `SpecError` on any problem.

    A spec with `diagnostics:` is a `TableSpec` (correlate published tables); any other is a
    `Spec` (train and evaluate decoders), whose components are resolved against `registry`
    when one is given. The analyses' sections are those the analyses of `registry` declare
    (of the installed plugins without one), validated by each analysis's settings class and
    resolved by its `resolve` part; its `check` part runs once the components are resolved.
    Relative paths are resolved against the spec file's folder, or the current directory for
    paths given with `--set`.
    """
    path = Path(path)
    data, lines = read_yaml(path)
    if "scores" in data and "name" not in data:
        raise SpecError("this is a table of published scores (`scores:`), not a spec; a spec "
                        "names it, e.g. `downstream: {reference: FILE}` or "
                        "`diagnostics: {reference: FILE}`", file=str(path),
                        line=lines.get(("scores",)))
    positions = Positions(str(path), lines, frozenset(apply_overrides(data, overrides)))
    model: type[Spec] | type[TableSpec] = TableSpec if "diagnostics" in data else Spec
    parts = gathered_parts(registry) if registry is not None else installed_parts()
    hashed = json.dumps(without_secrets(data), sort_keys=True, default=str)  # after overrides
    data = _comparison_moved(data, positions)
    data, positions = _defences_moved(data, positions)
    _refuse_unknown_sections(data, model, parts, positions)
    given = {key: data.pop(key) for key in list(data) if key in parts.sections}
    try:
        spec = model.model_validate(data)
    except ValidationError as exc:
        raise_validation_error(exc, positions, prefix=(), model=model)
    spec = spec.with_sections(_sections(given, parts, positions),
                              by=tuple(info for info, part in parts.parts if part.tables))
    folder = path.resolve().parent
    spec = resolve_paths(spec, positions, folder)
    if isinstance(spec, Spec):
        spec = resolve_reference(spec, positions, folder)
    if isinstance(spec, Spec):
        for _, part in parts.parts:
            if part.resolve is not None:
                spec = part.resolve_part()(spec, positions, folder)
    if registry is not None and isinstance(spec, Spec):
        spec = resolve_components(spec, registry, positions, folder)
        spec = resolve_section_components(
            spec, {part.section: part.components for _, part in parts.parts if part.components},
            registry, positions, folder)
        check_sizes(spec, positions)
        assert spec.analyses != "all"  # resolved with the components
        for entry in spec.analyses:
            check = entry.info.parts.check_part()
            if check is not None:
                check(spec, positions)
    sha256 = hashlib.sha256(hashed.encode()).hexdigest()
    return spec.located(positions, sha256, json.loads(hashed))


def _refuse_unknown_sections(data: dict[str, Any], model: type[Spec] | type[TableSpec],
                             parts: GatheredParts, positions: Positions) -> None:
    """Refuse a top-level key neither the core nor an installed analysis reads, naming both
    kinds of section."""
    known = set(model.model_fields) | set(parts.sections)
    for key in data:
        if key not in known:
            sections = {name: info.name for name, (info, _) in sorted(parts.sections.items())}
            raise positions.error(unknown_key(key, list(model.model_fields), sections), (key,))


def _sections(given: dict[str, Any], parts: GatheredParts, positions: Positions) -> dict[str, Any]:
    """Every declared section validated by its analysis's settings class: the file's, or the
    class's defaults where the file gives none."""
    sections = {}
    for key, (_, settings) in parts.sections.items():
        try:
            value = given.get(key)
            sections[key] = settings.model_validate({} if value is None else value)
        except ValidationError as exc:
            raise_validation_error(exc, positions, prefix=(key,), model=settings)
    return sections
