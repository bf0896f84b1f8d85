"""Training data for decoders: the held-out split, length-bucketed batch orders, padded batches.

Vectors may be a memory map of the encode stage's output (1.4M x 4,800 floats at the paper's
scale): only the rows of one batch are read at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from harness.errors import DataError

IGNORE = -100
"""Target id of padding positions, skipped by the loss."""


@dataclass(frozen=True)
class Batch:
    """Padded teacher-forcing inputs and targets of some sentences, with their vectors."""

    inputs: torch.Tensor   # (B, T) [bos] + ids, padded
    targets: torch.Tensor  # (B, T) ids + [eos], IGNORE where padded
    vectors: torch.Tensor  # (B, D) float32
    tokens: int            # number of predicted (non-padding) tokens


def split_validation(count: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Return sorted (train, validation) sentence indices; `floor(count * fraction)` held out.

    The held-out slice is a seeded random sample, so it does not depend on the corpus order.
    """
    held_out = int(count * fraction)
    if held_out == 0:
        return np.arange(count), np.arange(0)
    generator = torch.Generator().manual_seed(seed * 7_919 + 17)
    order = torch.randperm(count, generator=generator).numpy()
    return np.sort(order[held_out:]), np.sort(order[:held_out])


def bucketed_batches(indices: np.ndarray, lengths: np.ndarray, batch_size: int, seed: int,
                     epoch: int) -> list[np.ndarray]:
    """Return this epoch's batches of `indices`: similar lengths together, in random order.

    The generator is seeded from (seed, epoch), so a resumed run sees the same batches.
    """
    generator = torch.Generator().manual_seed(seed * 100_003 + epoch)
    shuffled = indices[torch.randperm(len(indices), generator=generator).numpy()]
    # A stable sort of a random permutation: buckets by length, random within a length.
    by_length = shuffled[np.argsort(lengths[shuffled], kind="stable")]
    batches = [by_length[i:i + batch_size] for i in range(0, len(by_length), batch_size)]
    batch_order = torch.randperm(len(batches), generator=generator).tolist()
    return [np.sort(batches[i]) for i in batch_order]


def sorted_batches(indices: np.ndarray, lengths: np.ndarray, batch_size: int,
                   max_tokens: int | None = None) -> list[np.ndarray]:
    """Return batches of `indices` in length order (for evaluation: little padding).

    With `max_tokens`, a batch also holds no more padded positions (sentences x (longest + 1))
    than that, unless it is a single sentence.
    """
    by_length = indices[np.argsort(lengths[indices], kind="stable")]
    if max_tokens is None:
        return [np.sort(by_length[i:i + batch_size])
                for i in range(0, len(by_length), batch_size)]
    batches, start = [], 0
    for end in range(1, len(by_length) + 1):
        # Lengths only grow along by_length, so the newest sentence is the batch's longest.
        too_many = (end - start) * (int(lengths[by_length[end - 1]]) + 1) > max_tokens
        if end - start > batch_size or (too_many and end - start > 1):
            batches.append(np.sort(by_length[start:end - 1]))
            start = end - 1
    if start < len(by_length):
        batches.append(np.sort(by_length[start:]))
    return batches


