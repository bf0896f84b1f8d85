"""The orthonormal linear decoder U and the principal-component tools of the multi-view papers.

- `OrthonormalProjection`: h(z) = U z with the Parseval update U := (1 + b) U - b (U U^T) U
  (multi-view eq. 2, Cisse et al. 2017), so that U U^T = I and h^-1(x) = U^T x. Applied once
  per optimiser step with b = 0.01, the update holds U near but not at orthonormality against
  Adam's steps (max |s - 1| 0.04-0.09 in our runs); `settle_` repeats it to convergence after
  training so that U^T is the decoder's inverse to float precision.
- `power_iteration`: the top eigenvector of Z^T Z (multi-view appendix, Algorithm 1).
- `remove_top_component`: z - (z . u) u (Arora et al. 2017; multi-view section 2.4).
"""

from __future__ import annotations

import torch
from torch import nn


class OrthonormalProjection(nn.Module):
    """h(z) = U z with U (out_dim x in_dim) kept row-orthonormal, inverted as h^-1(x) = U^T x.

    Tang & de Sa section 3.3.1: with out_dim <= in_dim, U U^T = I makes U^T a right inverse,
    h(h^-1(x)) = x. Initialised orthonormal (Saxe et al. 2013), as in their appendix A.
    """

    def __init__(self, in_dim: int, out_dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_dim, in_dim))
        nn.init.orthogonal_(self.weight)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """Return x = U z for each row z of `z` (..., in_dim) -> (..., out_dim)."""
        return z @ self.weight.T

    def inverse(self, x: torch.Tensor) -> torch.Tensor:
        """Return U^T x for each row x of `x` (..., out_dim) -> (..., in_dim)."""
        return x @ self.weight

    @torch.no_grad()
    def orthonormalise_(self, beta: float = 0.01) -> None:
        """Apply the update U := (1 + beta) U - beta (U U^T) U once, in place (multi-view eq. 2).

        When U has more rows than columns, the column-wise form U := (1 + beta) U - beta U (U^T U)
        (multi-view footnote 1). Each application moves every singular value s towards 1:
        s := (1 + beta) s - beta s^3.
        """
        orthonormal_update_(self.weight, beta)

    def settle_(self, tolerance: float = 1e-5) -> dict[str, float]:
        """Return U's singular-value deviation before and after making U U^T = I to `tolerance`."""
        before = singular_value_deviation(self.weight)
        orthonormalise_to_convergence_(self.weight.data, tolerance)
        return {"u_deviation_trained": before,
                "u_deviation_final": singular_value_deviation(self.weight)}


@torch.no_grad()
def orthonormal_update_(matrix: torch.Tensor, beta: float = 0.01) -> None:
    """Apply U := (1 + beta) U - beta (U U^T) U (or its column form) to `matrix` in place."""
    if matrix.shape[0] <= matrix.shape[1]:
        correction = (matrix @ matrix.T) @ matrix
    else:
        correction = matrix @ (matrix.T @ matrix)
    matrix.mul_(1.0 + beta).sub_(beta * correction)


@torch.no_grad()
def orthonormalise_to_convergence_(matrix: torch.Tensor, tolerance: float = 1e-5,
                                   max_iterations: int = 100) -> int:
    """Return the iterations taken to bring every singular value of `matrix` within `tolerance`
    of 1, in place, by repeating the update with beta = 1/2.

    With beta = 1/2 the update is the Newton-Schulz iteration for the orthonormal polar factor,
    quadratically convergent for singular values in (0, sqrt 3); the matrix is scaled into that
    range first. Used once after training, so that U^T is the inverse of h to float precision.
    """
    work = matrix.detach().double()
    largest = float(torch.linalg.svdvals(work).max()) if work.numel() else 0.0
    if largest >= 1.7:
        work /= largest
    iterations = 0
    while iterations < max_iterations:
        if not work.numel() or float((torch.linalg.svdvals(work) - 1).abs().max()) < tolerance:
            break
        orthonormal_update_(work, 0.5)
        iterations += 1
    matrix.copy_(work.to(matrix.dtype))
    return iterations


def singular_value_deviation(matrix: torch.Tensor) -> float:
    """Return max |s - 1| over the singular values s of `matrix` (0 when U U^T = I)."""
    values = torch.linalg.svdvals(matrix.detach().double())
    return float((values - 1).abs().max()) if values.numel() else 0.0


@torch.no_grad()
def power_iteration(z: torch.Tensor, iterations: int = 5, tolerance: float = 0.0) -> torch.Tensor:
    """Return the unit top eigenvector u of C = Z^T Z, for the rows of `z` (N, D).

    Multi-view appendix, Algorithm 1 (von Mises & Pollaczek-Geiringer 1929): u := C u / ||C u||,
    `iterations` times (the paper: T = 5). C is never formed: C u = Z^T (Z u), which costs the
    same as iterating on the N x N Gram matrix of the paper's footnote. The start vector is the
    normalised sum of the rows, deterministic and, for uncentred sentence vectors, close to the
    answer. With `tolerance` > 0 the loop stops early once u moves less than that.
    The sign of an eigenvector is arbitrary; callers use u only through u u^T.
    """
    if z.ndim != 2:
        raise ValueError(f"power_iteration expects a matrix (N, D), got shape {tuple(z.shape)}")
    z = z.detach()
    u = z.sum(dim=0)
    if not bool(u.norm() > 1e-12):  # centred data: the row sum is no start
        u = torch.ones(z.shape[1], dtype=z.dtype, device=z.device)
    u = u / u.norm()
    for _ in range(iterations):
        nxt = z.T @ (z @ u)
        norm = nxt.norm()
        if not bool(norm > 0):  # Z u = 0: Z is zero (or u lies in its null space)
            break
        nxt = nxt / norm
        moved = float((nxt - u).norm())
        u = nxt
        if moved < tolerance:
            break
    return u


def remove_top_component(z: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Return the rows of `z` (..., D) minus their projection on the unit vector `u` (D,).

    Arora et al. (2017): z := z - u u^T z, the post-processing of multi-view section 2.4.
    """
    return z - (z @ u).unsqueeze(-1) * u
