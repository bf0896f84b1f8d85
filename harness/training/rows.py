"""Rows of a memory-mapped vector file read with plain file reads during training.

Every page of a memory map that the process has touched stays mapped into it, and so counts
towards its resident memory, until the map is closed: one epoch over a 1.4M x 4,096 float16
file (11 GB) would leave the trainer's resident set at 11 GB. Reading each batch's rows with
`readinto` instead goes through the operating system's page cache, which the kernel may reclaim,
and leaves only the batch itself in the process. The values read are the same bytes.
"""

from __future__ import annotations

import mmap
from pathlib import Path
from typing import Any

import numpy as np


class FileRows:
    """A read-only (N, D) array stored C-ordered in `path` from byte `offset`, read by rows.

    `rows[index]` (an array of row numbers, a slice or one row) returns a new array of those
    rows in the stored dtype; runs of consecutive rows are read with one call.
    """

    def __init__(self, path: str | Path, offset: int, shape: tuple[int, int],
                 dtype: np.dtype) -> None:
        self.path, self.offset = Path(path), int(offset)
        self.shape = (int(shape[0]), int(shape[1]))
        self.dtype = np.dtype(dtype)
        self.ndim = 2
        self.row_bytes = self.shape[1] * self.dtype.itemsize

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index: Any) -> np.ndarray:
        """Return the rows `index` selects, shaped (len(index), D), or one row (D,)."""
        if isinstance(index, slice):
            return self._read(np.arange(*index.indices(len(self))))
        rows = np.asarray(index)
        if rows.ndim == 0:
            return self._read(rows.reshape(1))[0]
        return self._read(rows)

    def _read(self, rows: np.ndarray) -> np.ndarray:
        if rows.ndim != 1 or not (rows.dtype.kind in "iu" or rows.size == 0):
            raise IndexError(f"rows must be given as one row number or a 1-D array of them, "
                             f"got {rows.dtype} {rows.shape}")
        rows = rows.astype(np.int64)
        rows = np.where(rows < 0, rows + len(self), rows)
        if rows.size and (rows.min() < 0 or rows.max() >= len(self)):
            raise IndexError(f"row out of range for {len(self)} rows")
        out = np.empty((len(rows), self.shape[1]), dtype=self.dtype)
        if out.size == 0:
            return out
        buffer = memoryview(out.reshape(-1).view(np.uint8))
        # Positions in `rows` where a run of consecutive row numbers starts, and the end.
        bounds = np.concatenate(([0], np.flatnonzero(np.diff(rows) != 1) + 1, [len(rows)]))
        size = self.row_bytes
        with open(self.path, "rb", buffering=0) as handle:
            for first, last in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
                handle.seek(self.offset + int(rows[first]) * size)
                _read_exactly(handle, buffer[first * size:last * size], self.path)
        return out


def _read_exactly(handle: Any, view: memoryview, path: Path) -> None:
    """Fill `view` from the file's position (a single read may return less, e.g. over 2 GB)."""
    done = 0
    while done < len(view):
        count = handle.readinto(view[done:])
        if not count:
            raise OSError(f"{path}: the file ended before the rows it should hold")
        done += count


def file_rows(vectors: Any) -> Any:
    """Return a `FileRows` over the file behind `vectors` when it is a C-contiguous 2-D memory
    map of a file (or such a view of one), else `vectors` itself.

    A copy-on-write map (mode "c") is kept as it is: its changes are not in the file.
    """
    if not isinstance(vectors, np.memmap) or vectors.ndim != 2 \
            or not vectors.flags.c_contiguous:
        return vectors
    root: np.ndarray = vectors
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not (isinstance(root, np.memmap) and isinstance(root.base, mmap.mmap)
            and root.filename is not None and root.mode in ("r", "r+", "w+")):
        return vectors
    # A view starts this many bytes after the map's first element, which is at `root.offset`.
    start = vectors.ctypes.data - root.ctypes.data
    return FileRows(root.filename, root.offset + start, vectors.shape, vectors.dtype)
