"""Random-weight sentence encoders of Wieting & Kiela (2019), "No Training Required: Exploring
Random Encoders for Sentence Classification" (ICLR), section 3, over frozen word vectors (the
run's subwords, or GloVe 6B 50-d):

- `borep`, bag of random embedding projections (section 3.1): h = pool_t(W e_t), W a (D, d)
  matrix with entries drawn uniformly from [-1/sqrt(d), 1/sqrt(d)];
- `esn`, an echo state network (section 3.3), bidirectional:
  h~_t = tanh(W_in e_t + W_h h_{t-1} + b),  h_t = (1 - a) h_{t-1} + a h~_t,
  with W_in uniform in [-s, s] (`input_scale`), W_h uniform in [-0.5, 0.5], a `sparsity` share
  of each column set to zero and the whole scaled to the given spectral radius (the echo state
  property), b uniform in [-s, s]; the sentence vector is the maximum over time of
  [h_fw(t); h_bw(t)].

Their third, BiLSTM-Max with random weights, is the `random-lstm` control (`controls.py`). The
weights are a function of the seed alone (a private numpy generator); an empty sentence gives
zeros. The published scores were measured over GloVe 840B 300-d at 4096 dimensions: they do not
carry over to these vectors and sizes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from .options import BorepOptions, EsnOptions
from .pooling import encode_nonempty

VERSION = "1"


def uniform_projection(dim: int, input_dim: int, seed: int) -> np.ndarray:
    """BOREP's W (dim, input_dim): entries uniform in [-1/sqrt(input_dim), 1/sqrt(input_dim)]."""
    bound = 1.0 / np.sqrt(input_dim)
    return np.random.default_rng([seed, 0]).uniform(-bound, bound, (dim, input_dim))


def reservoir(dim: int, spectral_radius: float, sparsity: float,
              rng: np.random.Generator) -> np.ndarray:
    """An ESN's recurrent matrix W_h (dim, dim): uniform in [-0.5, 0.5], ceil(sparsity x dim)
    entries of each column set to zero, scaled so its largest |eigenvalue| is
    `spectral_radius`."""
    weights = rng.uniform(-0.5, 0.5, (dim, dim))
    zeros = int(np.ceil(sparsity * dim))
    for column in range(dim):
        weights[rng.permutation(dim)[:zeros], column] = 0.0
    radius = float(np.max(np.abs(np.linalg.eigvals(weights))))
    return weights * (spectral_radius / radius) if radius > 0 else weights


class RandomWeightEncoder(ABC):
    """What `borep` and `esn` share: the word vectors they read, the seed, and encoding in
    batches of sentences given as the table's token ids."""

    name = "random-weights"
    architecture = ""

    def __init__(self, vocab: Any, options: Any, seed: int) -> None:
        self.vocab = vocab
        self.options = options
        self.seed = int(options.seed if options.seed is not None else seed)
        self.table = np.asarray(vocab.vectors, dtype=np.float64)

    @property
    @abstractmethod
    def dim(self) -> int:
        """The sentence vector's dimension."""

    def fingerprint(self) -> str:
        """Name, module version, options and the seed of the weights; the word vectors'
        identity is part of the run's cache key (or the table's name, `declares`)."""
        return f"{self.name}/{VERSION}/seed={self.seed}/{self.options.model_dump_json()}"

    def declares(self) -> dict[str, Any]:
        """No trained model: random weights the seed determines, over the named vectors."""
        from harness.plugin import pooled_vectors

        vectors = getattr(self.vocab, "vectors_name", None) or pooled_vectors(self.vocab)
        return {"model": f"{self.name} ({self.architecture}, random weights)",
                **({"vectors": vectors} if vectors else {}), "seed": self.seed, "dim": self.dim,
                **{k: v for k, v in self.options.model_dump().items() if k not in ("seed", "dim")}}

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return the (n, dim) float32 sentence vectors; zeros for an empty sentence."""
        return encode_nonempty(self.vocab, sentences, batch_size, self.dim, self.batch)

    def batch(self, ids: list[list[int]]) -> np.ndarray:
        """The vectors (B, dim) of non-empty sentences given as token ids."""
        return np.stack([self.sentence(self.table[np.asarray(token_ids)]) for token_ids in ids])

    @abstractmethod
    def sentence(self, vectors: np.ndarray) -> np.ndarray:
        """The vector of one non-empty sentence from its word vectors (T, d)."""


class BorepEncoder(RandomWeightEncoder):
    """borep: pool_t(W e_t) (module docstring), `dim` floats, pooled by max or mean."""

    name = "borep"
    architecture = "bag of random embedding projections"

    def __init__(self, vocab: Any, options: BorepOptions, seed: int) -> None:
        super().__init__(vocab, options, seed)
        self.projection = uniform_projection(int(options.dim), self.table.shape[1], self.seed)

    @property
    def dim(self) -> int:
        """The `dim` option: the projection's D."""
        return int(self.options.dim)

    def sentence(self, vectors: np.ndarray) -> np.ndarray:
        """pool_t(W e_t)."""
        projected = vectors @ self.projection.T
        return projected.max(axis=0) if self.options.pooling == "max" else projected.mean(axis=0)


