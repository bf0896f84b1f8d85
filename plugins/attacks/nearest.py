"""The nearest public sentence: no training, only a public corpus of sentences and black-box
queries to encode it through the store; each attacked vector gets the sentence whose vector has
the highest cosine with it."""

from __future__ import annotations

import numpy as np

from harness.plugin import AttackInputs, Inversion, ThreatModel, unit_rows

CHUNK = 1024
"""Attacked vectors compared with the whole corpus at once."""


class Nearest:
    """Retrieval from the first `corpus` sentences of the public corpus (the run's training
    text: the test sentences are never in it, so an exact hit is a sentence that occurs twice)."""

    threat = ThreatModel(leaked=0, public=True, queries=True)

    def __init__(self, corpus: int) -> None:
        self.corpus = corpus
        self._sentences: list[str] = []
        self._vectors = np.zeros((0, 0))

    def fit(self, inputs: AttackInputs) -> None:
        if inputs.public is None or inputs.query is None:
            raise ValueError("nearest needs a public corpus and query access")
        self._sentences = list(dict.fromkeys(inputs.public))[:self.corpus]
        self._vectors = unit_rows(inputs.query(self._sentences))

    def invert(self, vectors: np.ndarray) -> Inversion:
        if not self._sentences:
            return Inversion(sentences=[""] * len(vectors), scores=[0.0] * len(vectors))
        sentences, scores = [], []
        targets = unit_rows(vectors)
        for start in range(0, len(targets), CHUNK):
            cosines = targets[start:start + CHUNK] @ self._vectors.T
            best = cosines.argmax(axis=1)
            sentences += [self._sentences[i] for i in best]
            scores += cosines[np.arange(len(best)), best].tolist()
        return Inversion(sentences=sentences, scores=scores)
