"""Ancestral sampling from any `ConditionalLanguageModel`: `count` sentences per vector, each
token drawn from the model's next-token distribution (temperature 1), batched over many
sentences. What an attack that re-ranks candidates by their own vectors draws on (the
privacy analysis's `rerank`); the draws come from one seeded generator, so a run repeats them.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from harness.generation.common import check_max_len, chunks, generating


def sample_sentences(model: nn.Module, vectors: Any, *, count: int, bos_id: int, eos_id: int,
                     max_len: int, batch_size: int, device: str | torch.device, seed: int
                     ) -> list[list[tuple[int, ...]]]:
    """For each vector (N, D), `count` token-id sequences drawn from the model, eos left out,
    at most `max_len` tokens drawn each (eos included)."""
    check_max_len(max_len)
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    generator = torch.Generator().manual_seed(seed)
    found: list[list[tuple[int, ...]]] = []
    with generating(model, device) as (dev, autocast):
        for chunk in chunks(vectors, max(1, batch_size // count), dev, False, "sample"):
            rows = chunk.repeat_interleave(count, dim=0)
            with autocast():
                drawn = _sample_batch(model, rows, bos_id, eos_id, max_len, generator)
            found += [drawn[i:i + count] for i in range(0, len(drawn), count)]
    return found


def _sample_batch(model: nn.Module, vectors: torch.Tensor, bos_id: int, eos_id: int,
                  max_len: int, generator: torch.Generator) -> list[tuple[int, ...]]:
    """One draw per row; rows whose draw ended leave the batch (`reorder_state`)."""
    n = vectors.size(0)
    ids: list[list[int]] = [[] for _ in range(n)]
    alive = torch.arange(n)
    state = model.initial_state(vectors)
    tokens = torch.full((n,), bos_id, dtype=torch.long, device=vectors.device)
    for _ in range(max_len):
        log_probs, state = model.step(tokens, vectors, state)
        probabilities = log_probs.float().softmax(dim=-1).cpu()
        drawn = torch.multinomial(probabilities, 1, generator=generator).squeeze(1)
        ended = drawn == eos_id
        for row, token in zip(alive[~ended].tolist(), drawn[~ended].tolist(), strict=True):
            ids[row].append(token)
        if ended.all():
            break
        tokens = drawn.to(vectors.device)
        if ended.any():
            keep = (~ended).nonzero().squeeze(1)
            keep_dev = keep.to(vectors.device)
            state = model.reorder_state(state, keep_dev)
            vectors, tokens, alive = vectors[keep_dev], tokens[keep_dev], alive[keep]
    return [tuple(row) for row in ids]
