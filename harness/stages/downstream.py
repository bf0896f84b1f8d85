"""Stage 8: downstream (SentEval) scores per encoder, from a reference table.

A reference table is YAML: `source:` (citation), `tasks:` (names, in order) and `scores:`
(encoder name -> task -> score). Encoders the table lacks get no scores: they are listed as
missing, never filled in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.errors import DataError


@dataclass(frozen=True)
class Downstream:
    """Downstream scores of the run's encoders and which encoders have none."""

    source: str
    tasks: list[str]
    scores: dict[str, dict[str, float]]
    missing: list[str] = field(default_factory=list)


def read_reference_table(path: Path) -> tuple[str, list[str], dict[str, dict[str, float]]]:
    """Return (citation, tasks, encoder -> task -> score) from a reference table file."""
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DataError(f"{path}: cannot read reference table: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("scores"), dict):
        raise DataError(f"{path}: a reference table needs `scores:` "
                        "(encoder -> task -> score)")
    tasks = data.get("tasks") or sorted({t for row in data["scores"].values() for t in row})
    scores: dict[str, dict[str, float]] = {}
    for encoder, row in data["scores"].items():
        if not isinstance(row, dict):
            raise DataError(f"{path}: scores.{encoder}: expected a mapping task -> score")
        for task, value in row.items():
            if task not in tasks:
                raise DataError(f"{path}: scores.{encoder}.{task}: task not in `tasks:`")
            if value is None:
                continue
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise DataError(f"{path}: scores.{encoder}.{task}: expected a number, "
                                f"got {value!r}")
            scores.setdefault(str(encoder), {})[str(task)] = float(value)
    return str(data.get("source", path.name)), [str(t) for t in tasks], scores


def downstream_scores(reference: Path | None, encoders: list[str]) -> Downstream:
    """Return the downstream scores of `encoders` and the ones that have none."""
    if reference is None:
        return Downstream(source="", tasks=[], scores={}, missing=list(encoders))
    source, tasks, table = read_reference_table(reference)
    scores = {name: table[name] for name in encoders if table.get(name)}
    missing = [name for name in encoders if name not in scores]
    return Downstream(source=source, tasks=tasks, scores=scores, missing=missing)
