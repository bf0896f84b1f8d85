"""A plugin whose encoder declares which model it is (`declares()`), for the tests that bind
published rows to models (tests/test_declarations.py).

It registers `sbert`, standing in for the paper's SBERT: by default it declares
bert-large-nli-mean-tokens with 1024 dimensions, not normalised, the model and setting
Vec2Sent's Table 5 measured, and computes its vectors from hashed words (nothing to load). Load
it instead of the first-party `harness-model-encoders`, which registers the real `sbert`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import Field

from harness.protocols import BuildContext, Options
from harness.registry.hookspecs import Register, hookimpl


class DeclaredOptions(Options):
    """Which model the stand-in says it is."""

    model: str = Field("bert-large-nli-mean-tokens", description="the model it declares")
    dim: int = Field(1024, ge=1, description="its vector size")
    normalise: bool = Field(False, description="the normalisation it declares")


class DeclaredEncoder:
    """Sums a fixed pseudo-random vector per word; declares the model named in its options."""

    def __init__(self, model: str, dim: int, normalise: bool = False) -> None:
        self.model, self._dim, self.normalise = model, dim, normalise

    @property
    def dim(self) -> int:
        """The `dim` option."""
        return self._dim

    def fingerprint(self) -> str:
        """The stand-in, its model and size."""
        return f"fake-declared/1/{self.model}/{self._dim}/{int(self.normalise)}"

    def declares(self) -> dict[str, Any]:
        """The model, dimension and normalisation of its options, and a made-up file digest."""
        return {"model": self.model, "dim": self._dim, "normalise": self.normalise,
                "files": {"weights.bin": "0123abcd"}}

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return (n, dim) sums of per-word vectors seeded by each word's sha256."""
        out = np.zeros((len(sentences), self._dim), dtype=np.float32)
        for row, sentence in enumerate(sentences):
            for word in sentence.split():
                seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little")
                out[row] += np.random.default_rng(seed).standard_normal(self._dim)
        return out


def build(options: DeclaredOptions, context: BuildContext) -> DeclaredEncoder:
    """A new stand-in."""
    return DeclaredEncoder(options.model, options.dim, options.normalise)


@hookimpl
def register_encoders(register: Register) -> None:
    """Register the stand-in as `sbert`."""
    register("sbert", build, options=DeclaredOptions,
             description="fake plugin: declares the paper's SBERT model, hashed-word vectors")
