"""The two views of the multi-view frameworks (section 2.1) and pooling over time (Table 2).

- f: a bidirectional GRU over the word vectors, d units per direction; during training only its
  last hidden state z^f (2d) goes on (section 2.1; Tang & de Sa 3.2).
- g: the linear avg-on-word-vectors model, z^g = mean(W X) (section 2.1).
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

Init = Literal["he", "orthogonal"]


class RecurrentView(nn.Module):
    """f(s; phi): a bidirectional GRU giving hidden states H (T x 2d) and the last state (2d)."""

    def __init__(self, input_dim: int, hidden: int, init: Init = "he") -> None:
        super().__init__()
        self.hidden = hidden
        self.gru = nn.GRU(input_dim, hidden, batch_first=True, bidirectional=True)
        _initialise_gru(self.gru, init)

    @property
    def dim(self) -> int:
        """2d: the two directions' states concatenated."""
        return 2 * self.hidden

    def forward(self, inputs: torch.Tensor, lengths: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return H (B, T, 2d), zero past each length, and the last state h^M (B, 2d).

        `inputs` (B, T, input_dim) are word vectors padded after `lengths` (B,). The last state
        concatenates the forward direction after the last word and the backward direction after
        the first word. Rows of length 0 get zeros. Padding is packed away, so a sentence's
        states do not depend on its batch-mates.
        """
        batch, width = inputs.shape[0], inputs.shape[1]
        if batch == 0 or width == 0:
            return inputs.new_zeros(batch, width, self.dim), inputs.new_zeros(batch, self.dim)
        lengths = lengths.to("cpu", torch.long)
        empty = lengths == 0
        packed = pack_padded_sequence(inputs, lengths.clamp(min=1), batch_first=True,
                                      enforce_sorted=False)
        output, last = self.gru(packed)
        states, _ = pad_packed_sequence(output, batch_first=True, total_length=width)
        last = torch.cat((last[0], last[1]), dim=-1)
        if bool(empty.any()):
            keep = (~empty).to(states.device, states.dtype)
            states = states * keep[:, None, None]
            last = last * keep[:, None]
        return states, last


def _initialise_gru(gru: nn.GRU, init: Init) -> None:
    """Initialise the GRU as the paper says.

    "he": He et al. (2015) weights and gate biases 1 (multi-view appendix 3: "all gates in the
    bi-GRU are initialised to 1"; the reset and update gates, the candidate's bias stays 0).
    "orthogonal": orthonormal weight blocks per gate (Tang & de Sa appendix A), zero biases.
    """
    hidden = gru.hidden_size
    for name, parameter in gru.named_parameters():
        with torch.no_grad():
            if name.startswith("weight"):
                if init == "he":
                    nn.init.kaiming_normal_(parameter, nonlinearity="relu")
                else:
                    for block in parameter.split(hidden, dim=0):
                        nn.init.orthogonal_(block)
            else:
                parameter.zero_()
                if init == "he" and name.startswith("bias_ih"):
                    parameter[:2 * hidden] = 1.0  # PyTorch's gate order: reset, update, new


class LinearView(nn.Module):
    """g(s; W): per-word states W x_w (2d each); z^g is their mean (multi-view section 2.1)."""

    def __init__(self, input_dim: int, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(dim, input_dim))
        nn.init.kaiming_normal_(self.weight, nonlinearity="relu")

    @property
    def dim(self) -> int:
        """Dimension of z^g (2d, that of z^f)."""
        return int(self.weight.shape[0])

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """Return the per-word states W x_w (B, T, dim) of word vectors `inputs` (B, T, in)."""
        return inputs @ self.weight.T


def length_mask(lengths: torch.Tensor, width: int, device: torch.device | str) -> torch.Tensor:
    """Return a (B, width) bool mask, True at positions before each row's length."""
    positions = torch.arange(width, device=device)
    return positions[None, :] < lengths.to(device)[:, None]


def mean_over_time(states: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Return mean(H) over each row's first `lengths` steps (B, D); zeros for length 0."""
    mask = length_mask(lengths, states.shape[1], states.device).to(states.dtype)
    total = (states * mask[..., None]).sum(dim=1)
    return total / mask.sum(dim=1, keepdim=True).clamp(min=1.0)


def pool_over_time(states: torch.Tensor, lengths: torch.Tensor
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return (max(H), mean(H), min(H)) over valid steps, each (B, D); zeros for length 0.

    The global pooling functions of multi-view Table 2 (after McCann et al. 2017).
    """
    if states.shape[1] == 0:
        zeros = states.new_zeros(states.shape[0], states.shape[2])
        return zeros, zeros, zeros
    mask = length_mask(lengths, states.shape[1], states.device)
    empty = ~mask.any(dim=1, keepdim=True)
    infinity = torch.tensor(float("inf"), dtype=states.dtype, device=states.device)
    maximum = torch.where(mask[..., None], states, -infinity).amax(dim=1).masked_fill(empty, 0.0)
    minimum = torch.where(mask[..., None], states, infinity).amin(dim=1).masked_fill(empty, 0.0)
    return maximum, mean_over_time(states, lengths), minimum
