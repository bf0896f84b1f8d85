"""The JSONL training log: one record per logging interval and per epoch, kept in step with the
checkpoint training resumes from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.training.checkpoint import write_text_atomic


class TrainingLog:
    """Appends records to a JSONL file; `rewind` drops records past a resumed step."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def rewind(self, steps: int) -> None:
        """Keep only the records of steps <= `steps` (all of them are redone after a resume)."""
        kept = []
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    break  # a line cut by a kill: nothing after it was written
                if record.get("step", 0) <= steps:
                    kept.append(line + "\n")
        write_text_atomic(self.path, "".join(kept))

    def write(self, record: dict[str, Any]) -> None:
        """Append one record."""
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def records(self) -> list[dict[str, Any]]:
        """Return every record written so far."""
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines()]


class DiscardedLog(TrainingLog):
    """The log of a training process that writes none (ranks other than 0 of a data-parallel
    run, `harness.training.distributed`): records are dropped, the file is left alone."""

    def rewind(self, steps: int) -> None:
        """Leave the file to the process that writes it."""

    def write(self, record: dict[str, Any]) -> None:
        """Drop the record."""
