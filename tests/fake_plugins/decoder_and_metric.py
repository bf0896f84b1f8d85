"""A plugin registering a decoder family and a metric (factories never run in these tests)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.protocols import BuildContext, DecoderOptions, Options
from harness.registry.hookspecs import Register, hookimpl


class ExactMatchMetric:
    """100 * fraction of hypotheses equal to their references."""

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """Return (n, 1) indicators."""
        return np.array([[float(r == h)] for r, h in zip(references, hypotheses)]).reshape(-1, 1)

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Return 100 * matches / count."""
        return 100.0 * np.asarray(totals, dtype=np.float64)[..., 0] / count


def build_decoder(options: DecoderOptions, context: BuildContext) -> object:
    """Would import torch and build a model; the tests never call it."""
    raise NotImplementedError


def build_metric(options: Options, context: BuildContext) -> ExactMatchMetric:
    """A new exact-match metric."""
    return ExactMatchMetric()


def _never_available() -> str:
    return "run `harness data fetch fake-decoder` first"


@hookimpl
def register_decoders(register: Register) -> None:
    """Register `fake-decoder`, unavailable until its weights are fetched."""
    register("fake-decoder", build_decoder, options=DecoderOptions,
             availability=_never_available, description="fake plugin: a decoder family")


@hookimpl
def register_metrics(register: Register) -> None:
    """Register `fake-exact`."""
    register("fake-exact", build_metric, description="fake plugin: exact match")
