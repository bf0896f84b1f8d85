"""The AWD-LSTM regularisers the MoS language model uses (Merity et al. 2018; Yang et al. 2018).

All are inactive in eval mode, so a model's `step` and `forward` agree at generation time.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def locked_dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Return `x` (B, T, F) with one dropout mask per sequence, shared by all time steps.

    Variational ("locked") dropout as in the AWD-LSTM / MoS code the paper builds on: the same
    units are dropped at every step, which regularises recurrent models better than fresh masks.
    """
    if not training or p == 0.0:
        return x
    mask = x.new_empty(x.size(0), 1, x.size(2)).bernoulli_(1.0 - p) / (1.0 - p)
    return x * mask


def embedding_dropout(weight: torch.Tensor, inputs: torch.Tensor, p: float,
                      training: bool) -> torch.Tensor:
    """Return the embeddings of `inputs` with whole subword types dropped (rows of `weight`).

    One Bernoulli draw per vocabulary entry per batch, scaled by 1/(1-p): every occurrence of a
    dropped subword in the batch is zeroed (Gal & Ghahramani 2016, as `embedded_dropout` in the
    MoS code). Masking the looked-up rows equals masking the matrix, at a fraction of the cost.
    """
    emb = F.embedding(inputs, weight)
    if not training or p == 0.0:
        return emb
    keep = weight.new_empty(weight.size(0)).bernoulli_(1.0 - p) / (1.0 - p)
    return emb * keep[inputs].unsqueeze(-1)


class WeightDropLSTM(nn.LSTM):
    """A one-layer, batch-first LSTM with DropConnect on its hidden-to-hidden weights.

    In training mode each call draws one mask over `weight_hh_l0` (Wan et al. 2013), shared by
    all time steps of the batch, as the MoS code's `WeightDrop` does. The parameters stay the
    plain `nn.LSTM` ones (no raw/derived weight pair, no shared tensors), so checkpoints load
    into a model with or without weight drop.
    """

    # Registered by nn.LSTM (one layer, with biases); declared for the type checker, which sees
    # them through nn.Module.__getattr__ as `Tensor | Module`.
    weight_ih_l0: nn.Parameter
    weight_hh_l0: nn.Parameter
    bias_ih_l0: nn.Parameter
    bias_hh_l0: nn.Parameter

    def __init__(self, input_size: int, hidden_size: int, weight_drop: float = 0.0) -> None:
        super().__init__(input_size, hidden_size, batch_first=True)
        self.weight_drop = float(weight_drop)

    def forward(self, x: torch.Tensor,  # type: ignore[override]
                state: tuple[torch.Tensor, torch.Tensor]) -> tuple[
                    torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Outputs (B, T, H) and the final (h, c) for inputs (B, T, I) from `state`."""
        if not self.training or self.weight_drop == 0.0:
            return super().forward(x, state)
        dropped = F.dropout(self.weight_hh_l0, self.weight_drop, training=True)
        weights = [self.weight_ih_l0, dropped, self.bias_ih_l0, self.bias_hh_l0]
        output, h, c = torch.lstm(x, state, weights, True, 1, 0.0, True, False, True)
        return output, (h, c)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, weight_drop={self.weight_drop}"
