"""Sentence vectors on disk: `.npy` files written incrementally and read memory-mapped; and
the row-wise cosine of two sets of them.

At the paper's scale the training vectors are 1.4M x up to 4,800 floats (27 GB in float32), so
they are never held in RAM: the encoder writes batch after batch into a memory-mapped file, and
the trainer reads the rows of each batch.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from tqdm.auto import tqdm

from harness.errors import HarnessError, PluginError


def check_vectors(vectors: object, count: int, dim: int, plugin: str, *,
                  what: str = "encode", unit: str = "batch") -> np.ndarray:
    """Return the encoder output as an array, or raise naming the plugin when it is malformed.
    `what` names the call that returned it (a defence's: which defence, at which level, on
    which encoder's vectors), `unit` what its rows are (a batch, a defence's block)."""
    array = np.asarray(vectors)
    if array.ndim != 2 or array.shape != (count, dim):
        raise PluginError(plugin, f"{what} returned shape {array.shape}, expected "
                                  f"({count}, {dim})")
    if not np.issubdtype(array.dtype, np.floating):
        raise PluginError(plugin, f"{what} returned dtype {array.dtype}, expected floats")
    if not np.isfinite(array).all():
        bad = int(np.flatnonzero(~np.isfinite(array).all(axis=1))[0])
        raise PluginError(plugin, f"{what} returned a non-finite value (row {bad} of the "
                                  f"{unit})")
    return array


@dataclass(frozen=True)
class Shard:
    """Rows `start` to `stop` (exclusive) of a vector file, encoded by one worker."""

    start: int
    stop: int

    def __len__(self) -> int:
        return self.stop - self.start


def plan_shards(rows: int, shards: int, batch_size: int) -> list[Shard]:
    """Return `rows` cut into at most `shards` contiguous shards of whole batches.

    Every boundary is a multiple of `batch_size`, so each shard encodes exactly the batches one
    process would (an encoder whose output depends on what else is in the batch, through
    padding, gives the same rows), and the shards differ by at most one batch.
    """
    batches = -(-rows // batch_size)
    count = max(1, min(shards, batches))
    bounds = [min(rows, (batches * k // count) * batch_size) for k in range(count + 1)]
    return [Shard(a, b) for a, b in zip(bounds, bounds[1:])]


def progress_path(path: Path, shard: Shard, rows: int) -> Path:
    """Where the progress of `shard` of the vector file `path` is recorded: `NAME.progress.json`
    for a shard of all `rows`, `NAME.START-STOP.progress.json` for a part."""
    whole = shard.start == 0 and shard.stop == rows
    return path.with_suffix(".progress.json" if whole else
                            f".{shard.start}-{shard.stop}.progress.json")


def create_vector_file(path: Path, rows: int, *, dim: int, dtype: str = "float32",
                       shards: int = 1, batch_size: int = 256) -> list[Shard]:
    """Return the shards of the `.npy` array `path` of `rows` x `dim`, creating the file unless
    a resumable one of that shape exists.

    The plan is recorded beside the array (`NAME.shards.json`), so a rerun resumes the same
    shards whatever its own shard count; a file without a plan of that shape and batch size is
    created anew at its full size (header written once) and its old progress discarded.
    """
    manifest = path.with_suffix(".shards.json")
    # The batch size too: shards are whole batches, and an encoder's rows may depend on what
    # else is in their batch (padding).
    shape = {"rows": rows, "dim": dim, "dtype": str(np.dtype(dtype)), "batch_size": batch_size}
    if path.exists() and manifest.exists():
        recorded = json.loads(manifest.read_text())
        if {key: recorded.get(key) for key in shape} == shape:
            return [Shard(a, b) for a, b in recorded["shards"]]
    for stale in [*path.parent.glob(f"{path.stem}.*progress.json"),
                  *path.parent.glob(f"{path.stem}.*.claimed")]:
        stale.unlink()
    plan = plan_shards(rows, shards, batch_size)
    np.lib.format.open_memmap(path, mode="w+", dtype=np.dtype(dtype), shape=(rows, dim)).flush()
    _write_json(manifest, {**shape, "shards": [[s.start, s.stop] for s in plan]})
    return plan


def shard_done(path: Path, shard: Shard, rows: int) -> int:
    """Return how many rows of `shard` the file `path` holds (its recorded progress)."""
    progress = progress_path(path, shard, rows)
    if not progress.exists():
        return 0
    state = json.loads(progress.read_text())
    return int(state["done"]) if state.get("rows") == rows else 0


def claim_shard(path: Path, shard: Shard) -> None:
    """Note that a process has started on `shard` of `path` (`shard_claimed`)."""
    _claim(path, shard).touch()


def shard_claimed(path: Path, shard: Shard) -> bool:
    """Whether a process started on `shard` since `unclaim_shard`: a shard no process has
    claimed can be taken over without two processes writing it."""
    return _claim(path, shard).exists()


def unclaim_shard(path: Path, shard: Shard) -> None:
    """Forget a claim on `shard` (by a process of an earlier attempt)."""
    _claim(path, shard).unlink(missing_ok=True)


def _claim(path: Path, shard: Shard) -> Path:
    return path.with_suffix(f".{shard.start}-{shard.stop}.claimed")


def finish_vector_file(path: Path, plan: Sequence[Shard], rows: int) -> None:
    """Check every shard of `path` is written, then remove the plan, the progress files and
    the claims."""
    unfinished = [s for s in plan if shard_done(path, s, rows) < len(s)]
    if unfinished:
        first = unfinished[0]
        raise HarnessError(f"{path}: rows {first.start}-{first.stop} were not written; run "
                           "again to encode them (the rows written are kept)")
    for shard in plan:
        progress_path(path, shard, rows).unlink(missing_ok=True)
        unclaim_shard(path, shard)
    path.with_suffix(".shards.json").unlink(missing_ok=True)


def write_shard(path: Path, sentences: Sequence[Any], shard: Shard, encode: Callable[..., Any],
                *, dim: int, plugin: str, batch_size: int = 256, label: str = "encode",
                with_start: bool = False) -> None:
    """Encode rows `shard.start` to `shard.stop` of `sentences` into the vector file `path`
    (made by `create_vector_file`), batch by batch, resuming after its last written batch.

    `encode(batch)` returns the batch's vectors; with `with_start`, `encode(batch, start)` is
    also told the row of batch[0] in `sentences` (a positional encoder's vectors follow it,
    `harness.protocols.PositionalEncoder`), the same after a resume.

    Rows are written with file writes, not through a memory map, so the process's resident
    memory does not grow with the file (the pages of a map stay in its RSS while it is open).
    Progress is recorded after each batch reaches the disk; several processes may write
    disjoint shards of one file at once.
    """
    rows = len(sentences)
    progress = progress_path(path, shard, rows)
    done = shard_done(path, shard, rows)
    header = np.load(path, mmap_mode="r")
    offset, stored_dtype = header.offset, header.dtype
    del header
    row_bytes = dim * stored_dtype.itemsize
    with open(path, "r+b") as handle, tqdm(total=len(shard), initial=done, desc=label,
                                           unit="sent", leave=False, disable=None) as bar:
        for start in range(shard.start + done, shard.stop, batch_size):
            batch = sentences[start:min(start + batch_size, shard.stop)]
            output = encode(batch, start) if with_start else encode(batch)
            stored = _storable(check_vectors(output, len(batch), dim, plugin), stored_dtype,
                               plugin)
            write_rows(handle, offset + start * row_bytes, stored)
            _write_json(progress, {"rows": rows, "dim": dim,
                                   "done": start + len(batch) - shard.start})
            bar.update(len(batch))


def write_vectors(path: Path, sentences: Sequence[Any], encode: Callable[..., Any],
                  *, dim: int, plugin: str, batch_size: int = 256, dtype: str = "float32",
                  label: str = "encode", with_start: bool = False) -> None:
    """Encode `sentences` batch by batch into the `.npy` array `path` in this process
    (resumable: a rerun continues from the first unwritten row; see `write_shard`)."""
    plan = create_vector_file(path, len(sentences), dim=dim, dtype=dtype, batch_size=batch_size)
    for shard in plan:
        write_shard(path, sentences, shard, encode, dim=dim, plugin=plugin,
                    batch_size=batch_size, label=label, with_start=with_start)
    finish_vector_file(path, plan, len(sentences))


def _storable(vectors: np.ndarray, dtype: np.dtype, plugin: str) -> np.ndarray:
    """`vectors` as `dtype`, or a PluginError when a value does not fit (float16 overflows
    above 65504)."""
    with np.errstate(over="ignore"):  # reported below, naming the plugin
        stored = np.ascontiguousarray(vectors, dtype=dtype)
    if not np.isfinite(stored).all():
        row = int(np.flatnonzero(~np.isfinite(stored).all(axis=1))[0])
        raise PluginError(plugin, f"encode returned a value (row {row} of the batch, "
                                  f"largest magnitude {float(np.abs(vectors).max()):g}) "
                                  f"that {dtype} cannot hold; use "
                                  "`encode: {dtype: float32}`")
    return stored


def _write_json(path: Path, value: dict[str, Any]) -> None:
    """Replace `path` with `value` as JSON in one step (a reader sees the old or the new)."""
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(value))
    os.replace(tmp, path)


def write_rows(handle: BinaryIO, position: int, rows: np.ndarray) -> None:
    """Write `rows` at byte `position` of the open file and make them durable before the
    progress that counts them is recorded."""
    handle.seek(position)
    handle.write(rows.tobytes())
    handle.flush()
    os.fsync(handle.fileno())


def open_vectors(path: Path) -> np.ndarray:
    """Return the vectors at `path` memory-mapped read-only."""
    return np.load(path, mmap_mode="r")


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row divided by its L2 norm, in float64; a zero row stays zero (cosine 0 with
    anything). Used by the retrieval task and the attacks that rank by cosine."""
    rows = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


def row_cosines(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The cosine of each row of `first` (n, d) with the same row of `second`, in float64: 0
    where either row is zero (no direction), clipped to [-1, 1] against rounding. Used by
    SentEval's STS tasks and by the `cosine` metric."""
    a, b = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    dots = np.einsum("ij,ij->i", a, b)
    cosines = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return np.clip(cosines, -1.0, 1.0)
