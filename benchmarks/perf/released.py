"""The released Vec2Sent model's forward pass, on a copy of a `MixtureOfSoftmaxesLSTM`'s weights.

The baselines of the training and generation benchmarks. The released code
(maruker/vec2sent, lstm/contextual_mos_lstm.py `ConditionedRNNModel.forward`) takes a list of
per-sentence input tensors, concatenates each with its context vector, packs them into a
`PackedSequence`, runs one `nn.LSTM` per layer (weight drop as in the MoS code), unpacks, and
computes the mixture of softmaxes in probability space, returning `log(p + 1e-8)` for training
or the probabilities for generation (lstm/model_utils.py `generate`, which calls it once per
beam-search round on the popped nodes, each a one-token "sentence").

- `PaperStyleMoS` is that forward pass, for training (dropouts as the paper's configuration
  asks, and unlike the released `LockedDropout1d`, which returns padded inputs unchanged, they
  really drop, so both training loops do the same regularisation work);
- `ReleasedStepModel` exposes it through the `ConditionalLanguageModel` step interface, so
  `harness.generation.reference.priority_queue_beam_search` can drive it one sentence at a time
  exactly as it drives the harness's own model, and return the same hypotheses.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from harness_plugins.decoders.lstm import MixtureOfSoftmaxesLSTM

Hidden = list[tuple[torch.Tensor, torch.Tensor]]
"""One (h, c) pair per layer, each (1, B, hidden of that layer), as in the released code."""


class PaperStyleMoS(nn.Module):
    """The released forward pass on a copy of `model`'s weights (the copy is never shared)."""

    def __init__(self, model: MixtureOfSoftmaxesLSTM) -> None:
        super().__init__()
        source = copy.deepcopy(model)
        self.embedding, self.vector_norm = source.embedding, source.vector_norm
        self.latent = getattr(source, "latent", None)
        self.prior = getattr(source, "prior", None)
        self.projection, self.output_bias = source.projection, source.output_bias
        self.experts = source.experts
        self.p = {"input": model.dropout_input, "layers": model.dropout_layers,
                  "output": model.dropout, "embedding": model.dropout_embedding,
                  "latent": model.dropout_latent}
        self.weight_drop = [rnn.weight_drop for rnn in model.rnns]
        # Sequence-first, one layer each, as in the released code.
        self.rnns = nn.ModuleList()
        for rnn in source.rnns:
            plain = nn.LSTM(rnn.input_size, rnn.hidden_size)
            plain.load_state_dict(rnn.state_dict())
            self.rnns.append(plain)

    def init_hidden(self, batch: int) -> Hidden:
        """Zero states, as the released `init_hidden`."""
        weight = self.output_bias
        return [(weight.new_zeros(1, batch, rnn.hidden_size),
                 weight.new_zeros(1, batch, rnn.hidden_size)) for rnn in self.rnns]

    def forward(self, inputs: list[torch.Tensor], contexts: list[torch.Tensor],
                hidden: Hidden | None = None,
                return_prob: bool = False) -> tuple[torch.Tensor, Hidden]:
        """(T, B, V) `log(p + 1e-8)` (or p with `return_prob`), padded, and the new hidden state,
        for per-sentence inputs and per-sentence context vectors (D,)."""
        if hidden is None:
            hidden = self.init_hidden(len(inputs))
        contexts = self._standardised(contexts)
        embs = []
        for tokens, context in zip(inputs, contexts, strict=True):  # one sentence at a time
            weight = self.embedding.weight
            if self._drops("embedding"):
                keep = weight.new_empty(weight.size(0), 1).bernoulli_(1 - self.p["embedding"])
                weight = weight * keep / (1 - self.p["embedding"])
            emb = F.embedding(tokens, weight)
            emb = torch.cat([emb, torch.stack([context] * emb.size(0))], 1)
            if self._drops("input"):
                mask = emb.new_empty(1, emb.size(1)).bernoulli_(1 - self.p["input"])
                emb = emb * mask / (1 - self.p["input"])
            embs.append(emb)
        x = nn.utils.rnn.pack_sequence(embs, enforce_sorted=False)
        new_hidden: Hidden = []
        for layer, rnn in enumerate(self.rnns):
            weights = {}
            if self.training and self.weight_drop[layer]:
                weights["weight_hh_l0"] = F.dropout(rnn.weight_hh_l0, self.weight_drop[layer])
            x, state = functional_call(rnn, weights, (x, hidden[layer]))
            new_hidden.append(state)
            if layer < len(self.rnns) - 1 and self._drops("layers"):
                x = _locked_packed(x, self.p["layers"])
        output, _ = nn.utils.rnn.pad_packed_sequence(x)  # (T, B, H)
        output = self._locked(output, "output")
        weight = self.embedding.weight
        if self.experts == 1:
            prob = F.softmax(F.linear(self.projection(output), weight, self.output_bias), -1)
        else:
            latent = self._locked(torch.tanh(self.latent(output)), "latent")
            logits = F.linear(latent.view(-1, weight.size(1)), weight, self.output_bias)
            prior = F.softmax(self.prior(output).view(-1, self.experts), -1)
            prob = F.softmax(logits, -1).view(-1, self.experts, weight.size(0))
            prob = (prob * prior.unsqueeze(2)).sum(1).view(*output.shape[:2], -1)
        return (prob if return_prob else torch.log(prob + 1e-8)), new_hidden

    def _standardised(self, contexts: list[torch.Tensor]) -> list[torch.Tensor]:
        """The harness model's optional vector standardisation (not in the released model)."""
        if self.vector_norm is None:
            return contexts
        batch = F.batch_norm(torch.stack(contexts), self.vector_norm.running_mean,
                             self.vector_norm.running_var, training=False,
                             eps=self.vector_norm.eps)
        return list(batch.unbind(0))

    def _drops(self, where: str) -> bool:
        return self.training and self.p[where] > 0.0

    def _locked(self, x: torch.Tensor, where: str) -> torch.Tensor:
        """Dropout with one mask per sequence on a (T, B, F) tensor."""
        if not self._drops(where):
            return x
        p = self.p[where]
        return x * (x.new_empty(1, x.size(1), x.size(2)).bernoulli_(1 - p) / (1 - p))