class EchoStateEncoder(RandomWeightEncoder):
    """esn: a bidirectional echo state network, max-pooled (module docstring); 2 x `dim`
    floats."""

    name = "esn"
    architecture = "bidirectional echo state network"

    def __init__(self, vocab: Any, options: EsnOptions, seed: int) -> None:
        super().__init__(vocab, options, seed)
        input_dim, dim, scale = self.table.shape[1], int(options.dim), float(options.input_scale)
        self.directions = []
        for direction in range(2):
            rng = np.random.default_rng([self.seed, 1, direction])
            self.directions.append((rng.uniform(-scale, scale, (dim, input_dim)),
                                    reservoir(dim, float(options.spectral_radius),
                                              float(options.sparsity), rng),
                                    rng.uniform(-scale, scale, dim)))

    @property
    def dim(self) -> int:
        """Twice the reservoir's size: the forward and the backward states."""
        return 2 * int(self.options.dim)

    def states(self, vectors: np.ndarray, direction: int) -> np.ndarray:
        """h_1 ... h_T (T, dim) of one direction over word vectors (T, d), from h_0 = 0."""
        w_in, w_h, bias = self.directions[direction]
        leak = float(self.options.leak)
        state = np.zeros(w_h.shape[0])
        found = np.empty((len(vectors), w_h.shape[0]))
        inputs = vectors @ w_in.T + bias
        for t in range(len(vectors)):
            state = (1.0 - leak) * state + leak * np.tanh(inputs[t] + w_h @ state)
            found[t] = state
        return found

    def sentence(self, vectors: np.ndarray) -> np.ndarray:
        """max_t [h_fw(t); h_bw(t)], the backward direction reading the sentence reversed."""
        return np.concatenate([self.states(vectors, 0).max(axis=0),
                               self.states(vectors[::-1], 1).max(axis=0)])

    def batch(self, ids: list[list[int]]) -> np.ndarray:
        """max_t [h_fw(t); h_bw(t)] (B, 2 x dim) of non-empty sentences given as token ids,
        every sentence's recurrence as `sentence` computes it, a padded step leaving a state
        and the maximum untouched."""
        lengths = np.array([len(token_ids) for token_ids in ids])
        steps = int(lengths.max())
        pooled = []
        for direction in range(2):
            padded = np.zeros((len(ids), steps), dtype=np.int64)
            for row, token_ids in enumerate(ids):
                padded[row, :len(token_ids)] = token_ids if direction == 0 else token_ids[::-1]
            w_in, w_h, bias = self.directions[direction]
            inputs = self.table[padded] @ w_in.T + bias  # (B, T, dim)
            leak = float(self.options.leak)
            state = np.zeros((len(ids), w_h.shape[0]))
            best = np.full_like(state, -np.inf)
            for t in range(steps):
                active = (lengths > t)[:, None]
                updated = (1.0 - leak) * state + leak * np.tanh(inputs[:, t] + state @ w_h.T)
                state = np.where(active, updated, state)
                best = np.where(active, np.maximum(best, state), best)
            pooled.append(best)
        return np.concatenate(pooled, axis=1)
