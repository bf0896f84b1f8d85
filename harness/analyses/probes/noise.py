"""Noise robustness: how fast what a decoder recovers from an encoder's vectors degrades when the
vectors are perturbed.

Each test vector x gets Gaussian noise, x + s * sigma * z, z ~ N(0, I) drawn once with the
probe's seed (the same draw at every scale, so the curve is smooth), sigma the per-dimension
standard deviation of the encoder's test vectors and s the relative scale. Scaling by sigma
makes scales comparable across encoders whose vectors live on different scales. At each scale
(and at 0, the baseline) the noisy vectors are decoded and scored: Id (outputs equal to their
input, a rate with its exact interval) and corpus BLEU.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from harness.analyses.probes.results import NoisePoint, NoiseRobustness
from harness.analyses.probes.scoring import corpus_bleu, rate, same


def noise_scales(scales: Sequence[float]) -> list[float]:
    """The scales probed: 0 (the baseline) and then `scales` in increasing order."""
    return [0.0, *sorted(float(s) for s in scales if s > 0)]


def noisy_vectors(vectors: np.ndarray, sigma: np.ndarray, scales: Sequence[float], seed: int
                  ) -> list[np.ndarray]:
    """`vectors` (n, D) plus scale * sigma * z for each scale, z one seeded N(0, I) draw."""
    vectors = np.asarray(vectors, dtype=np.float64)
    z = np.random.default_rng(seed).standard_normal(vectors.shape)
    return [(vectors + scale * np.asarray(sigma, dtype=np.float64)[None, :] * z
             ).astype(np.float32) for scale in scales]


def score_noise(references: Sequence[str], outputs: Sequence[Sequence[str]],
                scales: Sequence[float], seed: int) -> NoiseRobustness:
    """Id and BLEU of each scale's outputs against the references."""
    points = [NoisePoint(scale=float(scale),
                         id=rate(sum(same(o, r) for o, r in zip(decoded, references)),
                                 len(references)),
                         bleu=corpus_bleu(decoded, references))
              for scale, decoded in zip(scales, outputs)]
    return NoiseRobustness(sentences=len(references), seed=seed, points=points)


def noise_robustness(vectors: np.ndarray, sigma: np.ndarray, references: Sequence[str],
                     scales: Sequence[float], seed: int,
                     decode: Callable[[np.ndarray], list[str]]) -> NoiseRobustness:
    """Decode the vectors at scale 0 and at each of `scales` (all in one batch) and score each
    scale's outputs against `references`."""
    probed = noise_scales(scales)
    batches = noisy_vectors(vectors, sigma, probed, seed)
    decoded = decode(np.concatenate(batches))
    n = len(references)
    return score_noise(references, [decoded[i * n:(i + 1) * n] for i in range(len(probed))],
                       probed, seed)
