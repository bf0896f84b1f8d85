"""Whether the primary test was registered before the run: the commit at which the spec file's
`correlation.primary` was last changed, and whether the run's spec is the spec as committed
there.

A spec that declares `correlation.primary` registers its test by committing the spec file
before the run (docs/metrics.md, "Registering the primary test"). At run time the spec file's
git history is read: the registration is the oldest of the latest commits whose
`correlation.primary` is the file's latest committed one (the commit that last changed it).
The run's spec, as read with its overrides, is then compared with the file as committed there,
field by field; every difference (an encoder added, a training size changed, a `--set`, an
uncommitted edit) is a deviation from the registration and is named. The sections that decide
no number (`report`, `executor`, `device`) are not compared.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from harness.analyses.correlation.results import Registration
from harness.results.provenance import git
from harness.results.signature import flatten
from harness.spec.load import without_secrets

IGNORED = ("report", "executor", "device")
"""Top-level sections a registration does not compare: they decide no number."""


def changed_fields(run: Mapping[str, Any], registered: Mapping[str, Any]) -> list[str]:
    """The dotted fields in which `run` differs from `registered` (lists compared whole),
    leaving out the `IGNORED` sections and the defences' secret seeds."""
    def flat(data: Mapping[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in flatten(without_secrets(dict(data)))
                if key.split(".")[0] not in IGNORED}

    ours, theirs = flat(run), flat(registered)
    return sorted(key for key in set(ours) | set(theirs) if ours.get(key) != theirs.get(key))


def _primary(data: Any) -> Any:
    correlation = data.get("correlation") if isinstance(data, Mapping) else None
    return correlation.get("primary") if isinstance(correlation, Mapping) else None


def registration(source: str, document: Mapping[str, Any]) -> Registration | None:
    """The registration of the spec read from `source` as `document` (its data after
    overrides); None when the spec declares no `correlation.primary`."""
    if _primary(document) is None:
        return None
    path = Path(source).resolve()
    top = git(["rev-parse", "--show-toplevel"], path.parent)
    if top is None:
        return Registration(file=path.name, why="the spec file is not in a git checkout")
    root = Path(top).resolve()
    relative = path.relative_to(root).as_posix()
    log = git(["log", "--format=%H %cI", "--", relative], root) or ""
    history = [line.split(" ", 1) for line in log.splitlines() if line.strip()]
    if not history:
        return Registration(file=relative, why="the spec file was never committed")
    versions = []
    for commit, date in history:  # newest first
        text = git(["show", f"{commit}:{relative}"], root)
        data = yaml.safe_load(text) if text else None
        # as the spec's document is kept: JSON's values (`harness.spec.load`)
        data = json.loads(json.dumps(data, default=str)) if isinstance(data, Mapping) else {}
        versions.append((commit, date, data))
    latest = _primary(versions[0][2])
    if latest is None:
        return Registration(file=relative, changed=changed_fields(document, versions[0][2]),
                            why="the committed spec file declares no correlation.primary")
    registered = versions[0]
    for version in versions[1:]:
        if _primary(version[2]) != latest:
            break
        registered = version
    commit, date, data = registered
    changed = changed_fields(document, data)
    return Registration(file=relative, commit=commit, date=date, equal=not changed,
                        changed=changed)
