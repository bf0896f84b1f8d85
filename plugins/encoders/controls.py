"""Control encoders: reference points that tell what a decoder gets from a vector that says
nothing (`random-gaussian`) and from an untrained network over the same subword vectors the
pooling encoders see (`random-lstm`).

`random-lstm` follows Wieting & Kiela (2019), "No Training Required: Exploring Random Encoders
for Sentence Classification" (ICLR): BiLSTM-Max (Conneau et al. 2017) with random, untrained
weights over frozen word embeddings, here the run's subword vectors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .options import RandomGaussianOptions, RandomLstmOptions

VERSION = "1"  # random-lstm's; random-gaussian has its own `version`

SPLIT_STREAMS: dict[str, int] = {"train": 0, "test": 1}
"""random-gaussian's stream of each corpus split; plain `encode` calls draw from `PLAIN_STREAM`."""

PLAIN_STREAM = 2


class RandomGaussianEncoder:
    """random-gaussian: an i.i.d. N(0, 1) vector of `dim` floats per sentence, carrying no
    information about the sentence: the floor of what a decoder can regenerate.

    A positional encoder (`harness.protocols.PositionalEncoder`): the encode stage tells it the
    corpus split and the row of each batch's first sentence, and the vector of row p of split s
    is drawn by `np.random.default_rng([seed, stream(s), 0, p])`, a function of the seed, the
    split and the row only. Hence:

    - reproducible: the same seed gives the same vectors whatever `encode.batch_size`, the other
      sentences of the batch, what was cached or where a killed run resumed; another seed gives
      independent vectors;
    - identical sentences at different positions get independent vectors, within a split and
      across splits: a test sentence that also occurs in the training split does not share its
      training vector (a hash of the text would, and a decoder would recall the sentence).

    Any other call (`encode(sentences)` without a split: downstream tasks, the `cosine` metric
    re-encoding generated sentences, probes) is the c-th plain call of this object, c = 0, 1,
    ...; its row i is drawn by `default_rng([seed, PLAIN_STREAM, c, i])`. That stream never
    gives a split's vectors, so re-encoding outputs does not reproduce the inputs' vectors (the
    floor's cosine is about 0), and two calls never give the same vectors (the two sides of a
    pair task are independent), even for the same sentences: plain calls are not
    deterministic, by design. `harness.testing.check_encoder` checks it as a positional encoder.
    """

    name = "random-gaussian"
    version = "2"  # 2: vectors by corpus row; 1 seeded each batch by its sentences
    positional = True

    def __init__(self, options: RandomGaussianOptions, seed: int) -> None:
        self.options = options
        self.seed = int(options.seed if options.seed is not None else seed)
        self.plain_calls = 0

    @property
    def dim(self) -> int:
        """The `dim` option."""
        return int(self.options.dim)

    def fingerprint(self) -> str:
        """Name, version, options and the seed in use (the encode stage's cache key has no seed
        of its own)."""
        return f"{self.name}/{self.version}/seed={self.seed}/{self.options.model_dump_json()}"

    def declares(self) -> dict[str, Any]:
        """No model: random vectors, which the seed in use and the dimension determine."""
        return {"model": f"{self.name} (random vectors)", "seed": self.seed, "dim": self.dim}

    def encode(self, sentences: Sequence[str], batch_size: int = 256, *,
               split: str | None = None, start: int = 0) -> np.ndarray:
        """Return (n, dim) float32 standard normal vectors: rows `start`, `start + 1`, ... of
        `split`, or without a split the next plain call's (class docstring). `batch_size` does
        not matter."""
        if split is None:
            stream, call, start = PLAIN_STREAM, self.plain_calls, 0
            self.plain_calls += 1
        elif split in SPLIT_STREAMS:
            stream, call = SPLIT_STREAMS[split], 0
        else:
            raise ValueError(f"random-gaussian: unknown split {split!r}; expected one of "
                             f"{sorted(SPLIT_STREAMS)}")
        if start < 0:
            raise ValueError(f"random-gaussian: start must be a row index >= 0, not {start}")
        out = np.empty((len(sentences), self.dim), dtype=np.float32)
        for i in range(len(sentences)):
            # Always four words: SeedSequence pads shorter entropy with zeros, so [a, b] and
            # [a, b, 0] would name the same stream.
            rng = np.random.default_rng([self.seed, stream, call, start + i])
            out[i] = rng.standard_normal(self.dim, dtype=np.float32)
        return out


