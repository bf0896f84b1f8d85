"""A length-agreement metric: how close the output's length is to the input's."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class LengthMetric:
    """Score = 100 * mean over pairs of (1 - |len(h) - len(r)| / max(len(r), len(h), 1)).

    Lengths are whitespace tokens. Implements `harness.protocols.Metric` with one statistic per
    pair, its agreement in [0, 1]; the corpus score is their mean on the 0-100 scale.
    """

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """Return an (n, 1) array of per-pair length agreements in [0, 1]."""
        if len(references) != len(hypotheses):
            raise ValueError(f"got {len(references)} references but {len(hypotheses)} "
                             "hypotheses; each hypothesis needs exactly one reference")
        rows = np.zeros((len(references), 1), dtype=np.float64)
        for i, (reference, hypothesis) in enumerate(zip(references, hypotheses)):
            r, h = len(reference.split()), len(hypothesis.split())
            rows[i, 0] = 1.0 - abs(h - r) / max(r, h, 1)
        return rows

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Return 100 * summed agreement / count for totals (..., 1), over leading batch dims."""
        if count <= 0:
            raise ValueError(f"count must be positive, got {count}")
        return 100.0 * np.asarray(totals, dtype=np.float64)[..., 0] / count
