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
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from tqdm.auto import tqdm

from harness.errors import PluginError


def check_vectors(vectors: object, count: int, dim: int, plugin: str) -> np.ndarray:
    """Return the encoder output as an array, or raise naming the plugin when it is malformed."""
    array = np.asarray(vectors)
    if array.ndim != 2 or array.shape != (count, dim):
        raise PluginError(plugin, f"encode returned shape {array.shape}, expected ({count}, {dim})")
    if not np.issubdtype(array.dtype, np.floating):
        raise PluginError(plugin, f"encode returned dtype {array.dtype}, expected floats")
    if not np.isfinite(array).all():
        bad = int(np.flatnonzero(~np.isfinite(array).all(axis=1))[0])
        raise PluginError(plugin, f"encode returned a non-finite value (row {bad} of the batch)")
    return array


def write_vectors(path: Path, sentences: Sequence[str], encode: Callable[..., Any],
                  *, dim: int, plugin: str, batch_size: int = 256, dtype: str = "float32",
                  label: str = "encode", with_start: bool = False) -> None:
    """Encode `sentences` batch by batch into the `.npy` array `path` (resumable).

    `encode(batch)` returns the batch's vectors; with `with_start`, `encode(batch, start)` is
    also told the row of batch[0] in `sentences` (a positional encoder's vectors follow it,
    `harness.protocols.PositionalEncoder`), the same after a resume.

    Rows are written with file writes, not through a memory map, so the process's resident
    memory does not grow with the file (the pages of a map stay in its RSS while it is open).
    Progress is recorded next to the array after each batch reaches the disk; a rerun continues
    from the first unwritten row.
    """
    progress_file = path.with_suffix(".progress.json")
    done = 0
    if path.exists() and progress_file.exists():
        state = json.loads(progress_file.read_text())
        if state.get("rows") == len(sentences) and state.get("dim") == dim:
            done = int(state["done"])
    if done == 0:  # the header and a file of the full size, written once
        np.lib.format.open_memmap(path, mode="w+", dtype=np.dtype(dtype),
                                  shape=(len(sentences), dim)).flush()
    header = np.load(path, mmap_mode="r")
    offset, stored_dtype = header.offset, header.dtype
    del header
    row_bytes = dim * stored_dtype.itemsize
    with open(path, "r+b") as handle, tqdm(total=len(sentences), initial=done, desc=label,
                                           unit="sent", leave=False, disable=None) as bar:
        for start in range(done, len(sentences), batch_size):
            batch = sentences[start:start + batch_size]
            output = encode(batch, start) if with_start else encode(batch)
            vectors = check_vectors(output, len(batch), dim, plugin)
            with np.errstate(over="ignore"):  # reported below, naming the plugin
                stored = np.ascontiguousarray(vectors, dtype=stored_dtype)
            if not np.isfinite(stored).all():  # float16 overflows above 65504
                row = int(np.flatnonzero(~np.isfinite(stored).all(axis=1))[0])
                raise PluginError(plugin, f"encode returned a value (row {row} of the batch, "
                                          f"largest magnitude {float(np.abs(vectors).max()):g}) "
                                          f"that {stored_dtype} cannot hold; use "
                                          "`encode: {dtype: float32}`")
            write_rows(handle, offset + start * row_bytes, stored)
            tmp = progress_file.with_suffix(".tmp")
            tmp.write_text(json.dumps({"rows": len(sentences), "dim": dim,
                                       "done": start + len(batch)}))
            os.replace(tmp, progress_file)
            bar.update(len(batch))
    progress_file.unlink(missing_ok=True)


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


def row_cosines(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """The cosine of each row of `first` (n, d) with the same row of `second`, in float64: 0
    where either row is zero (no direction), clipped to [-1, 1] against rounding. Used by
    SentEval's STS tasks and by the `cosine` metric."""
    a, b = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    dots = np.einsum("ij,ij->i", a, b)
    cosines = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return np.clip(cosines, -1.0, 1.0)