def random_bilstm(input_dim: int, hidden: int, seed: int) -> Any:
    """Return a bidirectional one-layer `torch.nn.LSTM` with weights and biases drawn
    uniformly from [-1/sqrt(hidden), 1/sqrt(hidden)] by a generator seeded with `seed`.

    That is PyTorch's default initialisation, the one Wieting & Kiela (2019) use for their
    random BiLSTM-Max; drawing from a private generator keeps the weights a function of the
    seed alone, and the global torch RNG is left as it was.
    """
    import torch

    with torch.random.fork_rng(devices=[]):  # the module's own init draws from the global RNG
        lstm = torch.nn.LSTM(input_dim, hidden, num_layers=1, batch_first=True,
                             bidirectional=True)
    generator = torch.Generator().manual_seed(int(seed))
    bound = 1.0 / math.sqrt(hidden)
    with torch.no_grad():
        for parameter in lstm.parameters():
            parameter.uniform_(-bound, bound, generator=generator)
    lstm.requires_grad_(False)
    return lstm.eval()


def split_directions(lstm: Any) -> tuple[Any, Any]:
    """Return the forward and backward directions of a one-layer bidirectional LSTM as two
    unidirectional LSTMs with the same weights.

    Run apart, each direction reads right-padded input (the backward one each sentence reversed)
    and never sees padding before a real subword; that gives the packed-sequence result without
    packing, whose many small per-step operations slowed down two to four times more than these
    runs with two threads on busy CPU cores (as fast on one thread).
    """
    import torch

    directions = []
    for suffix in ("", "_reverse"):
        with torch.random.fork_rng(devices=[]):
            direction = torch.nn.LSTM(lstm.input_size, lstm.hidden_size, batch_first=True)
        with torch.no_grad():
            for name in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"):
                getattr(direction, name).copy_(getattr(lstm, name + suffix))
        directions.append(direction.requires_grad_(False).eval())
    return directions[0], directions[1]


class RandomLstmEncoder:
    """random-lstm: BiLSTM-Max with random weights (Wieting & Kiela 2019, section 3, "Random
    LSTMs"), over the run's frozen subword vectors.

    A sentence's vector is the dimension-wise maximum over time of the concatenated forward and
    backward hidden states, max_t [h_fw(t); h_bw(t)], 2 x `dim` floats. Weights come from
    `random_bilstm` seeded with the spec's seed (or the `seed` option). Sentences are encoded in
    batches under `torch.no_grad`; padding never enters a state or the maximum, so a vector
    depends on its sentence only. An empty sentence gives zeros.
    """

    name = "random-lstm"

    def __init__(self, vocab: Any, options: RandomLstmOptions, seed: int) -> None:
        import torch

        self.vocab = vocab
        self.options = options
        self.seed = int(options.seed if options.seed is not None else seed)
        self.embeddings = torch.from_numpy(np.ascontiguousarray(vocab.vectors, dtype=np.float32))
        self.lstm = random_bilstm(self.embeddings.shape[1], int(options.dim), self.seed)
        self.forward_lstm, self.backward_lstm = split_directions(self.lstm)

    @property
    def dim(self) -> int:
        """Twice the hidden size per direction."""
        return 2 * int(self.options.dim)

    def fingerprint(self) -> str:
        """Name, module version, options and the seed of the weights; the vocabulary's identity
        is part of the run's cache key already."""
        return f"{self.name}/{VERSION}/seed={self.seed}/{self.options.model_dump_json()}"

    def declares(self) -> dict[str, Any]:
        """No trained model: an untrained BiLSTM-Max whose weights the seed in use determines,
        over the subword vectors named by `harness.results.declarations.pooled_vectors` (none when the
        vocabulary cannot say what it is), of 2 x the `dim` option."""
        from harness.plugin import pooled_vectors

        vectors = pooled_vectors(self.vocab)
        return {"model": f"{self.name} (untrained BiLSTM-Max)",
                **({"vectors": vectors} if vectors else {}), "seed": self.seed, "dim": self.dim}

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return the (n, 2 x dim) float32 max-pooled BiLSTM states; zeros for an empty
        sentence."""
        import torch

        from .pooling import encode_nonempty

        with torch.no_grad():
            return encode_nonempty(self.vocab, sentences, batch_size, self.dim,
                                   self._max_states)

    def _max_states(self, ids: list[list[int]]) -> np.ndarray:
        """max_t [h_fw(t); h_bw(t)] (B, 2 x dim) of non-empty sentences given as piece ids."""
        import torch

        lengths = torch.tensor([len(piece_ids) for piece_ids in ids])
        forward = torch.zeros(len(ids), int(lengths.max()), dtype=torch.long)
        backward = torch.zeros_like(forward)
        for row, piece_ids in enumerate(ids):
            forward[row, :len(piece_ids)] = torch.tensor(piece_ids)
            backward[row, :len(piece_ids)] = torch.tensor(piece_ids[::-1])
        padding = torch.arange(forward.shape[1])[None, :] >= lengths[:, None]
        pooled = []
        for lstm, inputs in ((self.forward_lstm, forward), (self.backward_lstm, backward)):
            states = lstm(self.embeddings[inputs])[0].masked_fill(padding[:, :, None], -math.inf)
            # The maximum over time ignores order: the backward states need no re-reversal.
            pooled.append(states.max(dim=1).values)
        return torch.cat(pooled, dim=1).numpy()
