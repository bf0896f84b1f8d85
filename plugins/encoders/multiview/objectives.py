"""The two training objectives of the multi-view frameworks, each as a module owning its views.

- Generative (multi-view 2.2; Tang & de Sa 3): f encodes s_i, the invertible decoder h maps
  z^f to x_i in the word-vector space, and x_i predicts the words of s_{i+1} with negative
  sampling (eq. 1); after each step U is pulled towards U U^T = I (eq. 2). At test time
  g = h^-1 applied to each word vector.
- Discriminative (multi-view 2.3): f and g agree on neighbouring sentences,
  a_ij = cos(z_i^f, z_j^g) + cos(z_i^g, z_j^f), through a softmax over the batch with a trainable
  temperature (eq. 3); the top principal component of each view's batch is estimated by power
  iteration and removed first (section 2.4).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from torch import nn
from torch.nn import functional

from .nice import BijectiveDecoder
from .orthonormal import OrthonormalProjection, power_iteration, remove_top_component
from .views import Init, LinearView, RecurrentView, mean_over_time

Decoder = Literal["linear", "bijective"]


@dataclass(frozen=True)
class Batch:
    """Sentences as padded word ids (B, T) with their lengths (B,), plus what the loss needs.

    Generative: `target_ids` (B, T') the in-vocabulary words of each next sentence (0 = padding)
    and `noise_ids` (B, T', K) their negative samples. Discriminative: `positives` (B, B), True
    where |i - j| <= c within one document.
    """

    word_ids: torch.Tensor
    lengths: torch.Tensor
    target_ids: torch.Tensor | None = None
    noise_ids: torch.Tensor | None = None
    positives: torch.Tensor | None = None

    def to(self, device: torch.device | str) -> Batch:
        """Return the batch with its tensors on `device` (lengths stay on the CPU for packing)."""
        def move(t: torch.Tensor | None) -> torch.Tensor | None:
            return None if t is None else t.to(device)
        return Batch(self.word_ids.to(device), self.lengths, move(self.target_ids),
                     move(self.noise_ids), move(self.positives))


# --------------------------------------------------------------------------------- loss functions

def negative_sampling_loss(x: torch.Tensor, targets: torch.Tensor, target_mask: torch.Tensor,
                           noise: torch.Tensor) -> torch.Tensor:
    """Return -mean over sentences of (1/N_{i+1}) sum_j log P(w_j | s_i), with negative sampling.

    Multi-view eq. 1 / Tang & de Sa 3.1:
        log P(w_j | s_i) = log sigma(x_i . v_wj) + sum_k log sigma(-x_i . v_wk),  w_k ~ P_e(w).
    `x` (B, D) decoder outputs; `targets` (B, T, D) vectors of the next sentence's words with
    `target_mask` (B, T) marking real ones; `noise` (B, T, K, D) vectors of K samples per word.
    Sentences without any target word are left out.
    """
    positive = functional.logsigmoid(torch.einsum("bd,btd->bt", x, targets))
    negative = functional.logsigmoid(-torch.einsum("bd,btkd->btk", x, noise)).sum(dim=-1)
    mask = target_mask.to(x.dtype)
    words = mask.sum(dim=1)
    per_sentence = ((positive + negative) * mask).sum(dim=1) / words.clamp(min=1.0)
    counted = words > 0
    if not bool(counted.any()):
        return x.sum() * 0.0
    return -per_sentence[counted].mean()


def agreement(z_f: torch.Tensor, z_g: torch.Tensor) -> torch.Tensor:
    """Return A (N, N) with a_ij = cos(z_i^f, z_j^g) + cos(z_i^g, z_j^f) (multi-view 2.3)."""
    cosines = functional.normalize(z_f, dim=-1) @ functional.normalize(z_g, dim=-1).T
    return cosines + cosines.T


def neighbour_mask(documents: np.ndarray | torch.Tensor, window: int) -> torch.Tensor:
    """Return the (N, N) bool mask of pairs |i - j| <= c within one document.

    The rows of a batch are consecutive sentences; `documents` (N,) says which document each
    comes from, so pairs never cross a document boundary. The diagonal is included: eq. 3 sums
    over |i - j| <= c, so a sentence's two views also learn to agree with each other.
    """
    documents = torch.as_tensor(documents)
    index = torch.arange(len(documents))
    near = (index[:, None] - index[None, :]).abs() <= window
    return near & (documents[:, None] == documents[None, :])


def discriminative_loss(a: torch.Tensor, log_temperature: torch.Tensor,
                        positives: torch.Tensor) -> torch.Tensor:
    """Return -mean over positive pairs of log p_ij, p_ij = softmax_n(a_in / tau)_j (eq. 3).

    The softmax of row i runs over the whole batch, the N sentences around i.
    tau = exp(`log_temperature`) keeps the temperature positive while it is learnt.
    """
    log_p = torch.log_softmax(a / log_temperature.exp(), dim=1)
    return -log_p[positives].mean()


# ------------------------------------------------------------------------------------- objectives

class _Objective(nn.Module, ABC):
    """The frozen word vectors (id 0 = absent word, a zero vector) and the view f."""

    word_vectors: torch.Tensor  # a buffer, registered in __init__

    def __init__(self, word_vectors: np.ndarray, hidden: int, init: Init) -> None:
        super().__init__()
        # Not persistent: the vectors are saved once, as word_vectors.npy, not in every checkpoint.
        self.register_buffer("word_vectors", torch.from_numpy(np.asarray(word_vectors,
                                                                         np.float32)).clone(),
                             persistent=False)
        self.f = RecurrentView(self.word_vectors.shape[1], hidden, init)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """Return the frozen vectors of word ids (..., ) -> (..., word_dim)."""
        return functional.embedding(ids, self.word_vectors)

    def after_step(self) -> None:
        """Called after each optimiser step (the generative objective's U update)."""

    @abstractmethod
    def g_states(self, word_inputs: torch.Tensor) -> torch.Tensor:
        """Return g's per-word states (B, T, 2d) for word vectors (B, T, word_dim)."""
        ...

    def finish(self) -> dict[str, float]:
        """Return a summary of the trained objective after any final adjustment."""
        return {}


class GenerativeObjective(_Objective):
    """f and the invertible decoder h (linear, or bijection + linear) with eq. 1 and eq. 2."""

    def __init__(self, word_vectors: np.ndarray, hidden: int, *, decoder: Decoder = "linear",
                 beta: float = 0.01, coupling_layers: int = 1, coupling_hidden: int | None = None,
                 init: Init = "he") -> None:
        super().__init__(word_vectors, hidden, init)
        word_dim, sentence_dim = self.word_vectors.shape[1], self.f.dim
        self.beta = beta
        if decoder == "linear":
            self.h: OrthonormalProjection | BijectiveDecoder = OrthonormalProjection(
                sentence_dim, word_dim)
        else:
            self.h = BijectiveDecoder(sentence_dim, word_dim, coupling_hidden or sentence_dim // 2,
                                      coupling_layers)

    def loss(self, batch: Batch) -> torch.Tensor:
        """Return the negative-sampling loss of predicting each next sentence's words."""
        if batch.target_ids is None or batch.noise_ids is None:
            raise ValueError("a generative batch needs target_ids and noise_ids")
        _, z_f = self.f(self.embed(batch.word_ids), batch.lengths)
        x = self.h(z_f)
        return negative_sampling_loss(x, self.embed(batch.target_ids), batch.target_ids != 0,
                                      self.embed(batch.noise_ids))

    def after_step(self) -> None:
        """Apply U := (1 + beta) U - beta (U U^T) U (multi-view eq. 2)."""
        if self.beta > 0:
            self.h.orthonormalise_(self.beta)

    def g_states(self, word_inputs: torch.Tensor) -> torch.Tensor:
        """Return h^-1(x_w) for each word vector: U^T x_w, or c^-1(U^T x_w) for the bijection."""
        return self.h.inverse(word_inputs)

    def finish(self) -> dict[str, float]:
        """Return U's singular-value deviation before and after settling U U^T = I."""
        return self.h.settle_() if self.beta > 0 else {}


class DiscriminativeObjective(_Objective):
    """f, the linear g and the temperature, trained with eq. 3 on consecutive sentences."""

    def __init__(self, word_vectors: np.ndarray, hidden: int, *, power_iterations: int = 5,
                 init: Init = "he") -> None:
        super().__init__(word_vectors, hidden, init)
        self.g = LinearView(self.word_vectors.shape[1], self.f.dim)
        self.log_temperature = nn.Parameter(torch.zeros(()))  # tau = 1 at the start
        self.power_iterations = power_iterations

    def views(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (z^f, z^g) of the batch, each with its estimated top component removed.

        The component u is a constant of the step (no gradient flows through its estimate).
        """
        inputs = self.embed(batch.word_ids)
        _, z_f = self.f(inputs, batch.lengths)
        z_g = mean_over_time(self.g(inputs), batch.lengths.to(inputs.device))
        if self.power_iterations > 0:
            z_f = remove_top_component(z_f, power_iteration(z_f, self.power_iterations))
            z_g = remove_top_component(z_g, power_iteration(z_g, self.power_iterations))
        return z_f, z_g

    def loss(self, batch: Batch) -> torch.Tensor:
        """Return eq. 3's loss over the batch's neighbouring pairs."""
        if batch.positives is None:
            raise ValueError("a discriminative batch needs positives")
        z_f, z_g = self.views(batch)
        return discriminative_loss(agreement(z_f, z_g), self.log_temperature, batch.positives)

    def g_states(self, word_inputs: torch.Tensor) -> torch.Tensor:
        """Return W x_w for each word vector."""
        return self.g(word_inputs)

    def finish(self) -> dict[str, float]:
        """Return the learnt temperature tau."""
        return {"temperature": float(self.log_temperature.detach().exp())}
