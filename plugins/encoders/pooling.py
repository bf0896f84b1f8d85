"""Pooling encoders over the run's subword vectors (Vec2Sent section 3: Avg over BPEmb)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.errors import HarnessError
from harness.protocols import BuildContext
from harness.vocab import SubwordVocab

VERSION = "1"


def _vocab(context: BuildContext) -> SubwordVocab:
    if context.vocab is None:
        raise HarnessError("pooling encoders need the run's subword vocabulary")
    return context.vocab


class AverageEncoder:
    """Sentence vector = mean of its subword vectors: x = (1/n) sum_i e(w_i)."""

    def __init__(self, context: BuildContext) -> None:
        self.vocab = _vocab(context)

    @property
    def dim(self) -> int:
        """The subword vector dimension."""
        return self.vocab.dim

    def fingerprint(self) -> str:
        """The pooling and its version; the vocabulary's identity is part of the run's key."""
        return f"avg/{VERSION}"

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return the (n, dim) mean subword vectors; an empty sentence maps to zeros."""
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        for row, ids in enumerate(self.vocab.encode(sentences)):
            if ids:
                out[row] = self.vocab.vectors[ids].mean(axis=0)
        return out
