"""The Vec2Sent decoder: an LSTM language model conditioned on a sentence vector.

Kerscher & Eger (2020), section 3: at every step the embedding of the previous subword y_{i-1} is
concatenated with the sentence vector x, and a stacked LSTM predicts y_i. The output layer is the
Mixture of Softmaxes of Yang et al. (2018), "Breaking the softmax bottleneck", tied to the subword
embedding matrix.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from harness.errors import DataError
from harness.protocols import BuildContext

from .options import MosLstmOptions

LstmState = tuple[tuple[torch.Tensor, torch.Tensor], ...]
"""One (h, c) pair per layer, each of shape (1, B, hidden of that layer)."""


def locked_dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Return `x` (B, T, F) with one dropout mask per sequence, shared by all time steps.

    Variational ("locked") dropout as in the AWD-LSTM / MoS code the paper builds on: the same
    units are dropped at every step, which regularises recurrent models better than fresh masks.
    """
    if not training or p == 0.0:
        return x
    mask = x.new_empty(x.size(0), 1, x.size(2)).bernoulli_(1.0 - p) / (1.0 - p)
    return x * mask


class MixtureOfSoftmaxesLSTM(nn.Module):
    """Conditional LSTM language model with a (mixture of) softmax output tied to subword vectors.

    Implements `harness.protocols.ConditionalLanguageModel`. With `experts == 1` the output is a
    plain softmax over tied embeddings; with `experts > 1` it is the Mixture of Softmaxes

        P(w | c) = sum_k pi_{c,k} softmax(h_{c,k}^T e_w + b_w),   h_{c,k} = tanh(W_k g_c),
        pi_{c,k} = softmax_k(w_k^T g_c)

    (Yang et al. 2018, the MoS formula for P_theta(x | c)), where g_c is the last LSTM output,
    e_w the (frozen by default) embedding of w and b_w a learned bias.
    """

    def __init__(self, embeddings: np.ndarray, input_dim: int, *, layers: int = 1,
                 hidden: int = 256, last_hidden: int | None = None, experts: int = 1, dropout: float = 0.2,
                 dropout_input: float = 0.1, dropout_layers: float = 0.1,
                 freeze_embeddings: bool = True, standardise: bool = False) -> None:
        super().__init__()
        if embeddings.ndim != 2:
            raise ValueError(f"subword vectors must be a (V, E) matrix, not {embeddings.shape}")
        vocab_size, emb_dim = embeddings.shape
        self.input_dim = int(input_dim)
        self.vocab_size = int(vocab_size)
        self.experts = int(experts)
        self.dropout = dropout
        self.dropout_input, self.dropout_layers = dropout_input, dropout_layers
        last = hidden if last_hidden is None else last_hidden
        self.hidden_sizes = tuple([hidden] * (layers - 1) + [last])

        # Sentence vectors of pooling encoders share a large common component and vary little per
        # dimension; standardising them (running mean/variance, no learned affine) lets a small
        # decoder see the differences early in training.
        self.vector_norm = (nn.BatchNorm1d(self.input_dim, affine=False) if standardise
                            else None)
        weights = torch.from_numpy(np.array(embeddings, dtype=np.float32))
        self.embedding = nn.Embedding.from_pretrained(weights, freeze=freeze_embeddings)
        # Single-layer LSTMs in a list, because the last layer may be narrower and dropout between
        # layers is locked (one mask per sequence), which nn.LSTM's own dropout is not.
        sizes_in = (emb_dim + self.input_dim, *self.hidden_sizes[:-1])
        self.rnns = nn.ModuleList(nn.LSTM(n_in, n_out, batch_first=True)
                                  for n_in, n_out in zip(sizes_in, self.hidden_sizes, strict=True))
        if experts > 1:
            self.latent = nn.Linear(last, experts * emb_dim)
            self.prior = nn.Linear(last, experts, bias=False)
            self.projection: nn.Module = nn.Identity()
        else:
            # The tied output layer needs E-dimensional inputs; project only when sizes differ.
            self.projection = nn.Identity() if last == emb_dim else nn.Linear(last, emb_dim)
        self.output_bias = nn.Parameter(torch.zeros(vocab_size))

    def forward(self, inputs: torch.Tensor, vectors: torch.Tensor) -> torch.Tensor:
        """Log-probabilities (B, T, V) of the next subword for inputs (B, T) and vectors (B, D).

        Teacher forcing from a zero state; right padding does not affect earlier positions.
        """
        log_probs, _ = self._run(inputs, vectors, self.initial_state(vectors))
        return log_probs

    def initial_state(self, vectors: torch.Tensor) -> LstmState:
        """Zero (h, c) per layer for a batch of vectors (B, D), as in the released paper code."""
        self._check_vectors(vectors)
        batch = vectors.size(0)
        weight = self.output_bias
        return tuple((weight.new_zeros(1, batch, size), weight.new_zeros(1, batch, size))
                     for size in self.hidden_sizes)

    def step(self, tokens: torch.Tensor, vectors: torch.Tensor,
             state: LstmState) -> tuple[torch.Tensor, LstmState]:
        """Log-probabilities (B, V) of the next subword after `tokens` (B,), and the new state."""
        log_probs, state = self._run(tokens.unsqueeze(1), vectors, state)
        return log_probs.squeeze(1), state

    def reorder_state(self, state: LstmState, index: torch.Tensor) -> LstmState:
        """The state restricted to batch rows `index` (in that order)."""
        return tuple((h.index_select(1, index), c.index_select(1, index)) for h, c in state)

    def _run(self, inputs: torch.Tensor, vectors: torch.Tensor,
             state: LstmState) -> tuple[torch.Tensor, LstmState]:
        self._check_vectors(vectors)
        if inputs.dim() != 2 or inputs.size(0) != vectors.size(0):
            raise ValueError(f"inputs must be (B, T) with B = {vectors.size(0)} vectors, "
                             f"got shape {tuple(inputs.shape)}")
        emb = self.embedding(inputs)
        context = self._condition(vectors).to(emb.dtype).unsqueeze(1).expand(-1, inputs.size(1), -1)
        x = locked_dropout(torch.cat([emb, context], dim=-1), self.dropout_input, self.training)
        new_state = []
        for layer, rnn in enumerate(self.rnns):
            x, layer_state = rnn(x, state[layer])
            new_state.append(layer_state)
            if layer < len(self.rnns) - 1:
                x = locked_dropout(x, self.dropout_layers, self.training)
        x = locked_dropout(x, self.dropout, self.training)
        return self._output(x), tuple(new_state)

    def _condition(self, vectors: torch.Tensor) -> torch.Tensor:
        """The sentence vectors, standardised per dimension when the option is on."""
        norm = self.vector_norm
        if norm is None:
            return vectors
        # Batch statistics need two rows; a lone training row uses the running ones.
        use_batch = self.training and vectors.size(0) > 1
        return F.batch_norm(vectors.float(), norm.running_mean, norm.running_var,
                            training=use_batch, momentum=norm.momentum or 0.1, eps=norm.eps)

    def _output(self, g: torch.Tensor) -> torch.Tensor:
        """Log-probabilities (..., V) from last-layer outputs g (..., H)."""
        weight = self.embedding.weight
        if self.experts == 1:
            logits = F.linear(self.projection(g), weight, self.output_bias)
            return F.log_softmax(logits.float(), dim=-1)
        # Mixture in log space: log P = logsumexp_k(log pi_k + log softmax_k), which avoids the
        # log(p + 1e-8) underflow fix of the original MoS code.
        latent = torch.tanh(self.latent(g)).unflatten(-1, (self.experts, weight.size(1)))
        logits = F.linear(latent, weight, self.output_bias)  # (..., K, V)
        log_prior = F.log_softmax(self.prior(g).float(), dim=-1)  # (..., K)
        log_experts = F.log_softmax(logits.float(), dim=-1)
        return torch.logsumexp(log_prior.unsqueeze(-1) + log_experts, dim=-2)

    def _check_vectors(self, vectors: torch.Tensor) -> None:
        if vectors.dim() != 2 or vectors.size(1) != self.input_dim:
            raise DataError(
                f"decoder expects sentence vectors of dimension {self.input_dim}, got shape "
                f"{tuple(vectors.shape)} (dimension {vectors.size(-1)}); was it trained on "
                f"another encoder's vectors?")

    def extra_repr(self) -> str:
        return f"input_dim={self.input_dim}, vocab={self.vocab_size}, experts={self.experts}"


def build_mos_lstm(options: MosLstmOptions, context: BuildContext) -> MixtureOfSoftmaxesLSTM:
    """A freshly initialised decoder for the run's vocabulary and sentence-vector dimension."""
    if context.vocab is None:
        raise ValueError("mos-lstm needs the run's subword vocabulary (BuildContext.vocab)")
    if context.input_dim is None:
        raise ValueError("mos-lstm needs the sentence-vector dimension (BuildContext.input_dim)")
    vocab: Any = context.vocab
    vectors = np.asarray(vocab.vectors)
    if vectors.ndim != 2 or vectors.shape[0] != len(vocab):
        raise ValueError(f"vocabulary has {len(vocab)} subwords but vectors {vectors.shape}")
    return MixtureOfSoftmaxesLSTM(
        vectors, context.input_dim, layers=options.layers, hidden=options.hidden,
        last_hidden=options.last_hidden, experts=options.experts, dropout=options.dropout,
        dropout_input=options.dropout_input, dropout_layers=options.dropout_layers,
        freeze_embeddings=options.freeze_embeddings, standardise=options.standardise)
