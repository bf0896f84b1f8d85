"""The nearest leaked sentence: an attack that trains nothing and needs nothing but the leak.

It assumes the weakest useful threat model the privacy analysis grants: every leaked
(sentence, vector) pair of the training split, the vectors as the store holds them (defended
like the attacked ones), and nothing else: no queries, no public corpus, no decoder. Each
attacked vector reads back as the leaked sentence whose vector is closest to it by cosine, that
cosine its score. A sentence that the attacked text repeats comes back word for word; otherwise
the attack recovers what the closest leaked sentence happens to share with it, which is a floor
every stronger attack should clear.
"""

from __future__ import annotations

import numpy as np

from harness.plugin import AttackInputs, Inversion, ThreatModel

CHUNK = 512
"""Attacked vectors compared with every leaked vector at once: bounds the cosine matrix to
CHUNK x leaked pairs."""


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row divided by its L2 norm, float32; a zero row stays zero (cosine 0 with all)."""
    rows = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


class NearestLeakedSentence:
    """Implements `harness.protocols.Attack`: `fit` keeps the leaked pairs, `invert` looks each
    attacked vector up among them. Among equally close leaked vectors the first leaked one
    wins, so the reading is deterministic."""

    threat = ThreatModel(leaked=None)
    """All leaked pairs, nothing else (`ThreatModel()`'s defaults spelt out)."""

    def __init__(self) -> None:
        self._texts: list[str] = []
        self._vectors = np.zeros((0, 0), dtype=np.float32)

    def fit(self, inputs: AttackInputs) -> None:
        """Keep the leaked sentences and their vectors, scaled to unit length."""
        self._texts = list(inputs.texts)
        self._vectors = unit_rows(inputs.vectors)

    def invert(self, vectors: np.ndarray) -> Inversion:
        """For each row of `vectors`, the leaked sentence with the highest cosine and that
        cosine; "" and 0.0 when nothing leaked."""
        if not self._texts:
            return Inversion(sentences=[""] * len(vectors), scores=[0.0] * len(vectors))
        targets = unit_rows(vectors)
        sentences: list[str] = []
        scores: list[float] = []
        for start in range(0, len(targets), CHUNK):
            cosines = targets[start:start + CHUNK] @ self._vectors.T
            best = cosines.argmax(axis=1)  # the first among equals
            sentences += [self._texts[i] for i in best]
            scores += cosines[np.arange(len(best)), best].astype(float).tolist()
        return Inversion(sentences=sentences, scores=scores)
