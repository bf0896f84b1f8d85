"""What `harness list` shows: the registry as the documented JSON schema and as a text table.

Metric entries extend the schema with `needs`: what the metric is handed beyond the samples,
e.g. `["encoder"]` for one that re-encodes its outputs (`harness.protocols.
EncoderAwareMetric`); encoder entries with `control`: true for a control encoder (a reference
point kept out of correlations and rankings by default) and `pretrained`: true for one whose
model was trained elsewhere (it reads task text unnormalised); analysis entries with `section`,
the spec section the analysis reads (null for none), and `results`, the results.json fields it
declares (`harness.protocols.AnalysisParts`). All are read from the registration, so listing
builds nothing.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from harness.protocols import KINDS, ComponentInfo, plural
from harness.registry.components import Registry


def _entry(info: ComponentInfo) -> dict[str, Any]:
    """One component as `harness list --json` shows it."""
    entry = {"name": info.name, "plugin": info.plugin, "version": info.version,
             "description": info.description, "status": info.status()}
    if info.kind in ("metric", "analysis"):
        entry["needs"] = list(info.needs)
    if info.kind == "analysis":
        entry["section"] = info.parts.section or None
        entry["results"] = list(info.parts.results)
    if info.kind == "encoder":
        entry["control"] = info.control
        entry["pretrained"] = info.pretrained
    return entry


def listing(registry: Registry) -> dict[str, Any]:
    """Return {"encoders": [...], "decoders": [...], "metrics": [...], "tasks": [...],
    "analyses": [...], "executors": [...], "failed_plugins": [...]}."""
    data: dict[str, Any] = {}
    for kind in KINDS:
        data[plural(kind)] = [_entry(registry.components[kind][n]) for n in registry.names(kind)]
    data["failed_plugins"] = [{"name": f.name, "distribution": f.distribution,
                               "version": f.version, "error": f.error}
                              for f in registry.failures]
    return data


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def render_listing(data: dict[str, Any]) -> str:
    """Return the listing as text tables grouped by kind."""
    lines: list[str] = []
    for kind in KINDS:
        entries = data[plural(kind)]
        lines.append(f"{plural(kind).capitalize()} ({len(entries)})")
        if entries:
            # Metrics can need something beyond the samples (the encoder, say); analyses the
            # results of other analyses.
            needs = kind in ("metric", "analysis")
            section = kind == "analysis"  # the spec section it reads
            header = ["name", "plugin", "version", "status", *(["needs"] if needs else []),
                      *(["section"] if section else []), "description"]
            # Reasons are long: the table says "unavailable" and the reasons follow it.
            rows = [[e["name"], e["plugin"], e["version"], e["status"].split(":")[0],
                     *([", ".join(e["needs"]) or "-"] if needs else []),
                     *([e["section"] or "-"] if section else []), e["description"]]
                    for e in entries]
            lines += ["  " + line for line in _table([header, *rows])]
            lines += [f"  {e['name']}: {e['status']}" for e in entries if e["status"] != "ok"]
        else:
            lines.append("  (none)")
        lines.append("")
    failed = data["failed_plugins"]
    if failed:
        lines.append(f"Failed plugins ({len(failed)})")
        rows = [[f["name"], f"{f['distribution']} {f['version']}".strip(), f["error"]]
                for f in failed]
        lines += ["  " + line for line in _table([["name", "distribution", "error"], *rows])]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _type_name(annotation: Any) -> str:
    """A field's type as a user writes it: int, float, str, bool, one of: a, b; list of ..."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return "one of: " + ", ".join(str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        named = [_type_name(a) for a in args if a is not type(None)]
        return " or ".join(named) + (" or null" if type(None) in args else "")
    if origin in (list, tuple, set):
        return f"list of {_type_name(args[0])}" if args else "list"
    if origin is dict:
        return "mapping"
    return getattr(annotation, "__name__", str(annotation))


def _constraints(metadata: list[Any]) -> str:
    marks = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    return " ".join(f"{mark} {getattr(m, key)}" for m in metadata for key, mark in marks.items()
                    if getattr(m, key, None) is not None)


def component_options(registry: Registry, name: str) -> list[dict[str, Any]]:
    """Each component registered as `name` (one per kind) with its options: name, type (with
    constraints), default ("required" when there is none) and description. Raises
    `UnknownComponentError` with close names when no kind has `name`."""
    from harness.errors import UnknownComponentError, close_names

    found = [registry.components[kind][name] for kind in KINDS
             if name in registry.components[kind]]
    if not found:
        known = sorted({n for kind in KINDS for n in registry.components[kind]})
        raise UnknownComponentError("component", name, close_names(name, known), known)
    return [{"kind": info.kind, "name": info.name, "plugin": info.plugin,
             "version": info.version, "description": info.description,
             "options": [{"name": option,
                          "type": " ".join(filter(None, (_type_name(field.annotation),
                                                         _constraints(field.metadata)))),
                          "default": None if field.is_required() else field.get_default(
                              call_default_factory=True),
                          "required": field.is_required(),
                          "description": field.description or ""}
                         for option, field in info.options.model_fields.items()]}
            for info in found]


def render_options(entries: list[dict[str, Any]]) -> str:
    """`component_options` as text: a heading per component, a table of its options."""
    lines: list[str] = []
    for entry in entries:
        lines.append(f"{entry['kind']} {entry['name']!r} ({entry['plugin']} {entry['version']})"
                     f": {entry['description']}".replace(" )", ")"))
        if entry["options"]:
            rows = [[o["name"], o["type"], "required" if o["required"] else repr(o["default"]),
                     o["description"]] for o in entry["options"]]
            lines += ["  " + line for line in _table([["option", "type", "default",
                                                       "description"], *rows])]
        else:
            lines.append("  (no options)")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
