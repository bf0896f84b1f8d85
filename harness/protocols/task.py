"""The contract of downstream tasks (SentEval's and any plugin's): what a task reads, what it
returns, and the encoding function the core hands it.

Import these names from `harness.protocols`. On the ground floor: imports nothing from the rest
of the harness, and nothing heavy (numpy appears in annotations only).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

Encode = Callable[[list[str]], "np.ndarray"]
"""Sentences -> float array (len(sentences), dim); given to `evaluate` by the core."""


@dataclass(frozen=True)
class Examples:
    """One split of a task: sentences (or sentence pairs) and their labels.

    `first` holds the sentences, `second` the other side of each pair (None for single-sentence
    tasks). `labels` holds class ids (int64) for classification and gold scores (float64) for
    relatedness/similarity.
    """

    first: tuple[str, ...]
    labels: np.ndarray
    second: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.first)


@dataclass(frozen=True)
class TaskData:
    """A task's splits as read from disk.

    Split names are the task's own (`all`, `train`/`dev`/`test`, one per subset, ...).
    `classes` names the class ids of a classification task; `files` are the files read, in
    reading order.
    """

    name: str
    splits: Mapping[str, Examples]
    files: tuple[Path, ...] = ()
    classes: tuple[str, ...] = ()

    def sizes(self) -> dict[str, int]:
        """Return split name -> number of examples."""
        return {split: len(examples) for split, examples in self.splits.items()}


@dataclass(frozen=True)
class TaskResult:
    """The outcome of one task for one encoder.

    `score` is the task's headline number (`metric` names it); `scores` holds every sub-score
    (dev accuracy, F1, Spearman, per-subset correlations, ...). `columns` are the values under the
    names reference tables use (e.g. `{"MRPC": 73.2, "MRPC-F1": 81.0}`).
    """

    task: str
    metric: str
    score: float
    scores: Mapping[str, float]
    n_train: int
    n_dev: int
    n_test: int
    config: str
    seed: int
    columns: Mapping[str, float] = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """Return the result as JSON-ready data (the cache and results.json store this)."""
        return {"task": self.task, "metric": self.metric, "score": self.score,
                "scores": dict(self.scores), "n_train": self.n_train, "n_dev": self.n_dev,
                "n_test": self.n_test, "config": self.config, "seed": self.seed,
                "columns": dict(self.columns), "seconds": self.seconds}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TaskResult:
        """Return the result `to_json` wrote."""
        return cls(task=str(data["task"]), metric=str(data["metric"]), score=float(data["score"]),
                   scores={str(k): float(v) for k, v in data["scores"].items()},
                   n_train=int(data["n_train"]), n_dev=int(data["n_dev"]),
                   n_test=int(data["n_test"]), config=str(data["config"]), seed=int(data["seed"]),
                   columns={str(k): float(v) for k, v in data.get("columns", {}).items()},
                   seconds=float(data.get("seconds", 0.0)))


@runtime_checkable
class DownstreamTask(Protocol):
    """A downstream evaluation: what a `register_tasks` factory returns.

    `name` is the task as reference tables spell it (`MR`, `SICK-R`, `STS14`); `version` changes
    whenever loading or evaluation changes the result (it is part of cache keys).
    `files(data_dir)` lists the files `load` reads, so the core can digest them for its cache key
    and check them before a run without loading. `evaluate` is handed an `encode` callable
    (sentences -> vectors, batched and checked by the core), so a task never sees the encoder, and
    must be deterministic given `seed`. Optional parts: `GeneratedTask`, `CombinedColumns`.
    """

    name: str
    version: str

    def files(self, data_dir: Path) -> list[Path]:
        """Return the data files this task reads under `data_dir`."""

    def load(self, data_dir: Path) -> TaskData:
        """Read the task's splits; raise `harness.errors.DataError` naming the file on a problem."""

    def evaluate(self, encode: Encode, data_dir: Path, *, config: str = "prototyping",
                 seed: int = 1111, device: str = "cpu") -> TaskResult:
        """Encode the task's sentences with `encode`, train/evaluate, and return the result."""


@runtime_checkable
class GeneratedTask(DownstreamTask, Protocol):
    """Optional for a task: one whose data the harness generates itself (no `data_dir`).

    The core calls `generate(directory)` on a cache directory named after `data_key()` before
    `evaluate(..., directory)`; `generate` is idempotent and writes atomically.
    """

    def data_key(self) -> str:
        """Return what determines the generated files (generator versions, seed, sizes)."""

    def generate(self, directory: Path) -> None:
        """Write the task's data into `directory` unless it is already complete."""


@runtime_checkable
class CombinedColumns(Protocol):
    """Optional for a task: table columns that combine several tasks' results, such as
    SentEval's STS12-16 mean (one STS column in Vec2Sent's Table 5).

    The downstream analysis asks every task of the spec, with one encoder's results by task
    name, and adds the columns it returns to that encoder's row; a task returns none unless
    every result it combines is there."""

    def combined_columns(self, results: Mapping[str, TaskResult]) -> dict[str, float]:
        """Column -> value combined from `results` (task name -> result); empty when a result
        it needs is missing."""
