"""`check_task`: what the core's downstream stage relies on a `DownstreamTask` for.

A task author calls it from their tests with a small data directory in their task's layout:

    check_task(MyTask(), tmp_path / "data")

`hashed_bag_of_words` is the deterministic toy encoder it evaluates with by default.
"""

from __future__ import annotations

import math
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from harness.protocols import DownstreamTask, Encode, GeneratedTask, TaskData, TaskResult
from harness.testing.failures import fail


def hashed_bag_of_words(dim: int = 32) -> Encode:
    """Return a deterministic toy encoder: mean of fixed random vectors of hashed tokens."""
    table = np.random.default_rng(0).standard_normal((4096, dim)).astype(np.float32)

    def encode(sentences: list[str]) -> np.ndarray:
        out = np.zeros((len(sentences), dim), dtype=np.float32)
        for row, sentence in enumerate(sentences):
            ids = [zlib.crc32(token.encode()) % len(table) for token in sentence.lower().split()]
            if ids:
                out[row] = table[ids].mean(axis=0)
        return out

    return encode


def check_task(task: Any, data_dir: Path, encode: Encode | None = None, *,
               config: str = "prototyping") -> TaskResult:
    """Check that `task` behaves as the core expects on `data_dir`; return its result.

    Checks: the protocol; `files` lists existing files; `load` returns non-empty splits;
    `evaluate` returns a `TaskResult` named like the task with a finite score, `columns` and
    sizes; the same seed gives the same result. A `GeneratedTask` first generates `data_dir`.
    """
    if not isinstance(task, DownstreamTask):
        raise fail(f"{type(task).__name__} is not a DownstreamTask",
                   "give it `name`, `version`, `files`, `load` and `evaluate`")
    if not task.name or not task.version:
        raise fail(f"task {task!r} has an empty name or version", "set both")
    if isinstance(task, GeneratedTask):
        task.generate(data_dir)
        if not task.data_key():
            raise fail(f"task {task.name}: empty data_key()", "return what determines the data")
    missing = [path for path in task.files(data_dir) if not Path(path).is_file()]
    if missing:
        raise fail(f"task {task.name}: files() lists missing files {missing}",
                   "list exactly the files load() reads")
    data = task.load(data_dir)
    if not isinstance(data, TaskData) or not data.splits:
        raise fail(f"task {task.name}: load() returned {type(data).__name__} without splits",
                   "return a TaskData with at least one split")
    if any(len(examples) == 0 for examples in data.splits.values()):
        raise fail(f"task {task.name}: an empty split in {data.sizes()}", "drop empty splits")
    encode = encode or hashed_bag_of_words()
    first = task.evaluate(encode, data_dir, config=config, seed=7)
    if not isinstance(first, TaskResult):
        raise fail(f"task {task.name}: evaluate() returned {type(first).__name__}",
                   "return a harness.protocols.TaskResult")
    if first.task != task.name:
        raise fail(f"task {task.name}: result named {first.task!r}", "use the task's name")
    if not math.isfinite(first.score) or first.metric not in first.scores:
        raise fail(f"task {task.name}: score {first.score} / metric {first.metric!r} not in "
                   "scores", "report a finite headline score and include it in `scores`")
    if not first.columns or min(first.n_train, first.n_dev, first.n_test) < 0:
        raise fail(f"task {task.name}: no columns or negative sizes", "fill both")
    again = task.evaluate(encode, data_dir, config=config, seed=7)
    if again.scores != first.scores:
        raise fail(f"task {task.name}: two evaluations with seed 7 differ",
                   "seed every random choice from `seed`")
    return first
