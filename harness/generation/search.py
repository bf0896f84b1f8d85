"""Greedy and beam search over any `ConditionalLanguageModel`, batched over many sentences.

Both searches generate at most `max_len` tokens per sentence, the end-of-sentence token included;
a hypothesis that has not ended by then is returned as it stands. Rows whose sentences are done
are dropped from the batch (`reorder_state`), so long outliers do not keep a whole batch busy.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm


@dataclass(frozen=True)
class Hypothesis:
    """A generated sentence: subword ids without bos/eos, and its summed log-probability.

    The score includes the log-probability of eos when the hypothesis ended.
    """

    ids: tuple[int, ...]
    score: float


def greedy_search(model: nn.Module, vectors: Any, *, bos_id: int, eos_id: int, max_len: int,
                  batch_size: int, device: str | torch.device,
                  progress: bool = False) -> list[Hypothesis]:
    """Return the greedy (most likely next token at every step) output for each vector (N, D)."""
    results: list[Hypothesis] = []
    with _generating(model, device) as (dev, autocast):
        for chunk in _chunks(vectors, batch_size, dev, progress, "greedy"):
            with autocast():
                results.extend(_greedy_batch(model, chunk, bos_id, eos_id, max_len))
    return results


def beam_search(model: nn.Module, vectors: Any, *, beam: int, bos_id: int, eos_id: int,
                max_len: int, batch_size: int, device: str | torch.device,
                length_normalise: bool = False, progress: bool = False) -> list[Hypothesis]:
    """Return the best of `beam` hypotheses found by beam search for each vector (N, D).

    Hypotheses are ranked by summed log-probability, or by its mean per token (eos included)
    when `length_normalise`. A sentence stops when it has `beam` ended hypotheses that no live
    one can beat any more; live ones at `max_len` compete with the ended ones.
    """
    if beam < 1:
        raise ValueError(f"beam must be at least 1, got {beam}")
    results: list[Hypothesis] = []
    with _generating(model, device) as (dev, autocast):
        for chunk in _chunks(vectors, batch_size, dev, progress, f"beam {beam}"):
            with autocast():
                results.extend(_beam_batch(model, chunk, beam, bos_id, eos_id, max_len,
                                           length_normalise))
    return results


@contextmanager
def _generating(model: nn.Module, device: str | torch.device) -> Iterator[tuple[torch.device, Any]]:
    """Yield (device, autocast factory) with `model` in eval mode on `device`, no autograd.

    The model's training mode is restored afterwards, so generation can run between epochs.
    """
    device = torch.device(device)
    was_training = model.training
    model.to(device).eval()
    # bf16 on CUDA as in training; the log-probabilities themselves stay float32.
    autocast = ((lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if device.type == "cuda"
                else nullcontext)
    try:
        with torch.inference_mode():
            yield device, autocast
    finally:
        model.train(was_training)


def _chunks(vectors: Any, batch_size: int, device: torch.device, progress: bool,
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


def _greedy_batch(model: nn.Module, vectors: torch.Tensor, bos_id: int, eos_id: int,
                  max_len: int) -> list[Hypothesis]:
    n = vectors.size(0)
    ids: list[list[int]] = [[] for _ in range(n)]
    scores = torch.zeros(n, dtype=torch.float32)
    alive = torch.arange(n)  # sentence of each live row
    state = model.initial_state(vectors)
    tokens = torch.full((n,), bos_id, dtype=torch.long, device=vectors.device)
    for _ in range(max_len):
        log_probs, state = model.step(tokens, vectors, state)
        best_log_prob, tokens = log_probs.float().max(dim=-1)
        scores.index_add_(0, alive, best_log_prob.cpu())
        ended = (tokens == eos_id).cpu()
        for row, token in zip(alive[~ended].tolist(), tokens[~ended.to(tokens.device)].tolist(),
                              strict=True):
            ids[row].append(token)
        if ended.all():
            break
        if ended.any():
            keep = (~ended).nonzero().squeeze(1)
            keep_dev = keep.to(vectors.device)
            state = model.reorder_state(state, keep_dev)
            vectors, tokens, alive = vectors[keep_dev], tokens[keep_dev], alive[keep]
    return [Hypothesis(tuple(i), float(s)) for i, s in zip(ids, scores.tolist(), strict=True)]


def _beam_batch(model: nn.Module, vectors: torch.Tensor, beam: int, bos_id: int, eos_id: int,
                max_len: int, length_normalise: bool) -> list[Hypothesis]:
    n, device = vectors.size(0), vectors.device

    def rank(score: float, length: int) -> float:
        return score / max(length, 1) if length_normalise else score

    ended: list[list[tuple[float, float, tuple[int, ...]]]] = [[] for _ in range(n)]
    groups = torch.arange(n)  # sentence of each live group of `beam` rows
    rows_vectors = vectors.repeat_interleave(beam, dim=0)
    state = model.initial_state(rows_vectors)
    tokens = torch.full((n * beam,), bos_id, dtype=torch.long, device=device)
    seqs = torch.empty((n * beam, 0), dtype=torch.long, device=device)
    # Only the first row of each group is live at the start, so the beam starts from one prefix.
    scores = torch.full((n, beam), float("-inf"), device=device)
    scores[:, 0] = 0.0
    for step in range(1, max_len + 1):
        log_probs, state = model.step(tokens, rows_vectors, state)
        m, vocab_size = scores.size(0), log_probs.size(-1)
        candidates = (scores.unsqueeze(-1) + log_probs.float().view(m, beam, vocab_size))
        # 2*beam candidates always hold `beam` that do not end: each row has one eos token.
        top_scores, top_index = candidates.view(m, -1).topk(min(2 * beam, beam * vocab_size))
        from_row, token = top_index // vocab_size, top_index % vocab_size
        is_eos = token == eos_id
        # An ending candidate counts only when it ranks among the best `beam`, so beam=1 is greedy.
        in_top = torch.arange(top_scores.size(1), device=device) < beam
        final = (is_eos & in_top & torch.isfinite(top_scores)).nonzero().tolist()
        for g, c in final:
            row = g * beam + int(from_row[g, c])
            words = tuple(seqs[row].tolist())
            score = float(top_scores[g, c])
            ended[int(groups[g])].append((rank(score, len(words) + 1), score, words))
        live = ~is_eos & (torch.cumsum((~is_eos).long(), dim=1) <= beam)
        scores = top_scores[live].view(m, beam)
        rows = (torch.arange(m, device=device).unsqueeze(1) * beam
                + from_row[live].view(m, beam)).view(-1)
        tokens = token[live].view(-1)
        seqs = torch.cat([seqs.index_select(0, rows), tokens.unsqueeze(1)], dim=1)
        state = model.reorder_state(state, rows)
        if step == max_len:
            break
        # A live score only falls; normalised, it can rise at most to score / max_len.
        best_live = scores[:, 0].cpu()
        bound = best_live / max_len if length_normalise else best_live
        done = [_has_beam_better(ended[int(s)], beam, float(b)) for s, b in zip(groups, bound)]
        if all(done):
            return _best(ended)
        if any(done):
            keep = torch.tensor([g for g, d in enumerate(done) if not d], dtype=torch.long)
            keep_dev = keep.to(device)
            keep_rows = (keep_dev.unsqueeze(1) * beam + torch.arange(beam, device=device)).view(-1)
            groups, scores = groups[keep], scores[keep_dev]
            tokens, seqs = tokens[keep_rows], seqs[keep_rows]
            rows_vectors = rows_vectors[keep_rows]
            state = model.reorder_state(state, keep_rows)
    # max_len reached: unended live hypotheses are candidates too.
    finite = torch.isfinite(scores).cpu()
    for g, sentence in enumerate(groups.tolist()):
        for b in range(beam):
            if finite[g, b]:
                words = tuple(seqs[g * beam + b].tolist())
                score = float(scores[g, b])
                ended[sentence].append((rank(score, len(words)), score, words))
    return _best(ended)


def _has_beam_better(ended: list[tuple[float, float, tuple[int, ...]]], beam: int,
                     bound: float) -> bool:
    """Whether `beam` ended hypotheses rank at least as high as any live one can."""
    if len(ended) < beam:
        return False
    return sorted((r for r, _, _ in ended), reverse=True)[beam - 1] >= bound


def _best(ended: list[list[tuple[float, float, tuple[int, ...]]]]) -> list[Hypothesis]:
    """The highest-ranked hypothesis of each sentence (the earliest found among equals)."""
    best = []
    for candidates in ended:
        _, score, words = max(candidates, key=lambda c: c[0])
        best.append(Hypothesis(words, score))
    return best