def vector_statistics(vectors: Any, rows: np.ndarray, chunk: int = 8192,
                      columns: int = 1 << 22) -> tuple[np.ndarray, np.ndarray]:
    """Return the per-dimension mean and (population) variance, float64 (D,), of `rows` of
    `vectors` (N, D), reading `chunk` rows at a time (a memory map never loads whole).

    A chunk is widened to float64 a slice of about `columns` values at a time, never whole
    (at 4,096 dimensions, 8,192 rows are 256 MB in float64).
    """
    if len(rows) == 0:
        raise ValueError("no rows to compute vector statistics from")
    rows = np.sort(rows)
    dim = vectors.shape[1]
    total = np.zeros(dim)
    squares = np.zeros(dim)
    for start in range(0, len(rows), chunk):
        block = np.asarray(vectors[rows[start:start + chunk]])
        for left, right in _column_slices(dim, max(2, columns // len(block))):
            part = np.ascontiguousarray(block[:, left:right], dtype=np.float64)
            total[left:right] += part.sum(axis=0)
            squares[left:right] += np.square(part).sum(axis=0)
    mean = total / len(rows)
    return mean, np.maximum(squares / len(rows) - np.square(mean), 0.0)


def _column_slices(dim: int, width: int) -> list[tuple[int, int]]:
    """Return (left, right) column ranges of at most about `width` columns covering `dim`.

    No range is one column wide unless `dim` is 1: numpy sums the rows of a (rows, w) float64
    array one after the other when w > 1 but pairwise when w == 1, and the sums must equal
    those over the whole chunk, bit for bit, for the trained weights to stay the same.
    """
    edges = list(range(0, dim, width)) + [dim]
    if len(edges) > 2 and edges[-1] - edges[-2] == 1:
        del edges[-2]
    return list(zip(edges[:-1], edges[1:], strict=True))


def padded_batches(order: Iterable[np.ndarray], vocab: Any, vectors: Any,
                   ids: Sequence[Sequence[int]], device: torch.device) -> Iterator[Batch]:
    """Yield padded batches for each array of sentence indices, reading only their rows.

    `ids` is any sequence of id sequences, e.g. lists or a `TokenIds`; `vectors` anything
    that returns rows for an index array: an array, a memory map, a `FileRows`.
    """
    pin = device.type == "cuda"
    bos, eos, pad = int(vocab.bos_id), int(vocab.eos_id), int(vocab.pad_id)
    for index in order:
        sentences = [ids[i] for i in index]
        lengths = [len(s) for s in sentences]
        width = max(lengths) + 1
        inputs = np.full((len(index), width), pad, dtype=np.int64)
        targets = np.full((len(index), width), IGNORE, dtype=np.int64)
        for row, (sentence, length) in enumerate(zip(sentences, lengths, strict=True)):
            inputs[row, 0] = bos
            inputs[row, 1:length + 1] = sentence
            targets[row, :length] = sentence
            targets[row, length] = eos
        rows = torch.from_numpy(np.asarray(vectors[index], dtype=np.float32))
        inputs_t, targets_t = torch.from_numpy(inputs), torch.from_numpy(targets)
        if pin:  # page-locked copies, so the copies to the GPU can overlap the work there
            inputs_t, targets_t, rows = (inputs_t.pin_memory(), targets_t.pin_memory(),
                                         rows.pin_memory())
        yield Batch(inputs_t.to(device, non_blocking=pin), targets_t.to(device, non_blocking=pin),
                    rows.to(device, non_blocking=pin), predicted_tokens(lengths))


def predicted_tokens(lengths: Sequence[int] | np.ndarray) -> int:
    """The tokens a batch of sentences of these lengths (pieces) predicts: each sentence's
    pieces and its end of sentence. The loss of a batch is its summed NLL over this count."""
    return int(np.sum(lengths)) + len(lengths)


def check_training_data(model: Any, vectors: Any, ids: Sequence[Sequence[int]],
                        who: str) -> None:
    """Raise a one-line DataError naming `who` unless there is one vector of the model's
    input dimension per training sentence, and at least one sentence."""
    if len(vectors) != len(ids):
        raise DataError(f"{who}: {len(vectors)} training vectors but {len(ids)} sentences")
    if len(ids) == 0:
        raise DataError(f"{who}: no training sentences")
    input_dim = getattr(model, "input_dim", None)
    if vectors.ndim != 2 or (input_dim is not None and vectors.shape[1] != input_dim):
        raise DataError(f"{who}: decoder expects sentence vectors of dimension {input_dim}, "
                        f"got training vectors of shape {tuple(vectors.shape)}")
