"""A hashed bag-of-words sentence encoder: no vocabulary, no training, no weights."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from . import __version__


def bucket(token: str, dim: int) -> int:
    """Return the bucket of a token: a stable hash (BLAKE2b), unlike Python's salted hash()."""
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") % dim


class HashedBagOfWordsEncoder:
    """Sentence vector = l2-normalised counts of its lowercase whitespace tokens in `dim` buckets.

    Implements `harness.protocols.Encoder`. A sentence without tokens maps to the zero vector.
    """

    def __init__(self, dim: int = 64) -> None:
        if dim < 1:
            raise ValueError(f"dim must be positive, got {dim}")
        self._dim = int(dim)

    @property
    def dim(self) -> int:
        """The number of hash buckets."""
        return self._dim

    def fingerprint(self) -> str:
        """The encoder, its options and the plugin version: all that determines the vectors."""
        return f"example-bow/{__version__}/blake2b/dim={self._dim}"

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return an (n, dim) float32 array; each sentence is encoded on its own."""
        out = np.zeros((len(sentences), self._dim), dtype=np.float32)
        for row, sentence in enumerate(sentences):
            for token in sentence.lower().split():
                out[row, bucket(token, self._dim)] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        # Divide only non-zero rows: an empty sentence stays a zero vector instead of NaN.
        np.divide(out, norms, out=out, where=norms > 0)
        return out
