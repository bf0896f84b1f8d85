"""Attacks that read the run's adaptive decoder: its best output (`decoder`), and its candidates
re-ranked by how close their own vectors come to the attacked one (`rerank`)."""

from __future__ import annotations

from typing import TypeVar

import numpy as np

from harness.plugin import AttackInputs, Decode, Inversion, Query, ThreatModel, unit_rows

T = TypeVar("T")


def needs(found: T | None, what: str) -> T:
    """Return `found`, or raise if the core handed None for what the threat model asks for."""
    if found is None:
        raise ValueError(f"the core handed no {what}, which this attack's threat model asks for")
    return found


class AdaptiveDecoder:
    """The decoder the run trains on the leaked pairs as the store holds them (it adapts to the
    defence): for each vector, its best sentence under the spec's `generation:` settings. Under
    a randomised defence that decoder trains on the leaked texts encoded afresh every epoch,
    which only query access to the store gives: its threat model declares the queries."""

    threat = ThreatModel(leaked=None, decoder=True, queries=True)

    def __init__(self) -> None:
        self._decode: Decode | None = None

    def fit(self, inputs: AttackInputs) -> None:
        needs(inputs.decode, "decoder")
        self._decode = inputs.decode

    def invert(self, vectors: np.ndarray) -> Inversion:
        assert self._decode is not None, "fit first"
        return Inversion(sentences=[found[0] if found else ""
                                    for found in self._decode(vectors, 1)])


class Rerank:
    """vec2text's first step (Morris et al. 2023, Sec. 3, the hypothesis before any
    correction): `candidates` sentences per attacked vector from the adaptive decoder (its
    best, then samples), each re-encoded through the store (black-box queries); the one whose
    vector has the highest cosine with the attacked vector is kept, that cosine its score."""

    def __init__(self, candidates: int) -> None:
        self.candidates = candidates
        self.threat = ThreatModel(leaked=None, decoder=True, queries=True)
        self._decode: Decode | None = None
        self._query: Query | None = None

    def fit(self, inputs: AttackInputs) -> None:
        needs(inputs.decode, "decoder")
        needs(inputs.query, "query access")
        self._decode, self._query = inputs.decode, inputs.query

    def invert(self, vectors: np.ndarray) -> Inversion:
        assert self._decode is not None and self._query is not None, "fit first"
        found = self._decode(vectors, self.candidates)
        pool = sorted({sentence for row in found for sentence in row})
        index = {sentence: i for i, sentence in enumerate(pool)}
        embedded = unit_rows(self._query(pool)) if pool else np.zeros((0, vectors.shape[1]))
        targets = unit_rows(vectors)
        sentences, scores = [], []
        for target, row in zip(targets, found, strict=True):
            if not row:
                sentences.append("")
                scores.append(0.0)
                continue
            cosines = embedded[[index[s] for s in row]] @ target
            best = int(np.argmax(cosines))  # the first among equals: the decoder's best first
            sentences.append(row[best])
            scores.append(float(cosines[best]))
        return Inversion(sentences=sentences, scores=scores)
