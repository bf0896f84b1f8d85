"""Subword ids of a whole training corpus in two flat arrays, for training at the paper's size.

The paper trains on 1.4M sentences: as a Python list of lists of ints their ids take about
1 GB of objects; as int32 values plus int64 offsets they take about 100 MB. `TokenIds` is built
chunk by chunk, so the list of lists never exists whole, and reads like a sequence of
sentences: `ids[i]` is sentence i's ids as an array, `ids.lengths` every sentence's length.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import overload

import numpy as np

CHUNK = 65_536
"""Sentences encoded (and held as Python lists) at a time while building."""

_INT32 = np.iinfo(np.int32)


class TokenIds(Sequence[np.ndarray]):
    """Sentences of subword ids: sentence i is `values[offsets[i]:offsets[i + 1]]`.

    Both arrays are read-only views; `values` is int32, `offsets` int64 with one more entry than
    there are sentences, starting at 0 and ending at `len(values)`.
    """

    def __init__(self, values: np.ndarray, offsets: np.ndarray) -> None:
        values, offsets = np.asarray(values), np.asarray(offsets)
        if values.ndim != 1 or values.dtype != np.int32:
            raise ValueError(f"values must be a 1-D int32 array, got {values.dtype} "
                             f"{values.shape}")
        if offsets.ndim != 1 or offsets.dtype != np.int64 or len(offsets) == 0:
            raise ValueError(f"offsets must be a non-empty 1-D int64 array, got {offsets.dtype} "
                             f"{offsets.shape}")
        if offsets[0] != 0 or offsets[-1] != len(values) or np.any(np.diff(offsets) < 0):
            raise ValueError("offsets must rise from 0 to len(values)")
        self.values, self.offsets = values.view(), offsets.view()
        self.values.flags.writeable = False
        self.offsets.flags.writeable = False

    # --- building ---------------------------------------------------------------------------

    @classmethod
    def from_sequences(cls, sequences: Iterable[Sequence[int]], *,
                       chunk: int = CHUNK) -> TokenIds:
        """Return the ids of `sequences` (e.g. a list of lists), read `chunk` at a time."""
        iterator = iter(sequences)
        return cls._from_chunks(iter(lambda: list(itertools.islice(iterator, chunk)), []))

    @classmethod
    def encode(cls, encode: Callable[[list[str]], Sequence[Sequence[int]]],
               sentences: Iterable[str], *, chunk: int = CHUNK) -> TokenIds:
        """Return the ids `encode` gives `sentences`, calling it on `chunk` sentences at a time
        (e.g. `TokenIds.encode(vocab.encode, corpus.train)`): only one chunk's ids are ever
        Python lists."""
        iterator = iter(sentences)
        batches = iter(lambda: list(itertools.islice(iterator, chunk)), [])
        return cls._from_chunks(encode(batch) for batch in batches)

    @classmethod
    def _from_chunks(cls, chunks: Iterable[Sequence[Sequence[int]]]) -> TokenIds:
        values, lengths = [np.zeros(0, dtype=np.int32)], [np.zeros(1, dtype=np.int64)]
        for part in chunks:
            flat = np.fromiter(itertools.chain.from_iterable(part), dtype=np.int64)
            if flat.size and (flat.min() < _INT32.min or flat.max() > _INT32.max):
                raise ValueError("a subword id does not fit in int32")
            values.append(flat.astype(np.int32))
            lengths.append(np.fromiter(map(len, part), dtype=np.int64, count=len(part)))
        # The leading 0 of `lengths` becomes offsets[0].
        return cls(np.concatenate(values), np.cumsum(np.concatenate(lengths)))

    # --- reading ----------------------------------------------------------------------------

    @property
    def lengths(self) -> np.ndarray:
        """Return every sentence's number of ids (int64, one per sentence)."""
        return np.diff(self.offsets)

    @property
    def nbytes(self) -> int:
        """Return the bytes the two arrays take."""
        return self.values.nbytes + self.offsets.nbytes

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @overload
    def __getitem__(self, index: int) -> np.ndarray: ...

    @overload
    def __getitem__(self, index: slice) -> TokenIds: ...

    def __getitem__(self, index: int | slice) -> np.ndarray | TokenIds:
        """Return sentence `index`'s ids (an int32 array), or the sentences of a slice."""
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return TokenIds.from_sequences(self[i] for i in range(start, stop, step))
            stop = max(start, stop)
            first = self.offsets[start]
            return TokenIds(self.values[first:self.offsets[stop]],
                            self.offsets[start:stop + 1] - first)
        i = operator.index(index)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"sentence {index} of {len(self)}")
        return self.values[self.offsets[i]:self.offsets[i + 1]]

    def __iter__(self) -> Iterator[np.ndarray]:
        for i in range(len(self)):
            yield self.values[self.offsets[i]:self.offsets[i + 1]]

    def __repr__(self) -> str:
        return f"TokenIds({len(self)} sentences, {len(self.values)} ids)"


def sentence_lengths(ids: Sequence[Sequence[int]]) -> np.ndarray:
    """Return the number of ids of each sentence (int64), without a pass over `TokenIds`."""
    if isinstance(ids, TokenIds):
        return ids.lengths
    return np.fromiter((len(s) for s in ids), dtype=np.int64, count=len(ids))
