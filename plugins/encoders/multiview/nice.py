"""The bijective decoder of Tang & de Sa (section 3.3.2): NICE additive coupling (Dinh et al.
2014) followed by the orthonormal linear projection, inverted exactly.

    coupling   y1 = x1,  y2 = x2 + m(x1)        inverse  x1 = y1,  x2 = y2 - m(y1)
    decoder    h(z) = U c(z)                      inverse  h^-1(x) = c^-1(U^T x)
"""

from __future__ import annotations

from typing import cast

import torch
from torch import nn

from .orthonormal import OrthonormalProjection


class AdditiveCoupling(nn.Module):
    """One NICE additive coupling layer on R^D; `m` is a one-hidden-layer ReLU network.

    The first `split` coordinates pass unchanged and condition the shift of the others;
    `swap=True` exchanges the roles of the two parts, so that stacked layers alternate.
    """

    def __init__(self, dim: int, hidden: int, swap: bool = False) -> None:
        super().__init__()
        if dim < 2:
            raise ValueError(f"a coupling layer needs dim >= 2, got {dim}")
        self.dim, self.swap = dim, swap
        self.split = dim // 2
        fixed, shifted = (dim - self.split, self.split) if swap else (self.split, dim - self.split)
        first, second = nn.Linear(fixed, hidden), nn.Linear(hidden, shifted)
        self.m = nn.Sequential(first, nn.ReLU(), second)
        for layer in (first, second):  # orthonormal weights, zero biases (appendix A)
            nn.init.orthogonal_(layer.weight)
            nn.init.zeros_(layer.bias)

    def _parts(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (fixed part, shifted part) of `x`."""
        first, second = x[..., :self.split], x[..., self.split:]
        return (second, first) if self.swap else (first, second)

    def _join(self, fixed: torch.Tensor, shifted: torch.Tensor) -> torch.Tensor:
        return torch.cat((shifted, fixed) if self.swap else (fixed, shifted), dim=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return y: y1 = x1, y2 = x2 + m(x1)."""
        fixed, shifted = self._parts(x)
        return self._join(fixed, shifted + self.m(fixed))

    def inverse(self, y: torch.Tensor) -> torch.Tensor:
        """Return x: x1 = y1, x2 = y2 - m(y1)."""
        fixed, shifted = self._parts(y)
        return self._join(fixed, shifted - self.m(fixed))


class AdditiveBijection(nn.Module):
    """A stack of additive coupling layers with alternating halves: a bijection of R^D."""

    def __init__(self, dim: int, hidden: int, layers: int = 1) -> None:
        super().__init__()
        self.layers = nn.ModuleList(AdditiveCoupling(dim, hidden, swap=bool(i % 2))
                                    for i in range(layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return c(x), the layers applied in order."""
        for layer in self.layers:
            x = layer(x)
        return x

    def inverse(self, y: torch.Tensor) -> torch.Tensor:
        """Return c^-1(y), the inverse layers applied in reverse order."""
        for layer in reversed(self.layers):
            y = cast(AdditiveCoupling, layer).inverse(y)  # nn.ModuleList types items as Module
        return y


class BijectiveDecoder(nn.Module):
    """h(z) = U c(z): "Bijection+Linear" (Tang & de Sa 3.3.2), from R^D to the word space."""

    def __init__(self, in_dim: int, out_dim: int, hidden: int, layers: int = 1) -> None:
        super().__init__()
        self.bijection = AdditiveBijection(in_dim, hidden, layers)
        self.projection = OrthonormalProjection(in_dim, out_dim)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """Return x = U c(z)."""
        return self.projection(self.bijection(z))

    def inverse(self, x: torch.Tensor) -> torch.Tensor:
        """Return h^-1(x) = c^-1(U^T x): a right inverse, h(h^-1(x)) = x while U U^T = I."""
        return self.bijection.inverse(self.projection.inverse(x))

    def orthonormalise_(self, beta: float = 0.01) -> None:
        """Apply the orthonormal update to U (the coupling needs none: it is always invertible)."""
        self.projection.orthonormalise_(beta)

    def settle_(self, tolerance: float = 1e-5) -> dict[str, float]:
        """Make U U^T = I after training (see `OrthonormalProjection.settle_`)."""
        return self.projection.settle_(tolerance)
