"""Few-shot alignment (ALGEN, Chen et al. 2025, Sec. 3: a linear map from the victim's
embedding space into an attacker's own, fitted on a few leaked pairs, then decoded by the
attacker's decoder): ridge regression from the attacked vectors to a surrogate encoder's
vectors of the same k leaked sentences, its penalty chosen by leave-one-out error on those k
pairs, the mapped vectors read by the surrogate's own decoder."""

from __future__ import annotations

import numpy as np

from harness.plugin import AttackInputs, Decode, Inversion, ThreatModel

PENALTIES = 10.0 ** np.arange(-4, 5)
"""Ridge penalties tried, as multiples of the mean squared singular value of the inputs."""


def ridge_loo(x: np.ndarray, y: np.ndarray, penalties: np.ndarray = PENALTIES
              ) -> tuple[float, np.ndarray]:
    """The penalty (of `penalties` x mean s^2) with the least leave-one-out squared error of the
    ridge regression of `y` on `x` with an intercept, and that error for every penalty.

    With the centred inputs X = U S V^T, the hat matrix of penalty l is H = U diag(s^2 /
    (s^2 + l)) U^T plus 1/n for the intercept, and the leave-one-out residual of row i is
    (y_i - yhat_i) / (1 - H_ii) (Hastie, Tibshirani & Friedman 2009, Eq. 7.52, exact for
    linear smoothers)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = len(x)
    xc, yc = x - x.mean(axis=0), y - y.mean(axis=0)
    u, s, _ = np.linalg.svd(xc, full_matrices=False)
    scale = float(np.mean(s ** 2)) or 1.0
    errors = []
    for penalty in penalties * scale:
        shrink = s ** 2 / (s ** 2 + penalty)
        fitted = u @ (shrink[:, None] * (u.T @ yc))
        leverage = (u ** 2) @ shrink + 1.0 / n
        residual = (yc - fitted) / np.maximum(1.0 - leverage, 1e-12)[:, None]
        errors.append(float(np.sum(residual ** 2)))
    errors_array = np.asarray(errors)
    return float(penalties[int(np.argmin(errors_array))] * scale), errors_array


def ridge(x: np.ndarray, y: np.ndarray, penalty: float) -> tuple[np.ndarray, np.ndarray,
                                                                  np.ndarray]:
    """(x mean, weights, y mean) of the ridge regression of `y` on `x` with an intercept:
    predict with (x - x_mean) @ weights + y_mean."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    x_mean, y_mean = x.mean(axis=0), y.mean(axis=0)
    u, s, vt = np.linalg.svd(x - x_mean, full_matrices=False)
    weights = vt.T @ ((s / (s ** 2 + penalty))[:, None] * (u.T @ (y - y_mean)))
    return x_mean, weights, y_mean


class Align:
    """ALGEN's alignment with `pairs` leaked pairs into the space of `surrogate` (an encoder of
    the run; the core picks one when None), decoded by that encoder's own decoder."""

    def __init__(self, pairs: int, surrogate: str | None = None) -> None:
        self.pairs, self.surrogate = pairs, surrogate
        # The surrogate's decoder is trained on the public corpus (the run's training text).
        self.threat = ThreatModel(leaked=pairs, surrogate=True, public=True)
        self.label = f"align-{pairs}"
        self.penalty = 0.0
        self._map: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._decode: Decode | None = None

    def fit(self, inputs: AttackInputs) -> None:
        if inputs.surrogate_vectors is None or inputs.surrogate_decode is None:
            raise ValueError("align needs a surrogate encoder's vectors and decoder")
        x, y = inputs.vectors, inputs.surrogate_vectors
        self.penalty, _ = ridge_loo(x, y)
        self._map = ridge(x, y, self.penalty)
        self._decode = inputs.surrogate_decode

    def invert(self, vectors: np.ndarray) -> Inversion:
        assert self._map is not None and self._decode is not None, "fit first"
        x_mean, weights, y_mean = self._map
        mapped = ((np.asarray(vectors, dtype=np.float64) - x_mean) @ weights + y_mean)
        return Inversion(sentences=[found[0] if found else ""
                                    for found in self._decode(mapped.astype(np.float32), 1)])
