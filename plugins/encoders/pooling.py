"""Pooling encoders over the run's subword vectors (Vec2Sent section 3: Avg, Hier and
Avg+Max+Hier over BPEmb), or over a pretrained word-vector table with its own tokenisation
(`harness_plugins.encoders.wordvectors`: GloVe), which stands where the vocabulary would.

A batch of sentences is pooled at once: the subword vectors of all its sentences are laid end to
end (`SubwordBatch`) and pooled per sentence with numpy's segment reductions (`reduceat`), so no
padding enters any vector and a sentence's vector does not depend on the rest of its batch.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.plugin import BuildContext, HarnessError, Options

from .options import WindowOptions

VERSION = "2"


def context_vocab(context: BuildContext, encoder: str) -> Any:
    """Return the run's subword vocabulary from the build context, or raise naming `encoder`."""
    if context.vocab is None:
        raise HarnessError(f"encoder {encoder!r} needs the run's subword vocabulary "
                           "(BuildContext.vocab); build it through a run or pass vocab=")
    return context.vocab


def encode_nonempty(vocab: Any, sentences: Sequence[str], batch_size: int, dim: int,
                    encode_batch: Callable[[list[list[int]]], np.ndarray]) -> np.ndarray:
    """(n, dim) float32 vectors, `batch_size` sentences at a time: `encode_batch` of the token
    ids of each batch's non-empty sentences (B, dim), zeros for an empty sentence."""
    out = np.zeros((len(sentences), dim), dtype=np.float32)
    step = max(1, batch_size)
    for begin in range(0, len(sentences), step):
        ids = vocab.encode(list(sentences[begin:begin + step]))
        rows = [i for i, token_ids in enumerate(ids) if token_ids]
        if rows:
            out[begin + np.asarray(rows)] = encode_batch([ids[i] for i in rows])
    return out


@dataclass(frozen=True)
class SubwordBatch:
    """The subword vectors of a batch of sentences, laid end to end.

    Sentence i owns rows `starts[i] : starts[i] + lengths[i]` of `vectors` (N, dim).
    """

    vectors: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray

    @classmethod
    def of(cls, ids: Sequence[Sequence[int]], table: np.ndarray) -> SubwordBatch:
        """Return the batch of sentences given as subword ids, looked up in `table` (V, dim)."""
        lengths = np.fromiter((len(s) for s in ids), dtype=np.int64, count=len(ids))
        starts = np.cumsum(lengths) - lengths
        flat = np.fromiter((i for s in ids for i in s), dtype=np.int64, count=int(lengths.sum()))
        return cls(table[flat], starts, lengths)

    def __len__(self) -> int:
        return len(self.lengths)

    @property
    def dim(self) -> int:
        """Dimension of the subword vectors."""
        return self.vectors.shape[1]


def _segment_reduce(ufunc: np.ufunc, rows: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                    dim: int) -> np.ndarray:
    """Return ufunc.reduceat over each segment, zeros for empty segments (reduceat cannot)."""
    out = np.zeros((len(lengths), dim), dtype=rows.dtype)
    present = lengths > 0
    if present.any():
        # Empty segments are skipped, so each kept start runs up to the next kept start.
        out[present] = ufunc.reduceat(rows, starts[present], axis=0)
    return out


def average_pool(batch: SubwordBatch) -> np.ndarray:
    """Return the (B, dim) mean of each sentence's subword vectors, x = (1/n) sum_i e(w_i);
    an empty sentence gives zeros."""
    sums = _segment_reduce(np.add, batch.vectors, batch.starts, batch.lengths, batch.dim)
    return sums / np.maximum(batch.lengths, 1)[:, None].astype(sums.dtype)


def max_pool(batch: SubwordBatch) -> np.ndarray:
    """Return the (B, dim) dimension-wise maximum over each sentence's subword vectors
    (Shen et al. 2018, SWEM-max); an empty sentence gives zeros."""
    return _segment_reduce(np.maximum, batch.vectors, batch.starts, batch.lengths, batch.dim)


def hierarchical_pool(batch: SubwordBatch, window: int = 3) -> np.ndarray:
    """Return the (B, dim) SWEM-hier vectors (Shen et al. 2018, "hierarchical pooling"): the
    average of each run of `window` consecutive subword vectors (stride 1), then
    the dimension-wise maximum over those window averages.

    A sentence shorter than the window has no full window; it gets the maximum over its subword
    vectors (max pooling), as the Vec2Sent code does (its `Hier` module applies
    `AdaptiveMaxPool1d` directly when the sentence is shorter than the window). An empty sentence
    gives zeros.
    """
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    out = max_pool(batch)
    windows = np.maximum(batch.lengths - window + 1, 0)
    full = windows > 0
    if not full.any():
        return out
    # Row of the first vector of every window, sentence by sentence.
    first = np.repeat(batch.starts[full], windows[full])
    offsets = np.arange(len(first)) - np.repeat(np.cumsum(windows[full]) - windows[full],
                                                windows[full])
    first = first + offsets
    # Summed term by term (not via a cumulative sum) so a window's value does not depend on
    # which sentences precede it in the batch.
    sums = batch.vectors[first].copy()
    for k in range(1, window):
        sums += batch.vectors[first + k]
    means = sums / np.asarray(window, dtype=sums.dtype)
    window_starts = np.concatenate([[0], np.cumsum(windows[full])[:-1]])
    out[full] = np.maximum.reduceat(means, window_starts, axis=0)
    return out