def _locked_packed(x: nn.utils.rnn.PackedSequence, p: float) -> nn.utils.rnn.PackedSequence:
    """The released LockedDropout1d on a packed sequence: unpack, one mask per sequence, repack."""
    padded, lengths = nn.utils.rnn.pad_packed_sequence(x)
    mask = padded.new_empty(1, padded.size(1), padded.size(2)).bernoulli_(1 - p) / (1 - p)
    return nn.utils.rnn.pack_padded_sequence(padded * mask, lengths, enforce_sorted=False)


class ReleasedStepModel(nn.Module):
    """`PaperStyleMoS` behind the step interface of `harness.protocols.ConditionalLanguageModel`.

    Each `step` is one call of the released generation decoder (lstm/model_utils.py
    `generate.decoder`): the tokens become one-token tensors, the context vector is repeated
    per node, and the forward pass returns probabilities, whose logarithm is the step's
    log-probabilities.
    """

    def __init__(self, model: MixtureOfSoftmaxesLSTM) -> None:
        super().__init__()
        self.released = PaperStyleMoS(model)

    def initial_state(self, vectors: torch.Tensor) -> Hidden:
        return self.released.init_hidden(vectors.size(0))

    def step(self, tokens: torch.Tensor, vectors: torch.Tensor,
             state: Hidden) -> tuple[torch.Tensor, Hidden]:
        inputs = [torch.tensor([token], dtype=torch.long, device=vectors.device)
                  for token in tokens.tolist()]
        prob, hidden = self.released(inputs, list(vectors.unbind(0)), state, return_prob=True)
        return prob[0].log(), hidden

    def reorder_state(self, state: Hidden, index: torch.Tensor) -> Hidden:
        return [(h.index_select(1, index), c.index_select(1, index)) for h, c in state]
