"""The first-party defences' transforms, in numpy: each learns what it needs from the training
vectors (`fit`) and maps blocks of rows (`transform`), drawing any noise from the generator the
core hands it (`harness.protocols.Defence`)."""

from __future__ import annotations

import numpy as np


def _float32(vectors: np.ndarray) -> np.ndarray:
    return np.asarray(vectors, dtype=np.float32)


class GaussianNoise:
    """x + N(0, (scale * sigma_d)^2) per dimension d, where sigma_d is the training vectors'
    standard deviation in that dimension: noise measured in each dimension's own spread, so one
    `scale` means the same for every encoder."""

    def __init__(self, scale: float) -> None:
        self.scale = scale
        self.sigma: np.ndarray | None = None

    def fit(self, vectors: np.ndarray) -> None:
        self.sigma = np.asarray(vectors, dtype=np.float64).std(axis=0)

    def transform(self, vectors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        assert self.sigma is not None, "fit before transform"
        noise = rng.standard_normal(vectors.shape) * (self.scale * self.sigma)
        return _float32(vectors + noise)

    def output_dim(self, dim: int) -> int:
        return dim

    def describe(self) -> str:
        return f"Gaussian noise, {self.scale:g} x each dimension's spread"


class LaplaceMechanism:
    """The Laplace mechanism of local differential privacy on whole vectors: each vector is
    clipped to L1 norm C, x' = x * min(1, C / |x|_1), then Laplace noise of scale b = 2C /
    epsilon is added to every coordinate. Any two clipped vectors differ by at most 2C in L1
    norm, so the released vector is epsilon-differentially private for its input (Dwork & Roth
    2014, The Algorithmic Foundations of Differential Privacy, Theorem 3.6, with sensitivity
    2C). C is the `clip_quantile` quantile of the training vectors' L1 norms. `budget(d)`
    adds what epsilon means per dimension."""

    def __init__(self, epsilon: float, clip_quantile: float) -> None:
        self.epsilon, self.clip_quantile = epsilon, clip_quantile
        self.clip: float | None = None
        self.dim: int | None = None

    def fit(self, vectors: np.ndarray) -> None:
        norms = np.abs(np.asarray(vectors, dtype=np.float64)).sum(axis=1)
        self.clip = float(np.quantile(norms, self.clip_quantile))
        self.dim = np.asarray(vectors).shape[1]

    @property
    def noise_scale(self) -> float:
        """b = 2C / epsilon."""
        assert self.clip is not None, "fit before transform"
        return 2.0 * self.clip / self.epsilon

    def clipped(self, vectors: np.ndarray) -> np.ndarray:
        """Each row scaled down to L1 norm C where it is longer."""
        assert self.clip is not None, "fit before transform"
        x = np.asarray(vectors, dtype=np.float64)
        norms = np.abs(x).sum(axis=1, keepdims=True)
        return x * np.minimum(1.0, self.clip / np.maximum(norms, np.finfo(np.float64).tiny))

    def transform(self, vectors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        x = self.clipped(vectors)
        return _float32(x + rng.laplace(0.0, self.noise_scale, size=x.shape))

    def output_dim(self, dim: int) -> int:
        return dim

    def budget(self, dim: int) -> dict[str, float]:
        """epsilon per vector, and epsilon / d per dimension: a coordinate's share when the
        L1 mass C is spread evenly over the d coordinates (|x_j| <= C / d, sensitivity 2C / d
        against noise 2C / epsilon), the d shares adding up to epsilon by basic composition
        (Dwork & Roth 2014, Theorem 3.16). A coordinate holding all the mass is worth all of
        epsilon."""
        return {"epsilon": self.epsilon, "epsilon_per_dimension": self.epsilon / dim}

    def describe(self) -> str:
        said = f"L1 clip, Laplace noise: epsilon {self.epsilon:g} per vector"
        if self.dim is not None:
            said += f", {self.epsilon / self.dim:.3g} per dimension of {self.dim}"
        return said


class GaussianMechanism:
    """The Gaussian mechanism of local differential privacy on whole vectors: each vector is
    clipped to L2 norm C, x' = x * min(1, C / |x|_2), then N(0, sigma^2 I) is added. Any two
    clipped vectors differ by at most Delta = 2C in L2 norm, and sigma is calibrated to it
    (`calibration`):

    - "classic": sigma = sqrt(2 ln(1.25 / delta)) * 2C / epsilon (Dwork & Roth 2014, Theorem
      A.1), valid for epsilon < 1 only: a larger epsilon is refused (the options say so);
    - "analytic": the smallest sigma for which the release is (epsilon, delta)-DP, from the
      exact condition of Balle & Wang 2018 (Theorem 8), solved with scipy, for any epsilon.

    C is the `clip_quantile` quantile of the training vectors' L2 norms. The noise's L2 norm
    per vector grows as sigma sqrt(d) with the width d (Laplace noise of scale b: b d in L1),
    sigma per coordinate being set by the whole vector's sensitivity."""

    def __init__(self, epsilon: float, delta: float, clip_quantile: float,
                 calibration: str = "classic") -> None:
        self.epsilon, self.delta, self.clip_quantile = epsilon, delta, clip_quantile
        self.calibration = calibration
        self.clip: float | None = None
        self.dim: int | None = None
        self._sigma: float | None = None

    def fit(self, vectors: np.ndarray) -> None:
        from .calibration import gaussian_sigma

        x = np.asarray(vectors, dtype=np.float64)
        self.clip = float(np.quantile(np.linalg.norm(x, axis=1), self.clip_quantile))
        self.dim = x.shape[1]
        self._sigma = (0.0 if self.clip == 0 else gaussian_sigma(
            self.calibration, self.epsilon, self.delta, self.sensitivity))

    @property
    def sensitivity(self) -> float:
        """Delta = 2C, the L2 distance between any two clipped vectors at most."""
        assert self.clip is not None, "fit before transform"
        return 2.0 * self.clip

    @property
    def sigma(self) -> float:
        """The noise's standard deviation per coordinate (0 when every vector clips to 0)."""
        assert self._sigma is not None, "fit before transform"
        return self._sigma

    def clipped(self, vectors: np.ndarray) -> np.ndarray:
        """Each row scaled down to L2 norm C where it is longer."""
        assert self.clip is not None, "fit before transform"
        x = np.asarray(vectors, dtype=np.float64)
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        return x * np.minimum(1.0, self.clip / np.maximum(norms, np.finfo(np.float64).tiny))

    def transform(self, vectors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        x = self.clipped(vectors)
        return _float32(x + rng.standard_normal(x.shape) * self.sigma)

    def output_dim(self, dim: int) -> int:
        return dim

    def budget(self, dim: int) -> dict[str, float]:
        """(epsilon, delta) per vector, and per dimension the epsilon at the same delta of one
        coordinate whose share of the sensitivity is 2C / sqrt(d), the L2 mass spread evenly:
        Gaussian mechanisms compose in L2, so the d shares make up the vector's
        (`calibration.per_dimension_epsilon`; classic: epsilon / sqrt(d))."""
        from .calibration import per_dimension_epsilon

        per_dimension = (0.0 if self.sensitivity == 0 else per_dimension_epsilon(
            self.calibration, self.epsilon, self.delta, self.sigma, self.sensitivity, dim))
        return {"epsilon": self.epsilon, "delta": self.delta,
                "epsilon_per_dimension": per_dimension}

    def describe(self) -> str:
        said = (f"L2 clip, Gaussian noise ({self.calibration}): epsilon {self.epsilon:g}, "
                f"delta {self.delta:g} per vector")
        if self.clip is not None and self.dim is not None:
            per_dimension = self.budget(self.dim)["epsilon_per_dimension"]
            said += f", {per_dimension:.3g} per dimension of {self.dim}"
        return said


class UniformQuantiser:
    """Each dimension clipped to its training range [lo_d, hi_d] and rounded to the nearest of
    2^bits evenly spaced values spanning it (the released vector is the values, not the codes);
    a dimension constant in training keeps that constant."""

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.low: np.ndarray | None = None
        self.high: np.ndarray | None = None

    def fit(self, vectors: np.ndarray) -> None:
        x = np.asarray(vectors, dtype=np.float64)
        self.low, self.high = x.min(axis=0), x.max(axis=0)

    def transform(self, vectors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        assert self.low is not None and self.high is not None, "fit before transform"
        levels = 2 ** self.bits - 1
        span = self.high - self.low
        step = np.where(span > 0, span / levels, 1.0)
        x = np.clip(np.asarray(vectors, dtype=np.float64), self.low, self.high)
        codes = np.rint((x - self.low) / step)
        return _float32(np.where(span > 0, self.low + codes * step, self.low))

    def output_dim(self, dim: int) -> int:
        return dim

    def describe(self) -> str:
        return f"uniform quantisation, {self.bits} bits per dimension"


class Binariser:
    """The sign of each dimension about its training median: +1 at or above, -1 below (one bit
    per dimension, the codes themselves released)."""

    def __init__(self) -> None:
        self.median: np.ndarray | None = None

    def fit(self, vectors: np.ndarray) -> None:
        self.median = np.median(np.asarray(vectors, dtype=np.float64), axis=0)

    def transform(self, vectors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        assert self.median is not None, "fit before transform"
        return np.where(np.asarray(vectors) >= self.median, 1.0, -1.0).astype(np.float32)

    def output_dim(self, dim: int) -> int:
        return dim

    def describe(self) -> str:
        return "sign of each dimension about its training median"


class PcaTruncation:
    """The training vectors' first `dims` principal components: y = (x - mean) V_k, V_k the
    eigenvectors of the training covariance with the k largest eigenvalues, each signed so that
    its largest-magnitude entry is positive (a deterministic basis)."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self.mean: np.ndarray | None = None
        self.basis: np.ndarray | None = None

    def fit(self, vectors: np.ndarray) -> None:
        x = np.asarray(vectors, dtype=np.float64)
        self.mean = x.mean(axis=0)
        centred = x - self.mean
        values, vectors_ = np.linalg.eigh(centred.T @ centred)
        keep = min(self.dims, x.shape[1])
        basis = vectors_[:, np.argsort(values)[::-1][:keep]]
        signs = np.sign(basis[np.abs(basis).argmax(axis=0), np.arange(keep)])
        self.basis = basis * np.where(signs == 0, 1.0, signs)

    def transform(self, vectors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        assert self.mean is not None and self.basis is not None, "fit before transform"
        return _float32((np.asarray(vectors, dtype=np.float64) - self.mean) @ self.basis)

    def output_dim(self, dim: int) -> int:
        return min(self.dims, dim)

    def describe(self) -> str:
        return f"PCA to {self.dims} dimensions"


class RandomRotation:
    """x Q, Q a random orthogonal matrix drawn from the Haar measure with the defender's `key`
    (the Q factor of a Gaussian matrix's QR decomposition, columns signed by R's diagonal;
    Mezzadri 2007, How to generate random matrices from the classical compact groups). It keeps
    every distance and inner product, so an attacker trained on rotated vectors should read as
    much as without it: a sanity check of the attack, not a defence."""

    def __init__(self, key: int) -> None:
        self.key = key
        self.rotation: np.ndarray | None = None

    def fit(self, vectors: np.ndarray) -> None:
        dim = np.asarray(vectors).shape[1]
        gaussian = np.random.default_rng(self.key).standard_normal((dim, dim))
        q, r = np.linalg.qr(gaussian)
        self.rotation = q * np.where(np.diag(r) < 0, -1.0, 1.0)

    def transform(self, vectors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        assert self.rotation is not None, "fit before transform"
        return _float32(np.asarray(vectors, dtype=np.float64) @ self.rotation)

    def output_dim(self, dim: int) -> int:
        return dim

    def describe(self) -> str:
        return "random orthogonal rotation"
