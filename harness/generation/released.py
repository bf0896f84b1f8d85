"""The released Vec2Sent search, batched over sentences: `generation.length_penalty: paper`.

The search of the paper's code (maruker/vec2sent, src/vec2sent/lstm/beam_search.py,
`beam_decode`, called by src/vec2sent/lstm/model_utils.py `generate` with `beam_width=10`,
`max_len=100`) is a best-first search over one priority queue per sentence:

- a node is a hypothesis; its value is `BeamSearchNode.eval`: the sum of its tokens'
  probabilities (the model is called with `return_prob=True`) divided by `len + 5/6`, where
  `len` counts the start token (`harness.generation.ranking.released_value`);
- every round (`decode_beams`) takes `wanted = min(queue size, beam)` and pops nodes, best
  first, until `wanted` of them can be expanded: a popped node ending in eos is set aside as a
  result, one longer than `max_len` (`len > max_len`, i.e. `max_len` generated tokens) is
  dropped, the others are expanded: one model call on all of them, and each node's `beam` most
  probable continuations are pushed. Nodes that were not popped stay queued and compete with
  later, longer ones (unlike a beam search, which keeps only the last step's candidates);
- the search stops at the start of a round once `n_required = 5` results were set aside (a
  round may add several), or when the queue is empty; the answer is the result with the
  highest value (`sorted(..., key=-eval)` keeps the first popped among equals).

This module runs that algorithm for a whole batch of sentences at once: each sentence's queue
is a row of tensors (value, token, length, probability sum, log-probability sum, state row) kept
sorted best first, equal values first queued first; each round pops a prefix of every row, one
model call expands the popped nodes of every sentence, and the new nodes, sorted, are merged
into the rest (`torch.searchsorted`: no sort of the whole queue). The states of expanded nodes
live in a `StatePool`, since a queued node may be expanded many rounds after its parent.
Sentences whose search is over leave the batch. The probabilities are exp(log-probability) of
the model's float32 output, summed in float64 as the release's Python floats are.

Two things the release leaves undefined are fixed here: nodes of equal value leave the queue in
the order they were queued (the release's heap breaks such ties by its layout), and a sentence
whose queue empties before any hypothesis ended (the release raises `queue.Empty` there) gets
the highest-valued hypothesis dropped at `max_len`. One guard is added: a decoder that almost
never puts eos among its `beam` most probable tokens (an untrained one) makes the queue grow
without bound, so a sentence stops after `max_rounds` rounds (default 500, far more than a
trained decoder needs; counted and logged as a warning), with the release's own answer for too
few results, `nodes.get()`: the best queued node. The result's `score` is its summed
log-probability. `harness.generation.reference.released_beam_search` is the same search one
sentence at a time, with Python's `PriorityQueue` as in the release.
"""

from __future__ import annotations

import logging
from typing import Any

import torch
from torch import nn

from harness.generation.common import Hypothesis, check_beam, check_max_len, chunks, generating
from harness.generation.ranking import RELEASED_FINISHED, RELEASED_MAX_ROUNDS, released_value
from harness.generation.states import StatePool, batch_dims

log = logging.getLogger(__name__)
_FIELDS = ("value", "token", "tokens", "prob", "logp", "row")
_FLOATS = ("value", "prob", "logp")


def released_search(model: nn.Module, vectors: Any, *, beam: int, bos_id: int, eos_id: int,
                    max_len: int, batch_size: int, device: str | torch.device,
                    stop_after: int | None = None, progress: bool = False,
                    max_rounds: int = RELEASED_MAX_ROUNDS) -> list[Hypothesis]:
    """Return the hypothesis the released Vec2Sent search picks for each vector (N, D).

    `beam` is the release's `beam_width`, `max_len` its `max_len` (generated tokens, eos
    included), `stop_after` its `n_required` (default 5); a sentence gives up after
    `max_rounds` rounds. `batch_size` sentences are searched at once.
    """
    check_max_len(max_len)
    check_beam(beam, stop_after)
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be at least 1, got {max_rounds}")
    finished = RELEASED_FINISHED if stop_after is None else stop_after
    results: list[Hypothesis] = []
    gave_up = 0
    with generating(model, device) as (dev, autocast):
        for chunk in chunks(vectors, batch_size, dev, progress, f"released search {beam}"):
            batch = _Batch(model, chunk, beam, bos_id, eos_id, max_len, finished, autocast,
                           max_rounds)
            results.extend(batch.run())
            gave_up += batch.gave_up
    if gave_up:
        log.warning("released search: %d of %d sentences stopped after %d rounds with fewer "
                    "than %d ended hypotheses (the decoder rarely proposes eos); each got its "
                    "best ended or, without one, its best queued hypothesis", gave_up,
                    len(results), max_rounds, finished)
    return results