class PoolingEncoder(ABC):
    """Base of the encoders that pool the run's (frozen) subword vectors; subclasses set `name`,
    `width` (output dim = width x subword dim) and `pool`."""

    name = "pooling"
    width = 1

    def __init__(self, vocab: Any, options: Options | None = None) -> None:
        self.vocab = vocab
        self.options = options if options is not None else Options()
        # Only the window-pooling encoders have a `window` option; the others get its default,
        # SWEM-hier's n-gram size 3 (Shen et al. 2018), from the one place that states it.
        self.window = int(getattr(self.options, "window", WindowOptions().window))

    @property
    def dim(self) -> int:
        """The output dimension: `width` times the subword vector dimension."""
        return self.width * int(self.vocab.vectors.shape[1])

    def fingerprint(self) -> str:
        """Pooling name, module version and options; the vocabulary's identity is part of the
        run's cache key already."""
        return f"{self.name}/{VERSION}/{self.options.model_dump_json()}"

    def declares(self) -> dict[str, Any]:
        """The subword vectors pooled, by name (`harness.results.declarations.pooled_vectors`: e.g.
        "run-trained bpe10000 100d", or "bpemb-en-50k-300d" for BPEmb's files), the window of
        the window poolings, and the output dimension; no vectors when the vocabulary cannot
        say what it is."""
        from harness.plugin import pooled_vectors

        vectors = pooled_vectors(self.vocab)
        return {**({"vectors": vectors} if vectors else {}),
                **({"window": self.window} if hasattr(self.options, "window") else {}),
                "dim": self.dim}

    @abstractmethod
    def pool(self, batch: SubwordBatch) -> np.ndarray:
        """Return the (B, dim) sentence vectors of a batch."""
        ...

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return the (n, dim) float32 sentence vectors; an empty sentence maps to zeros."""
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        table = self.vocab.vectors
        for begin in range(0, len(sentences), max(1, batch_size)):
            chunk = list(sentences[begin:begin + batch_size])
            batch = SubwordBatch.of(self.vocab.encode(chunk), table)
            out[begin:begin + len(chunk)] = self.pool(batch)
        return out


class AverageEncoder(PoolingEncoder):
    """Avg: the mean of the sentence's subword vectors (Vec2Sent section 3, encoder (i))."""

    name = "avg"

    def pool(self, batch: SubwordBatch) -> np.ndarray:
        """Return the mean subword vector of each sentence."""
        return average_pool(batch)


class MaxEncoder(PoolingEncoder):
    """Max: the dimension-wise maximum of the sentence's vectors (SWEM-max, Shen et al. 2018;
    p = inf of the power means of Rücklé et al. 2018)."""

    name = "max"

    def pool(self, batch: SubwordBatch) -> np.ndarray:
        """Return the dimension-wise maximum vector of each sentence."""
        return max_pool(batch)


class HierarchicalEncoder(PoolingEncoder):
    """Hier: SWEM-hier pooling (Shen et al. 2018; Vec2Sent section 3, encoder (iii))."""

    name = "hier"

    def pool(self, batch: SubwordBatch) -> np.ndarray:
        """Return the hierarchical pooling of each sentence (see `hierarchical_pool`)."""
        return hierarchical_pool(batch, self.window)


class AvgMaxHierEncoder(PoolingEncoder):
    """Avg+Max+Hier: the concatenation [avg; max; hier] of three poolings, 3 x dim (Rücklé et al.
    2018, concatenated power means: p = 1 and p = inf, plus Hier; Vec2Sent section 3, encoder
    (iv)).

    The Vec2Sent code concatenates the same three poolings in the order [hier; avg; max]; the
    order is a fixed permutation of the dimensions and changes nothing a decoder can learn.
    """

    name = "avg-max-hier"
    width = 3

    def pool(self, batch: SubwordBatch) -> np.ndarray:
        """Return [avg; max; hier] of each sentence."""
        return np.concatenate([average_pool(batch), max_pool(batch),
                               hierarchical_pool(batch, self.window)], axis=1)
