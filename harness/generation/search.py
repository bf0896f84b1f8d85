"""Greedy and beam search over any `ConditionalLanguageModel`, batched over many sentences.

Both searches generate at most `max_len` tokens per sentence, the end-of-sentence token included;
a sentence with no hypothesis ended by then gets its best one as it stands. Rows whose sentences
are done are dropped from the batch (`reorder_state`), so long outliers do not keep a whole batch
busy. Beam search ranks ended hypotheses with the length penalties of
`harness.generation.ranking`; `length_penalty="paper"` hands the search to
`harness.generation.released`, the released Vec2Sent algorithm. `harness.generation.reference`
holds the one-sentence-at-a-time searches both are checked and benchmarked against.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from harness.generation.common import Hypothesis, check_beam, check_max_len, chunks, generating
from harness.generation.ranking import LengthPenalty, best_reachable, check_penalty, rank
from harness.generation.released import released_search


def greedy_search(model: nn.Module, vectors: Any, *, bos_id: int, eos_id: int, max_len: int,
                  batch_size: int, device: str | torch.device,
                  progress: bool = False) -> list[Hypothesis]:
    """Return the greedy (most likely next token at every step) output for each vector (N, D)."""
    check_max_len(max_len)
    results: list[Hypothesis] = []
    with generating(model, device) as (dev, autocast):
        for chunk in chunks(vectors, batch_size, dev, progress, "greedy"):
            with autocast():
                results.extend(_greedy_batch(model, chunk, bos_id, eos_id, max_len))
    return results


def beam_search(model: nn.Module, vectors: Any, *, beam: int, bos_id: int, eos_id: int,
                max_len: int, batch_size: int, device: str | torch.device,
                length_penalty: LengthPenalty = "none", stop_after: int | None = None,
                progress: bool = False) -> list[Hypothesis]:
    """Return the best hypothesis found by beam search of width `beam` for each vector (N, D).

    With `length_penalty` none or mean: at every step each live hypothesis proposes its `beam`
    most likely next tokens; the candidates are taken best first (by summed log-probability),
    those ending in eos set aside as ended, until `beam` live ones are kept. The result is the
    ended hypothesis ranked highest by the penalty (`harness.generation.ranking`); a sentence
    with none ended by `max_len` tokens gets its best live one. A sentence stops when no live
    hypothesis can outrank its best ended one any more, or, with `stop_after`, once that many
    hypotheses have ended. With `beam=1` this is greedy search.

    With `length_penalty="paper"` it is the released Vec2Sent search instead
    (`harness.generation.released`: best first over a queue ranked by summed probabilities,
    stopping after `stop_after` ended hypotheses, 5 when None); with `beam=1` that is greedy
    search too.
    """
    check_max_len(max_len)
    check_beam(beam, stop_after)
    penalty = length_penalty
    check_penalty(penalty)  # before any work
    if penalty == "paper":
        return released_search(model, vectors, beam=beam, bos_id=bos_id, eos_id=eos_id,
                               max_len=max_len, batch_size=batch_size, device=device,
                               stop_after=stop_after, progress=progress)
    results: list[Hypothesis] = []
    with generating(model, device) as (dev, autocast):
        for chunk in chunks(vectors, batch_size, dev, progress, f"beam {beam}"):
            with autocast():
                results.extend(_beam_batch(model, chunk, beam, bos_id, eos_id, max_len,
                                           penalty, stop_after))
    return results


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
        # topk, as beam search: with beam 1 both pick the same token among equals.
        best_log_prob, tokens = (t.squeeze(-1) for t in log_probs.float().topk(1, dim=-1))
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
                max_len: int, penalty: str, stop_after: int | None) -> list[Hypothesis]:
    """Beam search for a batch of sentences at once: `beam` rows per live sentence ("group").

    Per group the search keeps the best ended hypothesis only (rank, score, ids), which is all
    the result needs; rows of finished groups leave the batch.
    """
    n, device = vectors.size(0), vectors.device
    out: list[Hypothesis | None] = [None] * n
    neg_inf = float("-inf")
    groups = torch.arange(n, device=device)  # sentence of each live group
    # Every group starts from one row (the bos prefix) and has `beam` rows after the first step.
    rows_vectors = vectors
    state = model.initial_state(rows_vectors)
    tokens = torch.full((n,), bos_id, dtype=torch.long, device=device)
    seqs = torch.empty((n, 0), dtype=torch.long, device=device)
    scores = torch.zeros((n, 1), device=device)  # summed log-probabilities of each group's rows
    best_rank = torch.full((n,), neg_inf, device=device)
    best_score = torch.full((n,), neg_inf, device=device)
    best_seq = torch.zeros((n, max_len), dtype=torch.long, device=device)
    best_len = torch.zeros((n,), dtype=torch.long, device=device)
    ended = torch.zeros((n,), dtype=torch.long, device=device)
    for step in range(1, max_len + 1):
        log_probs, state = model.step(tokens, rows_vectors, state)
        m, width = scores.shape  # live groups, rows per group
        k = min(beam, log_probs.size(-1))
        top_log_probs, top_tokens = log_probs.float().topk(k, dim=-1)  # each row's k best
        candidates, order = (scores.view(-1, 1) + top_log_probs).view(m, width * k).sort(
            dim=1, descending=True, stable=True)
        cand_tokens = top_tokens.view(m, width * k).gather(1, order)
        cand_slot = torch.div(order, k, rounding_mode="floor")  # the parent's beam slot
        finite = torch.isfinite(candidates)
        is_eos = (cand_tokens == eos_id) & finite
        is_live = (cand_tokens != eos_id) & finite
        live_count = is_live.cumsum(dim=1)  # live candidates up to and including each one
        keep_live = is_live & (live_count <= beam)
        keep_eos = is_eos & (live_count < beam)  # ended before the beam-th live one was taken

        # Ended hypotheses: keep the best per group (the earliest among equals).
        ended += keep_eos.sum(dim=1)
        eos_rank = torch.where(keep_eos, rank(candidates, step, penalty),
                               torch.full_like(candidates, neg_inf))
        step_best, at = eos_rank.max(dim=1)
        better = (step_best > best_rank).nonzero().squeeze(1)
        if better.numel():
            parents = better * width + cand_slot[better, at[better]]
            best_rank[better] = step_best[better]
            best_score[better] = candidates[better, at[better]]
            best_len[better] = step - 1
            best_seq[better, :step - 1] = seqs[parents]

        scores, tokens, rows = _live(keep_live, live_count, candidates, cand_tokens, cand_slot,
                                     width, beam, eos_id)
        seqs = torch.cat([seqs.index_select(0, rows), tokens.unsqueeze(1)], dim=1)
        state = model.reorder_state(state, rows)
        if width < beam:
            rows_vectors = rows_vectors.index_select(0, rows)

        best_live = scores[:, 0]
        done = ~torch.isfinite(best_live) | (best_rank >= best_reachable(best_live, max_len,
                                                                         penalty))
        if stop_after is not None:
            done |= ended >= stop_after
        if step == max_len:
            done = torch.ones_like(done)
        finished = done.nonzero().squeeze(1)
        if not finished.numel():
            continue
        _collect(out, finished, groups, best_rank, best_score, best_seq, best_len, scores, seqs,
                 beam)
        if finished.numel() == m:
            break
        keep = (~done).nonzero().squeeze(1)
        keep_rows = (keep.unsqueeze(1) * beam + torch.arange(beam, device=device)).view(-1)
        groups, scores, ended = groups[keep], scores[keep], ended[keep]
        best_rank, best_score = best_rank[keep], best_score[keep]
        best_seq, best_len = best_seq[keep], best_len[keep]
        tokens, seqs, rows_vectors = tokens[keep_rows], seqs[keep_rows], rows_vectors[keep_rows]
        state = model.reorder_state(state, keep_rows)
    return [h if h is not None else Hypothesis((), float("-inf")) for h in out]


def _live(keep_live: torch.Tensor, live_count: torch.Tensor, candidates: torch.Tensor,
          cand_tokens: torch.Tensor, cand_slot: torch.Tensor, width: int, beam: int,
          eos_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The live hypotheses after a step: the first `beam` non-ending candidates of each group,
    in rank order, into slots; their (groups, beam) scores, their tokens (one per row) and the
    row each continues (its parent's group * `width` + beam slot)."""
    m, device = candidates.size(0), candidates.device
    slot = torch.where(keep_live, live_count - 1, torch.full_like(live_count, beam))
    scores = torch.full((m, beam + 1), float("-inf"), device=device).scatter_(
        1, slot, torch.where(keep_live, candidates, float("-inf")))[:, :beam].contiguous()
    new_tokens = torch.full((m, beam + 1), eos_id, dtype=torch.long, device=device).scatter_(
        1, slot, cand_tokens)[:, :beam]
    parent_slot = torch.zeros((m, beam + 1), dtype=torch.long, device=device).scatter_(
        1, slot, cand_slot)[:, :beam]
    rows = (torch.arange(m, device=device).unsqueeze(1) * width + parent_slot).view(-1)
    return scores, new_tokens.reshape(-1), rows


def _collect(out: list[Hypothesis | None], finished: torch.Tensor, groups: torch.Tensor,
             best_rank: torch.Tensor, best_score: torch.Tensor, best_seq: torch.Tensor,
             best_len: torch.Tensor, scores: torch.Tensor, seqs: torch.Tensor,
             beam: int) -> None:
    """Store the result of each finished group: its best ended hypothesis, else its best live
    one (a sentence that did not end within `max_len` tokens)."""
    has_ended = torch.isfinite(best_rank[finished]).tolist()
    ended_seqs = best_seq[finished].tolist()
    ended_lens = best_len[finished].tolist()
    ended_scores = best_score[finished].tolist()
    live_seqs = seqs[finished * beam].tolist()
    live_scores = scores[finished, 0].tolist()
    for i, sentence in enumerate(groups[finished].tolist()):
        if has_ended[i]:
            out[sentence] = Hypothesis(tuple(ended_seqs[i][:ended_lens[i]]), ended_scores[i])
        else:
            out[sentence] = Hypothesis(tuple(live_seqs[i]), live_scores[i])
