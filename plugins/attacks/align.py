"""Few-shot alignment (ALGEN, Chen et al. 2025, Sec. 3: a linear map from the victim's
embedding space into an attacker's own, fitted on a few leaked pairs, then decoded by the
attacker's decoder): ridge regression from the attacked vectors to a surrogate encoder's
vectors of the same k leaked sentences, its penalty chosen by leave-one-out error on those k
pairs, the mapped vectors read by the surrogate's own decoder.

Noise augmentation, the attacker's use of its query access (`ThreatModel(queries=True)`): the
map is closed-form, not trained in epochs, so the augmentation is in the data. Under a
randomised defence the store answers each query with fresh noise: the attacker re-encodes its
k leaked texts through the store R - 1 times (`draws` = R) and fits the ridge regression on the
R draws stacked (the stored vectors first, kR rows) against the surrogate's vectors repeated R
times, which is the ridge fit on noise-augmented data: it sees R draws of the noise the
attacked vectors carry rather than one. The leave-one-out error then leaves a pair out with all
its draws (`ridge_loo`'s `draws`), so that no draw of a left-out sentence helps predict it. A
deterministic store (the first query equals the stored vectors exactly, or a query equals the
one before: `Redraws`) gives one draw, the ALGEN fit on the k stored pairs."""

from __future__ import annotations

import numpy as np

from harness.plugin import AttackInputs, Decode, Inversion, ThreatModel

from .draws import Redraws

PENALTIES = 10.0 ** np.arange(-4, 5)
"""Ridge penalties tried, as multiples of the mean squared singular value of the inputs."""


def ridge_loo(x: np.ndarray, y: np.ndarray, penalties: np.ndarray = PENALTIES,
              draws: int = 1) -> tuple[float, np.ndarray]:
    """The penalty (of `penalties` x mean s^2) with the least leave-one-out squared error of the
    ridge regression of `y` on `x` with an intercept, and that error for every penalty.

    With the centred inputs X = U S V^T, the hat matrix of penalty l is H = U diag(s^2 /
    (s^2 + l)) U^T plus 1/n for the intercept, and the leave-one-out residual of row i is
    (y_i - yhat_i) / (1 - H_ii) (Hastie, Tibshirani & Friedman 2009, Eq. 7.52, exact for
    linear smoothers).

    With `draws` = R > 1 the rows are R blocks of k = n / R, row i of every block a draw of
    the same pair, and a pair is left out with all its draws: its R residuals are (I - H_gg)^-1
    (y_g - yhat_g), H_gg the R x R block of H on its rows (the deletion formula for a block of
    rows, exact for a penalised least-squares fit as for one row). R = 1 is the formula above."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = len(x)
    if draws < 1 or n % draws:
        raise ValueError(f"{n} rows are not {draws} blocks of equal size")
    k = n // draws
    xc, yc = x - x.mean(axis=0), y - y.mean(axis=0)
    u, s, _ = np.linalg.svd(xc, full_matrices=False)
    scale = float(np.mean(s ** 2)) or 1.0
    grouped = u.reshape(draws, k, -1).transpose(1, 0, 2)  # (k, R, m): each pair's rows of U
    errors = []
    for penalty in penalties * scale:
        shrink = s ** 2 / (s ** 2 + penalty)
        fitted = u @ (shrink[:, None] * (u.T @ yc))
        if draws == 1:
            leverage = (u ** 2) @ shrink + 1.0 / n
            residual = (yc - fitted) / np.maximum(1.0 - leverage, 1e-12)[:, None]
        else:
            blocks = np.einsum("grm,m,gsm->grs", grouped, shrink, grouped) + 1.0 / n
            own = (yc - fitted).reshape(draws, k, -1).transpose(1, 0, 2)  # (k, R, out)
            residual = np.linalg.solve(np.eye(draws) - blocks, own)
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
    the run; the core picks one when None), decoded by that encoder's own decoder, fitted on
    up to `draws` draws of the leaked pairs' vectors (the stored ones and `draws` - 1 queries of
    their texts; one under a deterministic defence or without query access)."""

    def __init__(self, pairs: int, surrogate: str | None = None, draws: int = 4) -> None:
        if draws < 1:
            raise ValueError(f"align needs at least one draw, got {draws}")
        self.pairs, self.surrogate, self.draws = pairs, surrogate, draws
        # The surrogate's decoder is trained on the public corpus (the run's training text);
        # queries re-encode the leaked texts with fresh noise (noise augmentation).
        self.threat = ThreatModel(leaked=pairs, surrogate=True, public=True, queries=True)
        self.label = f"align-{pairs}"
        self.penalty = 0.0
        self.used = 0
        """The draws the map was fitted on (1 under a deterministic store)."""
        self._map: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._decode: Decode | None = None

    def fit(self, inputs: AttackInputs) -> None:
        """The ridge map on the stacked draws (`draws` x k rows against the surrogate's vectors
        repeated), its penalty by leaving each pair out with all its draws."""
        if inputs.surrogate_vectors is None or inputs.surrogate_decode is None:
            raise ValueError("align needs a surrogate encoder's vectors and decoder")
        redraws = Redraws(np.asarray(inputs.vectors, dtype=np.float32), inputs.texts,
                          inputs.query)
        stacked = [redraws.next()]
        while len(stacked) < self.draws and not redraws.settled:
            found = redraws.next()
            if found is stacked[-1]:  # a deterministic store: no draw of its own
                break
            stacked.append(found)
        self.used = len(stacked)
        x = np.concatenate(stacked)
        y = np.tile(np.asarray(inputs.surrogate_vectors), (self.used, 1))
        self.penalty, _ = ridge_loo(x, y, draws=self.used)
        self._map = ridge(x, y, self.penalty)
        self._decode = inputs.surrogate_decode

    def invert(self, vectors: np.ndarray) -> Inversion:
        assert self._map is not None and self._decode is not None, "fit first"
        x_mean, weights, y_mean = self._map
        mapped = ((np.asarray(vectors, dtype=np.float64) - x_mean) @ weights + y_mean)
        return Inversion(sentences=[found[0] if found else ""
                                    for found in self._decode(mapped.astype(np.float32), 1)])
