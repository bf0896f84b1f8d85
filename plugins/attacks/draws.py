"""Noise augmentation for a trained attack: the leaked texts' vectors drawn afresh through the
store each epoch (the attacker's query access, `ThreatModel.queries`), so that under a
randomised defence it learns from many draws of the noise rather than the one the store
holds."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.plugin import Query


class Redraws:
    """The vectors of a fixed list of texts drawn afresh through the store, one draw per call
    of `next()`: the stored vectors (`stored`, row i of `texts`) first, then `query(texts)` at
    every later call (`queries` counts them). A draw equal to the one before it exactly (the
    stored vectors for the first query) shows a deterministic store (no defence, or quantisation,
    PCA, rotation: a query returns what the store holds): it is `settled`, and every later call
    returns the previous draw again without querying. A store whose queries differ keeps being
    queried: a randomised defence, and also an encoder whose plain calls draw anew (the
    positional random-gaussian control, the floor's: fresh random vectors, as uninformative as
    the stored ones). Without `query` (or texts) it is settled from the start: the stored
    vectors at every call."""

    def __init__(self, stored: np.ndarray, texts: Sequence[str], query: Query | None) -> None:
        self.stored = np.asarray(stored, dtype=np.float32)
        self.texts = list(texts)
        self._query = query
        self.queries = 0
        self.settled = query is None or not self.texts
        self._last: np.ndarray | None = None

    def next(self) -> np.ndarray:
        """The next draw, (len(texts), dim) float32: the very array of the previous call once
        settled (compare with `is` to skip work that depends on it alone)."""
        if self._last is None:
            self._last = self.stored
            return self._last
        if self.settled or self._query is None:
            return self._last
        found = np.asarray(self._query(self.texts), dtype=np.float32)
        self.queries += 1
        if found.shape != self.stored.shape:
            raise ValueError(f"the store answered {len(self.texts)} texts with vectors of shape "
                             f"{found.shape}, its stored ones are {self.stored.shape}")
        if np.array_equal(found, self._last):
            self.settled = True
            return self._last
        self._last = found
        return found
