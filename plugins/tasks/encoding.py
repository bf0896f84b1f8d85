"""A task's sentences encoded once: every distinct sentence in one `encode` call, the output
checked, as SentEval's tasks and MRPC-retrieval do."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.plugin import Encode, HarnessError

EMPTY_SENTENCE = "."
"""What an empty sentence is encoded as (SentEval's batchers do the same)."""


def encoded_once(encode: Encode, sentences: Sequence[str], task: str) -> np.ndarray:
    """The (len(sentences), dim) float32 vectors of `sentences` (distinct; an empty one
    encoded as "."), from one `encode` call; a `HarnessError` naming `task` when the output
    has another shape or a non-finite value."""
    vectors = np.asarray(encode([s or EMPTY_SENTENCE for s in sentences]))
    if vectors.ndim != 2 or vectors.shape[0] != len(sentences):
        raise HarnessError(f"task {task}: encode returned an array of shape {vectors.shape} "
                           f"for {len(sentences)} sentences; expected ({len(sentences)}, dim)")
    if not np.isfinite(vectors).all():
        raise HarnessError(f"task {task}: encode returned non-finite values")
    return vectors.astype(np.float32, copy=False)
