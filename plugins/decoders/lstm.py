"""The Vec2Sent decoder: an LSTM language model conditioned on a sentence vector.

Kerscher & Eger (2020), section 3: at every step the embedding of the previous subword y_{i-1} is
concatenated with the sentence vector x, and a stacked LSTM predicts y_i. The output layer is the
Mixture of Softmaxes of Yang et al. (2018), "Breaking the softmax bottleneck", tied to the subword
embedding matrix.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple, cast

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from harness.plugin import BuildContext

from .common import (
    VectorStandardisation,
    check_vectors,
    embedding_table,
    full_precision,
    pretrained_embedding,
    standardised,
)
from .mixture import mixture
from .options import MosLstmOptions
from .regularisation import WeightDropLSTM, embedding_dropout, locked_dropout

LayerStates = tuple[tuple[torch.Tensor, torch.Tensor], ...]
"""One (h, c) pair per layer, each of shape (1, B, hidden of that layer)."""


class MosState(NamedTuple):
    """The recurrent state of `MixtureOfSoftmaxesLSTM` during generation."""

    layers: LayerStates
    context: torch.Tensor
    """(B, 4 * hidden of the first layer): the first layer's gate terms of the sentence vector,
    biases included. The vector is the same at every step, so `initial_state` computes them
    once."""


class MixtureOfSoftmaxesLSTM(VectorStandardisation, nn.Module):
    """Conditional LSTM language model with a (mixture of) softmax output tied to subword vectors.

    Implements `harness.protocols.ConditionalLanguageModel`. With `experts == 1` the output is a
    plain softmax over tied embeddings; with `experts > 1` it is the Mixture of Softmaxes

        P(w | c) = sum_k pi_{c,k} softmax(h_{c,k}^T e_w + b_w),   h_{c,k} = tanh(W_k g_c),
        pi_{c,k} = softmax_k(w_k^T g_c)

    (Yang et al. 2018, eq. 2 and the MoS code), where g_c is the last LSTM output, e_w the
    (frozen by default) embedding of w and b_w a learned bias. Regularisers of the MoS code, all
    off in eval mode: locked dropout on inputs, between layers, on g_c and on the latent h_{c,k};
    whole-subword embedding dropout; DropConnect on hidden-to-hidden weights.
    """

    def __init__(self, embeddings: np.ndarray, input_dim: int, *, layers: int = 1,
                 hidden: int = 256, last_hidden: int | None = None, experts: int = 1,
                 dropout: float = 0.2, dropout_input: float = 0.1, dropout_layers: float = 0.1,
                 dropout_embedding: float = 0.0, dropout_latent: float = 0.0,
                 weight_drop: float = 0.0, freeze_embeddings: bool = True,
                 standardise: bool = False) -> None:
        super().__init__()
        self.embedding = pretrained_embedding(embeddings, freeze_embeddings)
        vocab_size, emb_dim = self.embedding.weight.shape
        self.input_dim = int(input_dim)
        self.vocab_size = int(vocab_size)
        self.experts = int(experts)
        self.dropout, self.dropout_input, self.dropout_layers = dropout, dropout_input, dropout_layers
        self.dropout_embedding, self.dropout_latent = dropout_embedding, dropout_latent
        last = hidden if last_hidden is None else last_hidden
        self.hidden_sizes = tuple([hidden] * (layers - 1) + [last])

        self.vector_norm = (nn.BatchNorm1d(self.input_dim, affine=False) if standardise
                            else None)
        # Single-layer LSTMs in a list, because the last layer may be narrower, dropout between
        # layers is locked (one mask per sequence) and weight drop acts per layer.
        sizes_in = (emb_dim + self.input_dim, *self.hidden_sizes[:-1])
        self.rnns = nn.ModuleList(WeightDropLSTM(n_in, n_out, weight_drop)
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
        check_vectors(vectors, self.input_dim)
        log_probs, _ = self._run(inputs, vectors, self._zero_layers(vectors.size(0)))
        return log_probs

    def initial_state(self, vectors: torch.Tensor) -> MosState:
        """Zero (h, c) per layer, as in the released paper code, for vectors (B, D)."""
        check_vectors(vectors, self.input_dim)
        first = cast(WeightDropLSTM, self.rnns[0])  # nn.ModuleList types its items as Module
        context = standardised(vectors, self.vector_norm)
        with full_precision(context):
            gates = F.linear(context.float(), first.weight_ih_l0[:, self.embedding.weight.size(1):],
                             first.bias_ih_l0 + first.bias_hh_l0)
        return MosState(self._zero_layers(vectors.size(0)), gates)

    def step(self, tokens: torch.Tensor, vectors: torch.Tensor,
             state: MosState) -> tuple[torch.Tensor, MosState]:
        """Log-probabilities (B, V) of the next subword after `tokens` (B,), and the new state.

        In eval mode the LSTM cells are computed here with the sentence vector's gate terms
        from the state: the same function as `forward`, without multiplying the (often
        thousands of) vector dimensions by the input weights again at every step.
        """
        check_vectors(vectors, self.input_dim)
        if self.training:  # dropout masks on [embedding; vector]: take the general path
            log_probs, layers = self._run(tokens.unsqueeze(1), vectors, state.layers)
            return log_probs.squeeze(1), MosState(layers, state.context)
        x = self.embedding(tokens).float()
        emb_dim = x.size(-1)
        new_layers = []
        rnns = cast("Iterable[WeightDropLSTM]", self.rnns)  # nn.ModuleList yields Module to mypy
        with full_precision(x):  # as the LSTMs of `forward`
            for layer, rnn in enumerate(rnns):
                h, c = state.layers[layer]
                # One matrix product for [input; h] per layer (the biases are in
                # `state.context` for the first layer).
                weight_ih = rnn.weight_ih_l0[:, :emb_dim] if layer == 0 else rnn.weight_ih_l0
                weight = torch.cat([weight_ih, rnn.weight_hh_l0], dim=1)
                base = state.context if layer == 0 else rnn.bias_ih_l0 + rnn.bias_hh_l0
                gates = torch.addmm(base, torch.cat([x, h[0]], dim=-1), weight.t())
                x, c_new = _lstm_cell(gates, c[0])
                new_layers.append((x.unsqueeze(0), c_new.unsqueeze(0)))
        return self._output(x), MosState(tuple(new_layers), state.context)

    def reorder_state(self, state: MosState, index: torch.Tensor) -> MosState:
        """The state restricted to batch rows `index` (in that order)."""
        layers = tuple((h.index_select(1, index), c.index_select(1, index))
                       for h, c in state.layers)
        return MosState(layers, state.context.index_select(0, index))

    def _zero_layers(self, batch: int) -> LayerStates:
        weight = self.output_bias
        return tuple((weight.new_zeros(1, batch, size), weight.new_zeros(1, batch, size))
                     for size in self.hidden_sizes)

    def _run(self, inputs: torch.Tensor, vectors: torch.Tensor,
             state: LayerStates) -> tuple[torch.Tensor, LayerStates]:
        if inputs.dim() != 2 or inputs.size(0) != vectors.size(0):
            raise ValueError(f"inputs must be (B, T) with B = {vectors.size(0)} vectors, "
                             f"got shape {tuple(inputs.shape)}")
        emb = embedding_dropout(self.embedding.weight, inputs, self.dropout_embedding,
                                self.training)
        context = standardised(vectors, self.vector_norm)
        context = context.to(emb.dtype).unsqueeze(1).expand(-1, inputs.size(1), -1)
        x = locked_dropout(torch.cat([emb, context], dim=-1), self.dropout_input, self.training)
        new_state = []
        with full_precision(x):
            x = x.float()
            for layer, rnn in enumerate(self.rnns):
                x, layer_state = rnn(x, state[layer])
                new_state.append(layer_state)
                if layer < len(self.rnns) - 1:
                    x = locked_dropout(x, self.dropout_layers, self.training)
        x = locked_dropout(x, self.dropout, self.training)
        return self._output(x), tuple(new_state)

    def _output(self, g: torch.Tensor) -> torch.Tensor:
        """Log-probabilities (B, T, V) from last-layer outputs g (B, T, H)."""
        weight = self.embedding.weight
        if self.experts == 1:
            logits = F.linear(self.projection(g), weight, self.output_bias)
            return F.log_softmax(logits.float(), dim=-1)
        latent = locked_dropout(torch.tanh(self.latent(g)), self.dropout_latent, self.training)
        latent = latent.unflatten(-1, (self.experts, weight.size(1)))
        logits = F.linear(latent, weight, self.output_bias)  # (B, T, K, V)
        # Mixture in log space (`mixture`), which avoids the log(p + 1e-8) underflow fix of
        # the original MoS code.
        log_prior = F.log_softmax(self.prior(g).float(), dim=-1)  # (B, T, K)
        return mixture(logits, log_prior)

    def extra_repr(self) -> str:
        return f"input_dim={self.input_dim}, vocab={self.vocab_size}, experts={self.experts}"


def _lstm_cell(gates: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Return (h, c) of an LSTM cell from its summed gate pre-activations (B, 4H) in PyTorch's
    order (input, forget, cell, output) and the previous cell state (B, H)."""
    i, f, g, o = gates.chunk(4, dim=-1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def build_mos_lstm(options: MosLstmOptions, context: BuildContext) -> MixtureOfSoftmaxesLSTM:
    """A freshly initialised decoder for the run's vocabulary and sentence-vector dimension."""
    vectors, input_dim = embedding_table(context, "mos-lstm", options.embeddings)
    return MixtureOfSoftmaxesLSTM(
        vectors, input_dim, layers=options.layers, hidden=options.hidden,
        last_hidden=options.last_hidden, experts=options.experts, dropout=options.dropout,
        dropout_input=options.dropout_input, dropout_layers=options.dropout_layers,
        dropout_embedding=options.dropout_embedding, dropout_latent=options.dropout_latent,
        weight_drop=options.weight_drop, freeze_embeddings=options.freeze_embeddings,
        standardise=options.standardise)
