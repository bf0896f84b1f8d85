"""What `harness list` shows: the registry as the documented JSON schema and as a text table."""

from __future__ import annotations

from typing import Any

from harness.protocols import KINDS
from harness.registry import Registry


def listing(registry: Registry) -> dict[str, Any]:
    """Return {"encoders": [...], "decoders": [...], "metrics": [...], "failed_plugins": [...]}."""
    data: dict[str, Any] = {}
    for kind in KINDS:
        data[kind + "s"] = [
            {"name": info.name, "plugin": info.plugin, "version": info.version,
             "description": info.description, "status": info.status()}
            for info in (registry.components[kind][n] for n in registry.names(kind))]
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
        entries = data[kind + "s"]
        lines.append(f"{kind.capitalize()}s ({len(entries)})")
        if entries:
            header = ["name", "plugin", "version", "status", "description"]
            # Reasons are long: the table says "unavailable" and the reasons follow it.
            rows = [[e["name"], e["plugin"], e["version"], e["status"].split(":")[0],
                     e["description"]] for e in entries]
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
