"""Pieces both decoder families share: subword embeddings from the vocabulary, sentence-vector
checks and standardisation."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from harness.plugin import BuildContext, DataError


def vocabulary_vectors(context: BuildContext, decoder: str) -> tuple[np.ndarray, int]:
    """Return the run's subword vectors (V, E) and the sentence-vector dimension of `context`."""
    if context.vocab is None:
        raise ValueError(f"{decoder} needs the run's subword vocabulary (BuildContext.vocab)")
    if context.input_dim is None:
        raise ValueError(f"{decoder} needs the sentence-vector dimension (BuildContext.input_dim)")
    vocab: Any = context.vocab
    vectors = np.asarray(vocab.vectors)
    if vectors.ndim != 2 or vectors.shape[0] != len(vocab):
        raise ValueError(f"vocabulary has {len(vocab)} subwords but vectors {vectors.shape}")
    return vectors, int(context.input_dim)


OWN_EMBEDDING_RANGE = 0.1
"""`embeddings: own` draws each weight uniformly in [-0.1, 0.1], the initialisation of the
MoS code's (and AWD-LSTM's) embedding table that Vec2Sent's decoder builds on."""


def embedding_table(context: BuildContext, decoder: str, embeddings: str) -> tuple[np.ndarray, int]:
    """Return a decoder's initial subword embeddings (V, E) and the sentence-vector dimension.

    `embeddings: subword` gives the run's subword vectors (`vocabulary_vectors`); `own` gives a
    table of the same shape drawn from torch's generator (seeded by the core before a decoder
    is built), which shares nothing with the vectors that pooling encoders average, so the
    decoder is independent of the encoder under test."""
    vectors, input_dim = vocabulary_vectors(context, decoder)
    if embeddings == "subword":
        return vectors, input_dim
    if embeddings != "own":
        raise ValueError(f"embeddings must be 'subword' or 'own', not {embeddings!r}")
    own = torch.empty(vectors.shape).uniform_(-OWN_EMBEDDING_RANGE, OWN_EMBEDDING_RANGE)
    return own.numpy(), input_dim


def pretrained_embedding(vectors: np.ndarray, freeze: bool) -> nn.Embedding:
    """Return an embedding layer initialised with the subword vectors (V, E)."""
    if vectors.ndim != 2:
        raise ValueError(f"subword vectors must be a (V, E) matrix, not {vectors.shape}")
    weights = torch.from_numpy(np.array(vectors, dtype=np.float32))
    return nn.Embedding.from_pretrained(weights, freeze=freeze)


def check_vectors(vectors: torch.Tensor, input_dim: int) -> None:
    """Raise DataError unless `vectors` is a (B, input_dim) batch."""
    if vectors.dim() != 2 or vectors.size(1) != input_dim:
        raise DataError(
            f"decoder expects sentence vectors of dimension {input_dim}, got shape "
            f"{tuple(vectors.shape)} (dimension {vectors.size(-1)}); was it trained on "
            f"another encoder's vectors?")


def standardised(vectors: torch.Tensor, norm: nn.BatchNorm1d | None) -> torch.Tensor:
    """Return the vectors standardised per dimension, (x - mean) / sqrt(var + eps), with the
    training set's statistics held in `norm` (or unchanged when `norm` is None).

    Sentence vectors of pooling encoders share a large common component and vary little per
    dimension; standardising them (no learned affine) lets a small decoder see the differences
    early in training. The statistics are those of the whole training set
    (`VectorStandardisation`), the same in training and generation: batch statistics would
    differ between length-bucketed training batches and the test set.
    """
    if norm is None:
        return vectors
    return F.batch_norm(vectors.float(), norm.running_mean, norm.running_var, training=False,
                        eps=norm.eps)


class VectorStandardisation:
    """What a decoder with an optional `vector_norm` (set when its `standardise` option is on)
    offers the trainer: the training set's statistics go into `vector_norm`."""

    vector_norm: nn.BatchNorm1d | None

    @property
    def standardise(self) -> bool:
        """Whether sentence vectors are standardised with the training set's statistics."""
        return self.vector_norm is not None

    def set_vector_statistics(self, mean: torch.Tensor, var: torch.Tensor) -> None:
        """Store the training vectors' per-dimension mean and variance (D,); called by the
        trainer before the first step (a no-op without `standardise`)."""
        norm = self.vector_norm
        if norm is None:
            return
        running_mean, running_var = norm.running_mean, norm.running_var
        if running_mean is None or running_var is None:
            raise ValueError("vector_norm keeps no running statistics (track_running_stats=False)")
        if mean.shape != running_mean.shape or var.shape != running_var.shape:
            raise ValueError(f"statistics of shape {tuple(mean.shape)} / {tuple(var.shape)} "
                             f"for {norm.num_features}-dimensional vectors")
        with torch.no_grad():
            running_mean.copy_(mean)
            running_var.copy_(var)


def full_precision(like: torch.Tensor) -> torch.autocast:
    """A context with autocast off on `like`'s device, for the LSTMs.

    PyTorch's autocast runs cuDNN LSTMs in float16 whatever dtype it was asked for (its
    `_cudnn_rnn` autocast wrapper), and float16 gradients need loss scaling. The LSTMs run in
    float32 instead (TF32 on tensor cores); the output layer, the larger cost, stays in
    autocast's bfloat16.
    """
    return torch.autocast(like.device.type, enabled=False)
