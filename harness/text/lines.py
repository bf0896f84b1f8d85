"""The lines of a UTF-8 text file as a read-only sequence of strings, read from disk on use.

A corpus split of 100M sentences takes 12-20 GB as a Python list; as `LineFile` it takes the
file. Line i is the text between the i-th and the (i+1)-th "\\n" (a last line without a
newline counts; a file ending in a newline has no empty line after it). Only "\\n" ends a
line, unlike `str.splitlines`, which also splits at \\r, \\x85 and other characters a kept
sentence may hold.
Streaming a file needs no index; random access (`lines[i]`, a slice that does not start at 0)
builds, in one pass, a sparse index: the byte offset of every `BLOCK`-th line (numpy int64,
8 bytes per 1024 lines), and reads the block around a line, keeping the last few blocks
decoded, so that consecutive or nearby lookups (a batch) read the disk once.

A slice is a `LineFile` of that range of the same file (a view: nothing is read), so
`train[:n]` of a 100M-line file costs nothing until it is iterated. A `LineFile` pickles as its
path, its range and the file's line count, never its content: a worker process re-reads it.
"""

from __future__ import annotations

import operator
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, overload

import numpy as np

BLOCK = 1024
"""Lines per entry of the sparse index: a lookup reads at most this many lines."""

_READ = 1 << 20        # bytes read at a time while streaming
_SCAN = 1 << 22        # bytes read at a time while counting lines and building the index
_CACHED_BLOCKS = 4     # decoded blocks kept: a batch straddling blocks reads each once


def scan_lines(path: Path) -> tuple[int, np.ndarray]:
    """Return the number of lines of `path` and the byte offset of every `BLOCK`-th line.

    One pass over the file in 4 MiB reads; memory stays at one read plus its newline
    positions, whatever the file's size.
    """
    starts, newlines, size, last = [np.zeros(1, dtype=np.int64)], 0, 0, b""
    with open(path, "rb") as handle:
        while chunk := handle.read(_SCAN):
            ends = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
            # The line after the k-th newline of the file (k from 1) is line k; it starts one
            # byte after that newline.
            numbers = newlines + 1 + np.arange(len(ends), dtype=np.int64)
            starts.append(size + ends[numbers % BLOCK == 0] + 1)
            newlines += len(ends)
            size += len(chunk)
            last = chunk[-1:]
    count = newlines + (1 if size and last != b"\n" else 0)
    blocks = max(1, -(-count // BLOCK))  # a newline at the very end starts no line
    return count, np.concatenate(starts)[:blocks]


class _Source:
    """What every view of one file shares: its line count, sparse index and decoded blocks."""

    def __init__(self, path: Path, count: int | None) -> None:
        self.path = path
        self._count = count
        self._offsets: np.ndarray | None = None
        self._blocks: OrderedDict[int, list[str]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        if self._count is None:
            self._index()
        assert self._count is not None
        return self._count

    def _index(self) -> np.ndarray:
        if self._offsets is None:
            count, offsets = scan_lines(self.path)
            if self._count is None:
                self._count = count
            self._offsets = offsets
        return self._offsets

    def offset(self, line: int) -> tuple[int, int]:
        """Return the start of the block holding `line`: (its first line, its byte offset)."""
        block = line // BLOCK
        return block * BLOCK, int(self._index()[block])

    def block(self, number: int) -> list[str]:
        """Return the decoded lines of block `number`, from the cache when it holds them."""
        with self._lock:
            lines = self._blocks.get(number)
            if lines is not None:
                self._blocks.move_to_end(number)
                return lines
        offsets = self._index()
        first = number * BLOCK
        size = min(BLOCK, self.count - first)
        with open(self.path, "rb") as handle:
            handle.seek(int(offsets[number]))
            if number + 1 < len(offsets):
                data = handle.read(int(offsets[number + 1] - offsets[number]))
            else:
                data = handle.read()
        lines = data.decode("utf-8").split("\n")[:size]
        with self._lock:
            self._blocks[number] = lines
            while len(self._blocks) > _CACHED_BLOCKS:
                self._blocks.popitem(last=False)
        return lines


def _stream(path: Path, offset: int) -> Iterator[str]:
    """Yield the lines of `path` from byte `offset` on, decoded a 1 MiB read at a time."""
    with open(path, "rb") as handle:
        handle.seek(offset)
        rest = b""
        while chunk := handle.read(_READ):
            chunk = rest + chunk
            end = chunk.rfind(b"\n")
            if end < 0:
                rest = chunk
                continue
            rest = chunk[end + 1:]
            # Cut at a newline, so a multi-byte character is never split between reads.
            yield from chunk[:end].decode("utf-8").split("\n")
        if rest:
            yield rest.decode("utf-8")


class LineFile(Sequence[str]):
    """Lines `start` to `stop` (exclusive) of a UTF-8 text file, one string per line."""

    def __init__(self, path: str | os.PathLike[str], count: int | None = None) -> None:
        """`count`: the file's number of lines when known (e.g. recorded when it was written);
        otherwise counted on first use of `len`."""
        self._source = _Source(Path(path), count)
        self._start: int = 0
        self._stop: int | None = None

    @classmethod
    def _view(cls, source: _Source, start: int, stop: int) -> LineFile:
        view = cls.__new__(cls)
        view._source, view._start, view._stop = source, start, stop
        return view

    @property
    def path(self) -> Path:
        """The file the lines are read from."""
        return self._source.path

    @property
    def whole(self) -> bool:
        """True when this is every line of the file, not a slice of it."""
        return self._start == 0 and self._stop is None

    def __len__(self) -> int:
        stop = self._source.count if self._stop is None else self._stop
        return stop - self._start

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        """Return line `index`, or the lines of a slice: a `LineFile` view for a step of 1,
        else a list."""
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            return LineFile._view(self._source, self._start + start,
                                  self._start + max(start, stop))
        i = operator.index(index)
        size = len(self)
        if i < 0:
            i += size
        if not 0 <= i < size:
            raise IndexError(f"line {index} of {size}")
        line = self._start + i
        return self._source.block(line // BLOCK)[line % BLOCK]

    def __iter__(self) -> Iterator[str]:
        size = len(self)
        if self._start == 0:
            return islice(_stream(self.path, 0), size)
        if size <= BLOCK:  # a batch: from the decoded blocks, shared with lookups
            return self._from_blocks(self._start, self._start + size)
        first, offset = self._source.offset(self._start)
        return islice(_stream(self.path, offset), self._start - first, self._start + size - first)

    def _from_blocks(self, start: int, stop: int) -> Iterator[str]:
        for number in range(start // BLOCK, (stop - 1) // BLOCK + 1):
            base = number * BLOCK
            yield from self._source.block(number)[max(start - base, 0):stop - base]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LineFile) and other.path == self.path \
                and (other._start, len(other)) == (self._start, len(self)):
            return True
        if not isinstance(other, (LineFile, list, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # compares by content, like a list

    def __reduce__(self) -> tuple[Any, ...]:
        # The path and range, never the lines: a worker process reads the file itself.
        return _restore, (str(self.path), self._source._count, self._start, self._stop)

    def __repr__(self) -> str:
        stop = "end" if self._stop is None else self._stop
        return f"LineFile({str(self.path)!r}, lines {self._start}:{stop})"


def _restore(path: str, count: int | None, start: int, stop: int | None) -> LineFile:
    """Return the `LineFile` that `LineFile.__reduce__` describes (unpickling)."""
    whole = LineFile(path, count)
    if stop is None:
        return whole
    return LineFile._view(whole._source, start, stop)
