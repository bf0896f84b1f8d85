"""A well-behaved plugin registering one encoder with options."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import Field

from harness.protocols import BuildContext, Options
from harness.registry.hookspecs import Register, hookimpl


class LengthOptions(Options):
    """Options of the sentence-length encoder."""

    scale: float = Field(1.0, gt=0, description="multiplies the token count")


class SentenceLengthEncoder:
    """A 2-d vector per sentence: [scaled token count, scaled character count]."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    @property
    def dim(self) -> int:
        """Always 2."""
        return 2

    def fingerprint(self) -> str:
        """The encoder and its scale."""
        return f"fake-length/1/scale={self.scale}"

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return (n, 2) lengths."""
        return self.scale * np.array([[len(s.split()), len(s)] for s in sentences],
                                     dtype=np.float32).reshape(len(sentences), 2)


def build(options: LengthOptions, context: BuildContext) -> SentenceLengthEncoder:
    """A new sentence-length encoder."""
    return SentenceLengthEncoder(options.scale)


@hookimpl
def register_encoders(register: Register) -> None:
    """Register `fake-length`."""
    register("fake-length", build, options=LengthOptions,
             description="fake plugin: token and character counts")
