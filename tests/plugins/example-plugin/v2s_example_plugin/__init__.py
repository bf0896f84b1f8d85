"""Example v2s-harness plugin: what a third party ships to add an encoder and a metric.

This module is what the entry point `example` (group "harness") names. It is imported by every
`harness` command, so it stays cheap: only the hooks, the options and lazy factories live here;
the implementations are imported the first time a run builds them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from harness.hookspecs import Register, hookimpl
from harness.protocols import BuildContext, Options

if TYPE_CHECKING:
    from .bow import HashedBagOfWordsEncoder
    from .length import LengthMetric

__version__ = "0.1.0"


class BagOfWordsOptions(Options):
    """Options of the hashed bag-of-words encoder (spec: `{name: example-bow, dim: 128}`)."""

    dim: int = Field(64, ge=1, le=1_000_000, description="number of hash buckets (vector size)")


def build_bow(options: BagOfWordsOptions, context: BuildContext) -> HashedBagOfWordsEncoder:
    """A new hashed bag-of-words encoder (needs no vocabulary and no weights)."""
    from .bow import HashedBagOfWordsEncoder

    return HashedBagOfWordsEncoder(dim=options.dim)


def build_length(options: Options, context: BuildContext) -> LengthMetric:
    """A new length-agreement metric."""
    from .length import LengthMetric

    return LengthMetric()


@hookimpl
def register_encoders(register: Register) -> None:
    """Register the hashed bag-of-words encoder."""
    register("example-bow", build_bow, options=BagOfWordsOptions,
             description="example plugin: l2-normalised counts of hashed lowercase tokens")


@hookimpl
def register_metrics(register: Register) -> None:
    """Register the length-agreement metric."""
    register("example-length", build_length, options=Options,
             description="example plugin: 100 * mean(1 - |len(hyp) - len(ref)| / max length)")
