"""The simple LSTM decoder of Vec2Sent's robustness check (Kerscher & Eger 2020, section 3.3).

A plain LSTM language model over subwords that "maps the embedding in the initial hidden state of
the RNN via a linear transformation rather than concatenating to word embeddings": the sentence
vector x sets (h0, c0) = W x + b for every layer, and the inputs are the subword embeddings only.
"""

from __future__ import annotations

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
from .options import SimpleLstmOptions

LstmState = tuple[torch.Tensor, torch.Tensor]
"""(h, c), each of shape (layers, B, hidden)."""


class SimpleLSTM(VectorStandardisation, nn.Module):
    """LSTM language model whose initial state is a linear function of the sentence vector.

    Implements `harness.protocols.ConditionalLanguageModel`. The output is a softmax over the
    tied subword embeddings (projected from the hidden size when it differs) plus a bias.
    """

    def __init__(self, embeddings: np.ndarray, input_dim: int, *, layers: int = 1,
                 hidden: int = 256, initial_state: str = "hidden-cell", dropout: float = 0.2,
                 dropout_input: float = 0.1, dropout_layers: float = 0.1,
                 freeze_embeddings: bool = True, standardise: bool = False) -> None:
        super().__init__()
        if initial_state not in ("hidden-cell", "hidden"):
            raise ValueError(f"initial_state must be 'hidden-cell' or 'hidden', not "
                             f"{initial_state!r}")
        self.embedding = pretrained_embedding(embeddings, freeze_embeddings)
        vocab_size, emb_dim = self.embedding.weight.shape
        self.input_dim, self.vocab_size = int(input_dim), int(vocab_size)
        self.layers, self.hidden = int(layers), int(hidden)
        self.init_cell = initial_state == "hidden-cell"
        self.dropout, self.dropout_input = dropout, dropout_input
        self.vector_norm = (nn.BatchNorm1d(self.input_dim, affine=False) if standardise
                            else None)
        parts = 2 if self.init_cell else 1
        self.initial = nn.Linear(self.input_dim, parts * layers * hidden)
        self.rnn = nn.LSTM(emb_dim, hidden, num_layers=layers, batch_first=True,
                           dropout=dropout_layers if layers > 1 else 0.0)
        self.projection = nn.Identity() if hidden == emb_dim else nn.Linear(hidden, emb_dim)
        self.output_bias = nn.Parameter(torch.zeros(vocab_size))

    def forward(self, inputs: torch.Tensor, vectors: torch.Tensor) -> torch.Tensor:
        """Log-probabilities (B, T, V) of the next subword for inputs (B, T) and vectors (B, D)."""
        log_probs, _ = self._run(inputs, vectors, self.initial_state(vectors))
        return log_probs

    def initial_state(self, vectors: torch.Tensor) -> LstmState:
        """(h0, c0) of every layer from the sentence vectors (B, D) by one linear map."""
        check_vectors(vectors, self.input_dim)
        x = standardised(vectors, self.vector_norm).float()
        with full_precision(x):  # the state the float32 LSTM starts from
            mapped = self.initial(x)
        # (B, parts * layers * H) -> (parts, layers, B, H): the LSTM wants layers first.
        mapped = mapped.unflatten(-1, (-1, self.layers, self.hidden)).permute(1, 2, 0, 3)
        h0 = mapped[0].contiguous()
        c0 = mapped[1].contiguous() if self.init_cell else torch.zeros_like(h0)
        return h0, c0

    def step(self, tokens: torch.Tensor, vectors: torch.Tensor,
             state: LstmState) -> tuple[torch.Tensor, LstmState]:
        """Log-probabilities (B, V) of the next subword after `tokens` (B,), and the new state."""
        log_probs, state = self._run(tokens.unsqueeze(1), vectors, state)
        return log_probs.squeeze(1), state

    def reorder_state(self, state: LstmState, index: torch.Tensor) -> LstmState:
        """The state restricted to batch rows `index` (in that order)."""
        h, c = state
        return h.index_select(1, index), c.index_select(1, index)

    def _run(self, inputs: torch.Tensor, vectors: torch.Tensor,
             state: LstmState) -> tuple[torch.Tensor, LstmState]:
        check_vectors(vectors, self.input_dim)
        if inputs.dim() != 2 or inputs.size(0) != vectors.size(0):
            raise ValueError(f"inputs must be (B, T) with B = {vectors.size(0)} vectors, "
                             f"got shape {tuple(inputs.shape)}")
        x = F.dropout(self.embedding(inputs), self.dropout_input, self.training)
        h, c = state
        with full_precision(x):
            x, (h, c) = self.rnn(x.float(), (h.float(), c.float()))
        x = F.dropout(x, self.dropout, self.training)
        logits = F.linear(self.projection(x), self.embedding.weight, self.output_bias)
        return F.log_softmax(logits.float(), dim=-1), (h, c)

    def extra_repr(self) -> str:
        return (f"input_dim={self.input_dim}, vocab={self.vocab_size}, "
                f"initial_state={'hidden-cell' if self.init_cell else 'hidden'}")


def build_simple_lstm(options: SimpleLstmOptions, context: BuildContext) -> SimpleLSTM:
    """A freshly initialised simple LSTM for the run's vocabulary and vector dimension."""
    vectors, input_dim = embedding_table(context, "simple-lstm", options.embeddings)
    return SimpleLSTM(
        vectors, input_dim, layers=options.layers, hidden=options.hidden,
        initial_state=options.initial_state, dropout=options.dropout,
        dropout_input=options.dropout_input, dropout_layers=options.dropout_layers,
        freeze_embeddings=options.freeze_embeddings, standardise=options.standardise)
