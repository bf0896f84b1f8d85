"""What every search shares: the hypothesis type, eval mode without autograd, batching of vectors.

Its own module so that the batched beam search (`search`), the batched released search
(`released`) and the one-sentence references (`reference`) import it and not each other.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from harness.util import devices


@dataclass(frozen=True)
class Hypothesis:
    """A generated sentence: subword ids without bos/eos, and its summed log-probability.

    The score includes the log-probability of eos when the hypothesis ended.
    """

    ids: tuple[int, ...]
    score: float


@contextmanager
def generating(model: nn.Module, device: str | torch.device) -> Iterator[tuple[torch.device, Any]]:
    """Yield (device, autocast factory) with `model` in eval mode on `device`, no autograd.

    The model's training mode is restored afterwards, so generation can run between epochs.
    """
    device = torch.device(device)
    was_training = model.training
    model.to(device).eval()
    # On CUDA bf16 autocast and TF32 products, as in training; log-probabilities stay float32.
    autocast = devices.mixed_precision(device)
    try:
        with torch.inference_mode():
            yield device, autocast
    finally:
        model.train(was_training)


def check_max_len(max_len: int) -> None:
    """Refuse a `max_len` that leaves no room for a token (it counts eos)."""
    if max_len < 1:
        raise ValueError(f"max_len must be at least 1 (eos included), got {max_len}")


def check_beam(beam: int, stop_after: int | None) -> None:
    """Refuse a beam narrower than 1, and a `stop_after` (ended hypotheses) below 1."""
    if beam < 1:
        raise ValueError(f"beam must be at least 1, got {beam}")
    if stop_after is not None and stop_after < 1:
        raise ValueError(f"stop_after must be at least 1, got {stop_after}")


def chunks(vectors: Any, batch_size: int, device: torch.device, progress: bool,
           desc: str) -> Iterator[torch.Tensor]:
    """Yield float32 batches of rows on `device`, reading a memory map one batch at a time."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    starts = range(0, len(vectors), batch_size)
    for start in tqdm(starts, desc=desc, unit="batch", disable=None if progress else True, leave=False):
        rows = vectors[start:start + batch_size]
        if isinstance(rows, torch.Tensor):
            yield rows.to(device=device, dtype=torch.float32)
        else:
            yield torch.from_numpy(np.array(rows, dtype=np.float32)).to(device)
