"""GEM, the geometric embedding (Yang, Zhu & Chen 2018, "Zero-training Sentence Embedding via
Orthogonal Basis", arXiv:1810.00438; EMNLP 2019 as "Parameter-free Sentence Embedding via
Orthogonal Basis"), over the run's subword vectors (Vec2Sent section 3, encoder (ii)).

The paper's Algorithm 1, with d-dimensional word vectors v_w:

fit, on the training corpus (`GeometricEmbedding.fit`):
  1. coarse sentence embedding of every sentence: with S = [v_w1 ... v_wn] = U diag(sigma) V^T,
     x = U sigma^3 (`coarse_sentence_embeddings`);
  2. D (d x K) = the first K principal vectors of X = [x_1 ... x_N], s their singular values
     (`principal_vectors`).

encode, for every sentence (`GeometricEmbedding.encode`):
  3. for every word w_i, the contextual window matrix
     S^i = [v_{w_i-m} ... v_{w_i-1}, v_{w_i+1} ... v_{w_i+m}, v_{w_i}]; Gram-Schmidt S^i = Q^i R^i
     gives q_i (last column of Q^i: the word's new orthogonal basis vector) and r (last column of
     R^i), so r_{-1} = |component of v_{w_i} orthogonal to its context| (`novel_components`);
  4. novelty alpha_n = exp(r_{-1} / ||r||_2), significance alpha_s = r_{-1} / (2m + 1),
     uniqueness alpha_u = exp(-||s_h * (q_i^T D_h)||_2 / h), where D_h, s_h are the h principal
     vectors with the largest sigma_j ||S^T d_j||_2 (sentence-dependent) (`word_weights`);
  5. c = sum_i (alpha_n + alpha_s + alpha_u) v_{w_i}; then c <- c - D D^T c
     (`remove_principal_components`).

Defaults follow the paper (m = 7, K = 45, h = 17, power 3; its vectors have 300 dimensions).
Details the paper leaves open follow the implementation the Vec2Sent code wraps
(fursovia/geometric_embedding): D are the left singular vectors of the uncentred X; near the
sentence boundaries the window holds fewer than 2m + 1 vectors and alpha_s divides by the number
it holds. Where a word lies in the span of its context (e.g. a repeated word), r_{-1} = 0 and
q_i = 0 (Gram-Schmidt meets a zero column), so alpha_u = 1. Singular vectors' signs, which the
paper's U sigma^3 depends on, are fixed so that each vector's largest-magnitude entry is
positive, making the fit reproducible across LAPACK builds. Step 5 removes all K corpus
directions, as that implementation does; the authors' own released code (ziyi-yang/GEM) removes
only the h sentence-dependent ones.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.plugin import DataError, HarnessError

from .options import GemOptions

VERSION = "1"

PRINCIPAL_VECTORS_FILE = "principal_vectors.npy"
SINGULAR_VALUES_FILE = "singular_values.npy"

GRAM_RCOND = 1e-10
"""Eigenvalues of a context's Gram matrix below this fraction of its largest are treated as zero
(context vectors that are linearly dependent, e.g. a repeated word)."""
SPAN_TOLERANCE = 1e-6
"""A word whose orthogonal component is below this fraction of its norm lies in its context's
span: rounding noise must not become a new basis vector q_i."""


def _largest_entry_positive(vectors: np.ndarray) -> np.ndarray:
    """Return singular vectors (..., d, r) with signs flipped so that each column's entry of
    largest magnitude is positive."""
    rows = np.argmax(np.abs(vectors), axis=-2)[..., None, :]
    signs = np.sign(np.take_along_axis(vectors, rows, axis=-2))
    return vectors * np.where(signs == 0, 1.0, signs)


def coarse_sentence_embeddings(sentences: np.ndarray, sigma_power: float = 3) -> np.ndarray:
    """Return the (B, d) coarse sentence embeddings U sigma^power of sentences given as stacked
    word-vector matrices (B, n, d), where S^T = U diag(sigma) V^T (Yang et al. 2018, Algorithm 1,
    coarse sentence embeddings: the power 3 weights the sentence's dominant directions)."""
    left, sigma, _ = np.linalg.svd(np.swapaxes(sentences, 1, 2), full_matrices=False)
    left = _largest_entry_positive(left)
    return np.einsum("bdr,br->bd", left, sigma ** sigma_power)


def principal_vectors(scatter: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the first k principal vectors D (d, k) of X and their singular values s (k,), given
    the scatter matrix X X^T (d, d) of the coarse embeddings X (d, N) (Algorithm 1:
    "take the first K principal vectors of X").

    The eigenvectors of X X^T are X's left singular vectors and its eigenvalues the squared
    singular values; accumulating X X^T keeps memory at d x d for any corpus size.
    """
    eigenvalues, eigenvectors = np.linalg.eigh(scatter)
    top = np.argsort(eigenvalues)[::-1][:k]
    vectors = _largest_entry_positive(eigenvectors[:, top])
    return vectors, np.sqrt(np.clip(eigenvalues[top], 0.0, None))


def context_windows(n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Return, for each of n words, the positions of its context words w_{i-m..i-1, i+1..i+m}
    (n, 2m) and which of them lie inside the sentence (n, 2m); outside positions hold 0."""
    offsets = np.concatenate([np.arange(-m, 0), np.arange(1, m + 1)])
    positions = np.arange(n)[:, None] + offsets[None, :]
    inside = (positions >= 0) & (positions < n)
    return np.where(inside, positions, 0), inside


def novel_components(sentences: np.ndarray, m: int) -> np.ndarray:
    """Return, for each word of sentences (B, n, d), the component of its vector orthogonal to
    the span of its context window (B, n, d): r_{-1} q_i, the last step of Gram-Schmidt on the
    contextual window matrix S^i (Yang et al. 2018, Algorithm 1: QR of S^i by Gram-Schmidt).

    The projection onto the context's span is solved through the window's Gram matrix with a
    pseudo-inverse, so linearly dependent context vectors (repeated words, windows wider than
    the dimension) give the span Gram-Schmidt would, all windows of a sentence at once.
    """
    batch, n, _ = sentences.shape
    if m == 0 or n == 1:
        return sentences.copy()
    positions, inside = context_windows(n, m)
    weight = inside.astype(sentences.dtype)
    gram = sentences @ np.swapaxes(sentences, 1, 2)                          # (B, n, n)
    window_gram = (gram[:, positions[:, :, None], positions[:, None, :]]
                   * (weight[:, :, None] * weight[:, None, :]))              # (B, n, 2m, 2m)
    overlap = gram[:, np.arange(n)[:, None], positions] * weight             # (B, n, 2m)
    eigenvalues, eigenvectors = np.linalg.eigh(window_gram)
    keep = eigenvalues > GRAM_RCOND * np.maximum(eigenvalues[..., -1:], np.finfo(float).tiny)
    inverse = np.where(keep, 1.0 / np.where(keep, eigenvalues, 1.0), 0.0)
    rotated = np.einsum("bnij,bni->bnj", eigenvectors, overlap) * inverse
    coefficients = np.einsum("bnij,bnj->bni", eigenvectors, rotated)         # (B, n, 2m)
    residual = sentences.copy()
    offsets = np.concatenate([np.arange(-m, 0), np.arange(1, m + 1)])
    for column, offset in enumerate(offsets):  # one context position at a time: no (B,n,2m,d)
        rows = np.arange(max(0, -offset), min(n, n - offset))
        if len(rows):
            residual[:, rows] -= coefficients[:, rows, column, None] * sentences[:, rows + offset]
    return residual


def word_weights(sentences: np.ndarray, residual: np.ndarray, directions: np.ndarray,
                 singular_values: np.ndarray, h: int, window_sizes: np.ndarray) -> np.ndarray:
    """Return each word's weight alpha_n + alpha_s + alpha_u (B, n) (Yang et al. 2018,
    Algorithm 1: the novelty, significance and uniqueness scores).

    `residual` is `novel_components(sentences, m)`; `directions` D (d, K) and `singular_values`
    s (K,) come from the fit; `window_sizes` (n,) counts the vectors in each word's window (2m + 1
    inside the sentence). The h principal vectors used for uniqueness are the sentence's own:
    those with the largest s_j ||S^T d_j||_2.
    """
    norms = np.linalg.norm(sentences, axis=-1)                               # ||r||_2 = ||v_w||
    novel = np.linalg.norm(residual, axis=-1)                                # r_{-1}
    novel = np.where(novel <= SPAN_TOLERANCE * norms, 0.0, novel)
    novelty = np.exp(np.divide(novel, norms, out=np.zeros_like(novel), where=norms > 0))
    significance = novel / window_sizes
    basis = np.divide(residual, novel[..., None], out=np.zeros_like(residual),
                      where=novel[..., None] > 0)                            # q_i
    alignment = singular_values * np.linalg.norm(sentences @ directions, axis=1)   # (B, K)
    top = np.argsort(-alignment, axis=1, kind="stable")[:, :h]               # (B, h)
    projections = np.take_along_axis(basis @ directions, top[:, None, :], axis=2)  # (B, n, h)
    scaled = singular_values[top][:, None, :] * projections
    uniqueness = np.exp(-np.linalg.norm(scaled, axis=-1) / h)
    return novelty + significance + uniqueness


def remove_principal_components(vectors: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """Return vectors (B, d) minus their projection on the principal vectors D (d, K):
    c <- c - D D^T c (Yang et al. 2018, Algorithm 1, last step; cf. Arora et al. 2017's
    common-component removal)."""
    return vectors - (vectors @ directions) @ directions.T


def _by_length(ids: Sequence[Sequence[int]]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield (rows, ids (B, n)) for each sentence length n > 0 among `ids`."""
    groups: dict[int, list[int]] = defaultdict(list)
    for row, sentence in enumerate(ids):
        if len(sentence):
            groups[len(sentence)].append(row)
    for length in sorted(groups):
        rows = np.asarray(groups[length])
        yield rows, np.asarray([ids[r] for r in rows], dtype=np.int64).reshape(len(rows), length)


class GeometricEmbedding:
    """GEM sentence vectors over the run's subword vectors; `fit` computes the corpus' principal
    vectors, saved as `.npy` files (see the module docstring for the algorithm)."""

    fit_version = VERSION  # part of the fit stage's cache key

    name = "gem"

    def __init__(self, vocab: Any, options: GemOptions) -> None:
        self.vocab = vocab
        self.options = options
        self.window = int(options.window)
        self.k = int(options.k)
        self.h = int(options.h)
        self.sigma_power = options.sigma_power
        if self.k >= self.dim:
            raise HarnessError(
                f"encoder 'gem': k={self.k} principal vectors would remove all {self.dim} "
                f"dimensions of the subword vectors; set k below {self.dim} (the paper removes "
                "45 of 300)")
        self.directions: np.ndarray | None = None
        self.singular_values: np.ndarray | None = None

    @property
    def dim(self) -> int:
        """The subword vector dimension (GEM weights and sums word vectors)."""
        return int(self.vocab.vectors.shape[1])

    def fingerprint(self) -> str:
        """Name, module version and options; the fitted state is keyed by the fit stage."""
        return f"{self.name}/{VERSION}/{self.options.model_dump_json()}"

    def declares(self) -> dict[str, Any]:
        """The subword vectors GEM weights and sums, by name (`harness.results.declarations.pooled_vectors`;
        none when the vocabulary cannot say what it is), every option that changes the vectors
        (the window m, the K principal vectors removed, the h of the uniqueness score, the power
        of the singular values), and the dimension. The paper's values are the defaults
        (`GemOptions`: m = 7, K = 45, h = 17, power 3, Yang et al.'s)."""
        from harness.plugin import pooled_vectors

        vectors = pooled_vectors(self.vocab)
        return {**({"vectors": vectors} if vectors else {}), "window": self.window, "k": self.k,
                "h": self.h, "sigma_power": float(self.sigma_power), "dim": self.dim}

    def _table(self) -> np.ndarray:
        return np.asarray(self.vocab.vectors, dtype=np.float64)

    def fit(self, sentences: Sequence[str], batch_size: int = 1024) -> None:
        """Compute the first k principal vectors of the corpus' coarse sentence embeddings."""
        table = self._table()
        scatter = np.zeros((self.dim, self.dim))
        count = 0
        for begin in range(0, len(sentences), batch_size):
            ids = self.vocab.encode(list(sentences[begin:begin + batch_size]))
            for _, group in _by_length(ids):
                coarse = coarse_sentence_embeddings(table[group], self.sigma_power)
                scatter += coarse.T @ coarse
                count += len(group)
        if count == 0:
            raise HarnessError("encoder 'gem': no non-empty training sentence to fit on; check "
                               "the corpus' train split")
        # X has rank at most N: with fewer sentences than k, only N directions exist.
        self.directions, self.singular_values = principal_vectors(scatter, min(self.k, count))

    def save(self, directory: Path) -> None:
        """Write the principal vectors and singular values as `.npy` files."""
        directions, singular_values = self._fitted()
        directory = Path(directory)
        np.save(directory / PRINCIPAL_VECTORS_FILE, directions)
        np.save(directory / SINGULAR_VALUES_FILE, singular_values)

    def load(self, directory: Path) -> None:
        """Read the state written by `save`."""
        directory = Path(directory)
        try:
            directions = np.load(directory / PRINCIPAL_VECTORS_FILE, allow_pickle=False)
            singular_values = np.load(directory / SINGULAR_VALUES_FILE, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise DataError(f"{directory}: cannot read gem's fitted state ({exc}); delete the "
                            "directory to fit again") from None
        if (directions.ndim != 2 or directions.shape[0] != self.dim
                or singular_values.shape != directions.shape[1:]):
            raise DataError(f"{directory}: gem's principal vectors have shape {directions.shape} "
                            f"for subword dimension {self.dim}; delete the directory to fit again")
        self.directions, self.singular_values = directions, singular_values

    def _fitted(self) -> tuple[np.ndarray, np.ndarray]:
        if self.directions is None or self.singular_values is None:
            raise HarnessError("encoder 'gem' is not fitted: call fit(sentences) or load(directory)")
        return self.directions, self.singular_values

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return the (n, dim) float32 GEM vectors; an empty sentence maps to zeros."""
        directions, singular_values = self._fitted()
        h = min(self.h, directions.shape[1])
        table = self._table()
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        for begin in range(0, len(sentences), max(1, batch_size)):
            ids = self.vocab.encode(list(sentences[begin:begin + batch_size]))
            for rows, group in _by_length(ids):
                words = table[group]                                         # (B, n, d)
                _, inside = context_windows(group.shape[1], self.window)
                weights = word_weights(words, novel_components(words, self.window), directions,
                                       singular_values, h, 1.0 + inside.sum(axis=1))
                vectors = np.einsum("bn,bnd->bd", weights, words)
                out[begin + rows] = remove_principal_components(vectors, directions)
        return out
