"""Small stand-ins the decoder, trainer and search tests share."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from harness.protocols import BuildContext
from harness_plugins.decoders.lstm import build_mos_lstm
from harness_plugins.decoders.options import MosLstmOptions

BOS, EOS = 1, 2


@dataclass
class FakeVocab:
    """The part of `SubwordVocab` a decoder and the trainer use."""

    vectors: np.ndarray
    pad_id: int = 0
    bos_id: int = BOS
    eos_id: int = EOS

    def __len__(self) -> int:
        return len(self.vectors)


def make_vocab(size: int = 24, dim: int = 16, seed: int = 0) -> FakeVocab:
    """A vocabulary of `size` random `dim`-d subword vectors."""
    return FakeVocab(np.random.default_rng(seed).normal(size=(size, dim)).astype(np.float32))


def make_model(vocab: FakeVocab, input_dim: int, seed: int = 0, **options: object):
    """A freshly seeded mos-lstm over `vocab` for `input_dim`-d sentence vectors."""
    torch.manual_seed(seed)
    return build_mos_lstm(MosLstmOptions(**options), BuildContext(vocab=vocab, input_dim=input_dim))


def copy_task(n: int = 32, vocab_size: int = 24,
              seed: int = 0) -> tuple[np.ndarray, list[list[int]]]:
    """Sentences of random subwords, each with a one-hot code of its identity as its vector."""
    rng = np.random.default_rng(seed)
    ids = [rng.integers(3, vocab_size, size=rng.integers(2, 7)).tolist() for _ in range(n)]
    return np.eye(n, dtype=np.float32), ids


class Killed(Exception):
    """Stands for the process being killed."""


def kill_at(model: torch.nn.Module, call: int) -> None:
    """Make the model's `call`-th training forward pass raise, as if the process died there."""
    calls, forward = 0, model.forward

    def dying_forward(*args: torch.Tensor) -> torch.Tensor:
        nonlocal calls
        if model.training:
            calls += 1
            if calls == call:
                raise Killed
        return forward(*args)

    model.forward = dying_forward  # an instance attribute: not part of the state dict


def nan_gradient_at(model: torch.nn.Module, step: int) -> list[int]:
    """Make the gradient of the model's output bias NaN in the `step`-th backward pass (a finite
    loss whose gradient is not); return the list whose length counts the passes so far."""
    calls: list[int] = []

    def poison(grad: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return grad * float("nan") if len(calls) == step else grad

    model.output_bias.register_hook(poison)
    return calls
