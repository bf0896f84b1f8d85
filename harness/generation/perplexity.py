"""Teacher-forced negative log-likelihood of reference sentences under a decoder (for `ppl`)."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch
from torch import nn

from harness.training.batches import IGNORE, padded_batches, sorted_batches

MAX_TOKENS = 4096
"""Padded positions per batch: the model's output for one position is a (V,) distribution (per
expert for a mixture of softmaxes), so a batch costs about MAX_TOKENS x V x experts floats."""


def reference_nll(model: nn.Module, vectors: Any, ids: Sequence[Sequence[int]], *, bos_id: int,
                  eos_id: int, batch_size: int, device: str | torch.device,
                  max_tokens: int = MAX_TOKENS) -> list[tuple[float, int]]:
    """Return (summed NLL in nats, token count) of each sentence given its vector.

    Sentence i is scored as -sum_t log P(y_t | y_<t, x_i) over `ids[i] + [eos]` after `[bos]`,
    with teacher forcing, in eval mode and float32; the count includes eos. Perplexity over a
    corpus is exp(sum of NLL / sum of counts). `vectors` (N, D) may be a memory map; sentences
    are batched by length, at most `batch_size` sentences and `max_tokens` padded positions a
    batch, and the results come back in input order.
    """
    if len(vectors) != len(ids):
        raise ValueError(f"{len(vectors)} vectors but {len(ids)} sentences")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    device = torch.device(device)
    # Inputs are padded with eos: any valid id will do, the model is causal and padded
    # positions are not scored.
    vocab = SimpleNamespace(pad_id=eos_id, bos_id=bos_id, eos_id=eos_id)
    lengths = np.fromiter((len(s) for s in ids), dtype=np.int64, count=len(ids))
    order = sorted_batches(np.arange(len(ids)), lengths, batch_size, max_tokens)
    results: list[tuple[float, int]] = [(0.0, 0)] * len(ids)
    was_training = model.training
    model.to(device).eval()
    try:
        with torch.inference_mode():
            for index, batch in zip(order, padded_batches(order, vocab, vectors, ids, device),
                                    strict=True):
                log_probs = model(batch.inputs, batch.vectors).float()
                scored = batch.targets != IGNORE
                picked = log_probs.gather(-1, batch.targets.clamp(min=0).unsqueeze(-1))
                # where, not a product: a padded position may hold -inf, and -inf * 0 is nan.
                nll = -torch.where(scored, picked.squeeze(-1).double(), 0.0).sum(dim=1)
                for i, value, count in zip(index.tolist(), nll.tolist(),
                                           scored.sum(dim=1).tolist(), strict=True):
                    results[i] = (value, count)
    finally:
        model.train(was_training)
    return results
