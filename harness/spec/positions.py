"""Where each field of a spec was written: YAML read with line numbers, and located errors.

Every `SpecError` about a field names the file and line it was written on, or `--set` when an
override wrote it (or wrote something under it), so the user knows what to edit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import yaml
from pydantic import BaseModel, ValidationError

from harness.errors import SpecError, close_names

Loc = tuple[Any, ...]
"""A field's path in the spec: keys and list indexes, e.g. ("decoders", 0, "hidden")."""


def dotted(loc: Sequence[Any]) -> str:
    """The path as the user writes it: `decoders.0.hidden`."""
    return ".".join(str(part) for part in loc) or "<top>"


@dataclass(frozen=True)
class Positions:
    """The spec file, the line of every field in it, and the paths `--set` overrides wrote."""

    file: str = "<spec>"
    lines: Mapping[Loc, int] = field(default_factory=dict)
    overridden: frozenset[Loc] = frozenset()

    def from_set(self, loc: Loc) -> bool:
        """True when an override wrote `loc`, something above it or something under it."""
        return any(loc[:len(o)] == o or (loc and o[:len(loc)] == loc) for o in self.overridden)

    def line(self, loc: Loc) -> int | None:
        """The line of `loc`, or of its nearest ancestor written in the file."""
        for end in range(len(loc), -1, -1):
            if loc[:end] in self.lines:
                return self.lines[loc[:end]]
        return None

    def where(self, loc: Loc) -> dict[str, Any]:
        """file, line and field of `loc`, as `SpecError` takes them."""
        if self.from_set(loc):
            return {"file": "--set", "line": None, "field": dotted(loc)}
        return {"file": self.file, "line": self.line(loc), "field": dotted(loc)}

    def error(self, message: str, loc: Loc) -> SpecError:
        """A `SpecError` about the field at `loc`."""
        return SpecError(message, **self.where(loc))

    def base(self, loc: Loc, spec_folder: Path) -> Path:
        """What a relative path at `loc` is relative to: the current directory for one given
        with `--set`, as a user typing it would expect, else the spec file's folder."""
        return Path.cwd() if self.from_set(loc) else spec_folder


def read_yaml(path: Path) -> tuple[Any, dict[Loc, int]]:
    """Return the spec file's data and the 1-based line of every field path in it."""
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError("spec file not found", file=file) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read spec: {exc}", file=file) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or exc.context or "syntax error"
        if exc.problem and exc.context:  # "while parsing a flow sequence at line 3: expected ..."
            start = exc.context_mark
            problem = (exc.context + (f" at line {start.line + 1}" if start else "")
                       + f": {exc.problem}")
        column = f" at column {mark.column + 1}" if mark else ""
        raise SpecError(f"malformed YAML{column}: {problem}", file=file, line=line) from None
    except yaml.YAMLError as exc:
        raise SpecError(f"malformed YAML: {exc}", file=file) from None
    if node is None or not isinstance(data, dict):
        raise SpecError("a spec must be a YAML mapping (name:, corpus:, encoders:, ...)",
                        file=file, line=1)
    return data, _line_map(node, file)


def _line_map(node: yaml.Node, file: str, loc: Loc = (), lines: dict[Loc, int] | None = None
              ) -> dict[Loc, int]:
    """Map every field path in the YAML tree to its 1-based line; refuse duplicate keys."""
    lines = {} if lines is None else lines
    lines.setdefault(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[Any] = set()
        for key_node, value_node in node.value:
            key = key_node.value
            path = loc + (key,)
            if key in seen:
                raise SpecError(f"duplicate key {key!r}", file=file,
                                line=key_node.start_mark.line + 1, field=dotted(path))
            seen.add(key)
            lines[path] = key_node.start_mark.line + 1
            _line_map(value_node, file, path, lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[loc + (index,)] = item.start_mark.line + 1
            _line_map(item, file, loc + (index,), lines)
    return lines


# ---------------------------------------------------------------------- validation errors


def raise_validation_error(exc: ValidationError, positions: Positions, *, prefix: Loc,
                           model: type[BaseModel]) -> NoReturn:
    """Raise the first (by line) of pydantic's errors as a located `SpecError`.

    `prefix` is where the validated value sits in the spec (a component entry's options sit
    beside its `name`, so the `options` level is not part of the path); `model` is the class
    validated, to list the keys it knows when a key is unknown.
    """
    errors = exc.errors()
    # `encoders: [..]` fails both union members; the `literal['all']` complaint is noise.
    errors = [e for e in errors if not (e["type"] == "literal_error" and any(
        _is_union_tag(p) for p in e["loc"]))] or errors
    located = []
    for error in errors:
        error["loc"] = tuple(p for p in error["loc"] if not _is_union_tag(p))
        loc = prefix + error["loc"]
        located.append((positions.line(loc) or 0, loc, error))
    located.sort(key=lambda item: item[0])
    _, loc, error = located[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    owner = _model_at(model, tuple(error["loc"])) if error["type"] == "extra_forbidden" else None
    raise positions.error(_describe(error, owner) + more, loc)


def unknown_key(key: str, known: list[str], sections: dict[str, str] | None = None) -> str:
    """What an unknown `key` gets told: the closest of the `known` keys and of `sections`
    (section -> the analysis that reads it), then all of them."""
    close = close_names(key, [*known, *(sections or {})], n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    theirs = ", ".join(f"{name} (analysis {owner})" for name, owner in (sections or {}).items())
    return (f"unknown key; {hint}expected one of: {', '.join(known)}"
            + (f", or a section an installed analysis reads: {theirs}" if theirs else ""))


def _describe(error: Any, model: type[BaseModel] | None = None) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        if model is None:
            return "unknown key"
        if not model.model_fields:
            return "unknown key; this takes no options"
        return unknown_key(str(error["loc"][-1]) if error["loc"] else "", list(model.model_fields))
    if kind == "missing":
        return "required field is missing"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"expected a mapping of settings (got {error.get('input')!r})"
    message = str(error["msg"]).removeprefix("Value error, ")
    value = error.get("input")
    if kind not in ("value_error",) and not isinstance(value, (dict, list)):
        message += f" (got {value!r})"
    return message


def _is_union_tag(part: Any) -> bool:
    """Pydantic names union members in error paths (`list[Component]`, `literal['all']`)."""
    return isinstance(part, str) and "[" in part


def _model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """The pydantic model that owns the last key of `loc`, to list its valid keys."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field_info = current.model_fields.get(part)
        if field_info is None:
            return None
        annotation = field_info.annotation
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        nested = [c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)]
        for c in candidates:
            nested += [a for a in getattr(c, "__args__", ())
                       if isinstance(a, type) and issubclass(a, BaseModel)]
        current = nested[0] if nested else None
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None
