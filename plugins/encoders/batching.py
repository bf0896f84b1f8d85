"""Batches of sentences of similar length, for transformer encoders.

A transformer pads every sentence of a batch to the batch's longest, so a batch costs about
rows x longest tokens (and attention once more the longest): a few long sentences in a batch of
short ones multiply its cost. `length_batches` sorts the sentences by length, longest first, and
cuts batches of at most `max_rows` rows and `budget` padded words; `encode_by_length` runs an
encoder's batch function over them and puts each vector back in its sentence's row. The vectors
are the model's either way: padding is masked out of attention and pooling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported when a batch is cut, not when plugins register
    import numpy as np

#: Padded words per batch: 64 rows of 16-word news, 16 rows of 64-word reviews.
TOKEN_BUDGET = 1024


def length_batches(sentences: Sequence[str], max_rows: int,
                   budget: int = TOKEN_BUDGET) -> list[np.ndarray]:
    """Return row indices of `sentences` in batches, longest sentences first.

    A sentence's length is its whitespace-separated words, plus two for the model's start and
    end tokens; each batch has at most `max_rows` rows and rows x (its longest length) is at most
    `budget`, except that a batch always has at least one row.
    """
    import numpy as np

    lengths = np.fromiter((len(s.split()) + 2 for s in sentences), dtype=np.int64,
                          count=len(sentences))
    order = np.argsort(-lengths, kind="stable")
    batches: list[np.ndarray] = []
    begin = 0
    while begin < len(order):
        rows = max(1, min(max_rows, budget // int(lengths[order[begin]])))
        batches.append(order[begin:begin + rows])
        begin += rows
    return batches


def encode_by_length(sentences: Sequence[str], encode_batch: Callable[[list[str]], np.ndarray],
                     dim: int, max_rows: int, budget: int = TOKEN_BUDGET) -> np.ndarray:
    """Return the (n, dim) float32 vectors `encode_batch` gives each sentence, computed over
    `length_batches` and returned in the order of `sentences`."""
    import numpy as np

    out = np.zeros((len(sentences), dim), dtype=np.float32)
    for rows in length_batches(sentences, max(1, max_rows), budget):
        out[rows] = encode_batch([sentences[i] for i in rows])
    return out