class _Batch:
    """The released search for a batch of sentences (one queue, a row of tensors, each)."""

    def __init__(self, model: nn.Module, vectors: torch.Tensor, beam: int, bos_id: int,
                 eos_id: int, max_len: int, finished: int, autocast: Any,
                 max_rounds: int) -> None:
        self.model, self.vectors, self.autocast = model, vectors, autocast
        self.rounds, self.max_rounds, self.gave_up = 0, max_rounds, 0
        self.beam, self.eos_id, self.max_len, self.finished = beam, eos_id, max_len, finished
        n, dev = vectors.size(0), vectors.device
        self.device = dev
        self.pool = StatePool(model, batch_dims(model, vectors[:1]), model.initial_state(vectors),
                              n, 4 * n * (beam + 1), max_len, dev)
        f64 = {"dtype": torch.float64, "device": dev}
        # Per sentence ("group"): its queue, row by row; first the start node (len 1, score 0).
        self.queue = {"value": torch.zeros((n, 1), **f64),
                      "token": torch.full((n, 1), bos_id, dtype=torch.long, device=dev),
                      "tokens": torch.zeros((n, 1), dtype=torch.long, device=dev),
                      "prob": torch.zeros((n, 1), **f64),
                      "logp": torch.zeros((n, 1), **f64),
                      "row": torch.arange(n, device=dev).unsqueeze(1)}
        self.group = {"sentence": torch.arange(n, device=dev),
                      "ended": torch.zeros(n, dtype=torch.long, device=dev),
                      # the best result so far, and the best node dropped at max_len
                      "best_value": torch.full((n,), float("-inf"), **f64),
                      "best_logp": torch.zeros(n, **f64),
                      "best_len": torch.zeros(n, dtype=torch.long, device=dev),
                      "best_seq": torch.zeros((n, max_len), dtype=torch.long, device=dev),
                      "drop_value": torch.full((n,), float("-inf"), **f64),
                      "drop_logp": torch.zeros(n, **f64),
                      "drop_seq": torch.zeros((n, max_len), dtype=torch.long, device=dev)}
        self.out: list[Hypothesis | None] = [None] * n

    def run(self) -> list[Hypothesis]:
        """Search every sentence of the batch to its end; their results, in input order."""
        while self._retire_finished():
            self._round()
        return [h if h is not None else Hypothesis((), float("-inf")) for h in self.out]

    # ----------------------------------------------------------------------------- one round

    def _round(self) -> None:
        """One `decode_beams`: pop best first, set aside ended nodes, expand the others."""
        self.rounds += 1
        q, g = self.queue, self.group
        used = q["value"] > float("-inf")  # the queue is sorted: its nodes, then empty slots
        remap = self.pool.reserve(used.size(0) * self.beam, lambda: q["row"][used])
        if remap is not None:
            q["row"] = torch.where(used, remap[q["row"]], 0)
        is_eos = used & (q["token"] == self.eos_id)
        expandable = used & ~is_eos & (q["tokens"] < self.max_len)
        wanted = used.sum(1).clamp(max=self.beam)
        count = expandable.long()
        popped = used & ((count.cumsum(1) - count) < wanted.unsqueeze(1))
        ended = popped & is_eos
        g["ended"] += ended.sum(1)
        self._keep_best(ended, "best")
        self._keep_best(popped & ~is_eos & ~expandable, "drop")
        rows, cols = (popped & expandable).nonzero(as_tuple=True)  # by sentence, best first
        children = self._expand(rows, cols) if rows.numel() else None
        self._requeue(popped.sum(1), used.sum(1), children)

    def _keep_best(self, mask: torch.Tensor, kind: str) -> None:
        """Keep, per sentence, the first node of `mask` (the queue is sorted: its best, first
        queued among equals) as `kind` ("best": ended, "drop": at max_len) when it beats the one kept."""
        q, g = self.queue, self.group
        first = mask.long().argmax(dim=1)
        which = mask.any(dim=1).nonzero().squeeze(1)
        value = q["value"][which, first[which]]
        which = which[value > g[f"{kind}_value"][which]]
        if not which.numel():
            return
        col = first[which]
        g[f"{kind}_value"][which] = q["value"][which, col]
        g[f"{kind}_logp"][which] = q["logp"][which, col]
        seq = self.pool.seqs[q["row"][which, col]]  # the parent's ids
        if kind == "best":
            g["best_len"][which] = q["tokens"][which, col] - 1  # eos is not an id of the result
        else:
            seq[:, self.max_len - 1] = q["token"][which, col]
        g[f"{kind}_seq"][which] = seq

    def _expand(self, rows: torch.Tensor, cols: torch.Tensor) -> dict[str, torch.Tensor]:
        """Run the model once on the popped nodes (queue positions `rows`, `cols`); return their
        children, `beam` per node, with `group` and `slot` (the child's place among its
        sentence's new nodes)."""
        q, g = self.queue, self.group
        parent = q["row"][rows, cols]
        tokens, length = q["token"][rows, cols], q["tokens"][rows, cols]
        with self.autocast():
            log_probs, state = self.model.step(tokens, self.vectors[g["sentence"][rows]],
                                               self.pool.rows(parent))
        k = min(self.beam, log_probs.size(-1))
        top_log_probs, top_tokens = log_probs.float().topk(k, dim=-1)
        node_rows = self.pool.add(state, rows.numel())
        seqs = self.pool.seqs[parent]
        grown = (length > 0).nonzero().squeeze(1)  # the start node adds no id
        seqs[grown, length[grown] - 1] = tokens[grown]
        self.pool.seqs[node_rows] = seqs
        counts = torch.bincount(rows, minlength=g["sentence"].numel())
        first_of_group = counts.cumsum(0) - counts
        position = torch.arange(rows.numel(), device=self.device) - first_of_group[rows]
        slot = position.unsqueeze(1) * k + torch.arange(k, device=self.device)
        prob = q["prob"][rows, cols].unsqueeze(1) + top_log_probs.exp().double()
        child_tokens = (length + 1).unsqueeze(1).expand(-1, k)
        children = {"value": released_value(prob, child_tokens.double()),
                    "token": top_tokens, "tokens": child_tokens, "prob": prob,
                    "logp": q["logp"][rows, cols].unsqueeze(1) + top_log_probs.double(),
                    "row": node_rows.unsqueeze(1).expand(-1, k),
                    "group": rows.unsqueeze(1).expand(-1, k), "slot": slot}
        return children

    def _requeue(self, popped: torch.Tensor, size: torch.Tensor,
                 children: dict[str, torch.Tensor] | None) -> None:
        """Each queue becomes its nodes not popped (a suffix of the sorted row) merged with the
        new children, still sorted best first and, among equals, first queued first: the
        queued nodes before the children, the children in the order they were pushed."""
        q, m = self.queue, self.queue["value"].size(0)
        remaining = size - popped
        width = int(remaining.max())
        offset = torch.arange(width, device=self.device)
        index = (popped.unsqueeze(1) + offset).clamp(max=q["value"].size(1) - 1)
        parts = {name: q[name].gather(1, index) for name in _FIELDS}
        _empty_where(parts, offset >= remaining.unsqueeze(1))
        if children is None:
            self.queue = parts
            return
        new = _empty_slots(m, int(children["slot"].max()) + 1, self.device)
        at = (children["group"].reshape(-1), children["slot"].reshape(-1))
        for name in _FIELDS:
            new[name][at] = children[name].reshape(-1)
        order = new["value"].argsort(dim=1, descending=True, stable=True)  # stable: push order
        new = {name: tensor.gather(1, order) for name, tensor in new.items()}
        # Merge two rows sorted by value, descending: a child goes after the queued nodes of
        # its value or more, a queued node after the children of a greater value.
        queued_keys, child_keys = (-parts["value"]).contiguous(), (-new["value"]).contiguous()
        child_at = (torch.searchsorted(queued_keys, child_keys, right=True)
                    + torch.arange(child_keys.size(1), device=self.device))
        queued_at = (torch.searchsorted(child_keys, queued_keys)
                     + torch.arange(queued_keys.size(1), device=self.device))
        merged = _empty_slots(m, queued_keys.size(1) + child_keys.size(1), self.device)
        for name in _FIELDS:
            merged[name].scatter_(1, queued_at, parts[name]).scatter_(1, child_at, new[name])
        self.queue = merged

    # ------------------------------------------------------------------------ sentences done

    def _give_up(self, stopped: torch.Tensor) -> None:
        """Sentences `stopped` at the round limit without a result take their best queued node
        (as the release's `results = [nodes.get(False)]` for too few results)."""
        g = self.group
        self.gave_up += int(stopped.sum())
        without = stopped & ~torch.isfinite(g["best_value"])
        if not without.any():
            return
        q, which = self.queue, without.nonzero().squeeze(1)  # sorted: its best node first
        seq = self.pool.seqs[q["row"][which, 0]]
        token, length = q["token"][which, 0], q["tokens"][which, 0]
        ended = token == self.eos_id  # queued, never popped: its ids end before eos
        length = torch.where(ended, length - 1, length)
        grown = ((length > 0) & ~ended).nonzero().squeeze(1)
        seq[grown, length[grown] - 1] = token[grown]
        g["best_value"][which] = q["value"][which, 0]
        g["best_logp"][which] = q["logp"][which, 0]
        g["best_len"][which] = length
        g["best_seq"][which] = seq

    def _retire_finished(self) -> bool:
        """Store the result of every sentence whose search is over (`n_required` results set
        aside, an empty queue, or `max_rounds` rounds) and drop it from the batch; False once
        none is left."""
        q, g = self.queue, self.group
        done = ((q["value"] > float("-inf")).sum(1) == 0) | (g["ended"] >= self.finished)
        if self.rounds >= self.max_rounds:
            self._give_up(~done)
            done = torch.ones_like(done)
        if done.any():
            finished = done.nonzero().squeeze(1)
            has_best = torch.isfinite(g["best_value"][finished]).tolist()
            has_drop = torch.isfinite(g["drop_value"][finished]).tolist()
            best = (g["best_seq"][finished].tolist(), g["best_len"][finished].tolist(),
                    g["best_logp"][finished].tolist())
            drop = (g["drop_seq"][finished].tolist(), g["drop_logp"][finished].tolist())
            for i, sentence in enumerate(g["sentence"][finished].tolist()):
                if has_best[i]:
                    self.out[sentence] = Hypothesis(tuple(best[0][i][:best[1][i]]), best[2][i])
                elif has_drop[i]:
                    self.out[sentence] = Hypothesis(tuple(drop[0][i]), drop[1][i])
            keep = (~done).nonzero().squeeze(1)
            self.queue = {name: tensor[keep] for name, tensor in q.items()}
            self.group = {name: tensor[keep] for name, tensor in g.items()}
        return bool(self.group["sentence"].numel())


def _empty_slots(rows: int, width: int, device: torch.device) -> dict[str, torch.Tensor]:
    """Queue fields of `width` empty slots per sentence."""
    shape = (rows, width)
    parts = {name: torch.empty(shape, dtype=torch.float64 if name in _FLOATS else torch.long,
                               device=device) for name in _FIELDS}
    parts["value"].fill_(float("-inf"))
    parts["row"].zero_()  # a valid pool row, looked up (and then ignored) for empty slots too
    return parts


def _empty_where(parts: dict[str, torch.Tensor], mask: torch.Tensor) -> None:
    """Mark the slots of `mask` empty: value -inf, after every node (never popped)."""
    parts["value"].masked_fill_(mask, float("-inf"))
