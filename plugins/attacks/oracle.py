"""Oracle ranking: the candidates (a public corpus) re-encoded through the store, each attacked
vector given the candidate under which it is likeliest, by the store's noise model as the
attacker's queries reveal it.

Queries draw fresh noise (docs/privacy.md), so a deterministic defence (quantisation, PCA,
rotation) answers a text with the very vector it stores: the true sentence, when it is among
the candidates, is found at cosine 1. Under a randomised defence the attacker queries each
candidate `repeats` times: the mean estimates the candidate's vector before noise (the clipped
clean vector of the Laplace and Gaussian mechanisms), the spread the noise's scale per
dimension, and the residuals its shape. An attacked vector y is then scored against each
candidate mean m by the log-likelihood of y - m: Gaussian, -sum_d (y_d - m_d)^2 / (2 v_d), or,
where the residuals are heavy-tailed (excess kurtosis above 1.5: Laplace's is 3, Gaussian's
0), Laplace, -sum_d |y_d - m_d| / b_d. v_d and b_d are the noise's variance and scale per
dimension widened by the mean's own error (a factor 1 + 1/repeats). Ranking by the likelihood
is the maximum-likelihood choice among the candidates (the MLE of the mechanism's input).

It is also a ranker (`harness.protocols.Ranker`): the canaries' candidate sentences are queried
the same way (`repeats` times under a randomised defence, their mean the estimate of each
candidate's vector before noise) and scored by the same likelihood given the canary's stored
vector. On clean vectors and under a deterministic defence the true candidate's query is the
stored vector itself, at cosine 1: the exposure is log2 M whenever the other candidates' vectors
differ from it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.plugin import AttackInputs, Inversion, Query, ThreatModel, unit_rows

CHUNK = 256
"""Attacked vectors scored against every candidate at once."""

HEAVY_TAILS = 1.5
"""Excess kurtosis above which the noise is modelled as Laplace rather than Gaussian."""


class OracleRanking:
    """The likeliest of the first `corpus` distinct public sentences for each attacked vector,
    each candidate queried `repeats` times under a randomised defence."""

    threat = ThreatModel(leaked=0, public=True, queries=True)

    def __init__(self, corpus: int, repeats: int) -> None:
        self.corpus, self.repeats = corpus, max(repeats, 2)  # a spread needs two
        self._sentences: list[str] = []
        self._means = np.zeros((0, 0))
        self._scale: np.ndarray | None = None  # None: deterministic, rank by cosine
        self._laplace = False
        self._query: Query | None = None

    def fit(self, inputs: AttackInputs) -> None:
        if inputs.public is None or inputs.query is None:
            raise ValueError("oracle ranking needs a public corpus and query access")
        self._query = inputs.query
        self._sentences = list(dict.fromkeys(inputs.public))[:self.corpus]
        if not self._sentences:
            return
        draws = [np.asarray(inputs.query(self._sentences), dtype=np.float64) for _ in range(2)]
        if np.array_equal(draws[0], draws[1]):
            self._means, self._scale = draws[0], None
            return
        draws += [np.asarray(inputs.query(self._sentences), dtype=np.float64)
                  for _ in range(self.repeats - 2)]
        stacked = np.stack(draws)  # (repeats, candidates, dim)
        self._means = stacked.mean(axis=0)
        residuals = stacked - self._means
        widen = 1.0 + 1.0 / len(draws)
        # the noise's variance per dimension, unbiased: each candidate's mean took one degree
        variance = (residuals ** 2).sum(axis=(0, 1)) / (residuals.shape[1] * (len(draws) - 1))
        kurtosis = float(np.mean(residuals ** 4) / max(np.mean(residuals ** 2) ** 2, 1e-300))
        self._laplace = kurtosis - 3.0 > HEAVY_TAILS
        if self._laplace:  # Laplace scale b = sd / sqrt(2)
            self._scale = np.sqrt(np.maximum(variance * widen, 1e-12) / 2.0)
        else:
            self._scale = np.maximum(variance * widen, 1e-12)

    def invert(self, vectors: np.ndarray) -> Inversion:
        if not self._sentences:
            return Inversion(sentences=[""] * len(vectors), scores=[0.0] * len(vectors))
        sentences, scores = [], []
        for start in range(0, len(vectors), CHUNK):
            found = self._log_likelihoods(np.asarray(vectors[start:start + CHUNK],
                                                     dtype=np.float64))
            best = found.argmax(axis=1)
            sentences += [self._sentences[i] for i in best]
            scores += found[np.arange(len(best)), best].tolist()
        return Inversion(sentences=sentences, scores=scores)

    def likelihood(self, vectors: np.ndarray, candidates: Sequence[Sequence[str]]
                   ) -> list[list[float]]:
        """Each vector's score of each of its candidates: the noise model's log-likelihood
        of the vector given the candidate's mean query (cosine under a deterministic store)."""
        if self._query is None:
            raise ValueError("oracle ranking needs query access: call fit first")
        texts = list(dict.fromkeys(text for found in candidates for text in found))
        means = self._mean_queries(texts)
        index = {text: i for i, text in enumerate(texts)}
        targets = np.asarray(vectors, dtype=np.float64)
        return [self._log_likelihoods(targets[row:row + 1],
                                      means[[index[t] for t in found]])[0].tolist()
                for row, found in enumerate(candidates)]

    def _mean_queries(self, texts: list[str]) -> np.ndarray:
        """The texts' vectors through the store: one query under a deterministic defence, else
        the mean of `repeats` (each draws fresh noise)."""
        assert self._query is not None
        total = np.asarray(self._query(texts), dtype=np.float64)
        if self._scale is None:
            return total
        for _ in range(self.repeats - 1):
            total += np.asarray(self._query(texts), dtype=np.float64)
        return total / self.repeats

    def _log_likelihoods(self, targets: np.ndarray, means: np.ndarray | None = None
                         ) -> np.ndarray:
        """(targets, candidates): cosine for a deterministic store, else the noise model's
        log-likelihood up to a constant; the candidates' mean queries `means` (default: the
        public corpus's)."""
        means = self._means if means is None else means
        if self._scale is None:
            return unit_rows(targets) @ unit_rows(means).T
        if self._laplace:
            weights = 1.0 / self._scale
            return -np.stack([np.abs(row - means) @ weights for row in targets])
        weights = 1.0 / (2.0 * self._scale)
        # -sum_d w_d (y_d - m_d)^2 = -(y^2 w) + 2 y (m w) - (m^2 w), over the candidates
        return (2.0 * targets @ (means * weights).T
                - (means ** 2) @ weights - ((targets ** 2) @ weights)[:, None])
