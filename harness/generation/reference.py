"""One-sentence-at-a-time priority-queue beam search, shaped like the released Vec2Sent code.

The released search (maruker/vec2sent, lstm/beam_search.py `beam_decode`, called with beam 10
from lstm/model_utils.py `generate`) keeps one node per hypothesis, each holding its own slice
of the LSTM state and a pointer to its parent, in a `queue.PriorityQueue`; every round it pops
the best nodes, sets aside those ending in eos, runs the model once on up to `beam` popped nodes
stacked into a batch, and pushes each node's `beam` most likely continuations.

Two searches follow that shape:

- `priority_queue_beam_search`: the same search as the batched `beam_search` (for none and
  mean, the queue holds one step's candidates, a sentence stops when no live hypothesis can
  beat its best ended one; for paper, it is `released_beam_search`), so the two must return
  the same hypotheses: the baseline of benchmarks/perf/generation.py and of the equality tests.
- `released_beam_search`: the released algorithm itself, quirks included: nodes that were not
  expanded stay in the queue and compete with later, longer ones (a best-first search), the
  queue is ordered by the sum of the tokens' *probabilities* divided by (len + 5/6), and the
  search stops once 5 hypotheses have ended. The batched `harness.generation.released` (the
  `paper` search of a run) must return its hypotheses.

Both are slow on purpose: they exist to be compared with, never to be used in a run.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from queue import PriorityQueue
from typing import Any

import numpy as np
import torch
from torch import nn

from harness.generation.common import Hypothesis, generating
from harness.generation.ranking import (
    RELEASED_FINISHED,
    RELEASED_MAX_ROUNDS,
    best_reachable,
    rank,
    released_value,
)
from harness.generation.states import batch_dims, stack_states


@dataclass(eq=False)
class _Node:
    """A hypothesis: its last token, the model state after its parent's step, its parent."""

    state: Any
    parent: _Node | None
    token: int
    score: float            # summed log-probability (a float32 sum, as in the batched search)
    tokens: int             # generated tokens, eos included
    value: float            # what the queue orders by, highest first
    order: int              # when it was queued: breaks ties, first come first
    probability_sum: float = 0.0  # the released code's score

    def __lt__(self, other: _Node) -> bool:
        # PriorityQueue pops the smallest item: "smaller" here means more promising. Among
        # equals the earlier one, as the batched search's stable sort of its candidates.
        return (self.value > other.value
                or (self.value == other.value and self.order < other.order))

    def ids(self, eos_id: int) -> tuple[int, ...]:
        """The generated ids of this hypothesis, without bos and eos."""
        out = []
        node: _Node | None = self
        while node is not None and node.parent is not None:
            out.append(node.token)
            node = node.parent
        out.reverse()
        if out and out[-1] == eos_id:
            out.pop()
        return tuple(out)


class _States:
    """Per-node model states: one row sliced out of a batch, and rows stacked into a batch."""

    def __init__(self, model: nn.Module, vector: torch.Tensor) -> None:
        self.model = model
        self.dims = batch_dims(model, vector)

    def row(self, state: Any, index: int, device: torch.device) -> Any:
        return self.model.reorder_state(state, torch.tensor([index], device=device))

    def stack(self, states: list[Any]) -> Any:
        return stack_states(states, self.dims)


def _as_row(vector: Any, device: torch.device) -> torch.Tensor:
    row = vector if isinstance(vector, torch.Tensor) else torch.from_numpy(
        np.array(vector, dtype=np.float32))
    return row.to(device=device, dtype=torch.float32).reshape(1, -1)


def _expand(model: nn.Module, states: _States, nodes: list[_Node], vector: torch.Tensor,
            width: int, autocast: Any) -> tuple[torch.Tensor, torch.Tensor, list[Any]]:
    """Run the model once on the stacked nodes (under `autocast`, in the precision of the
    batched search): their top-`width` (log-probs, tokens) and the state each node's children
    share."""
    device = vector.device
    tokens = torch.tensor([n.token for n in nodes], dtype=torch.long, device=device)
    with autocast():
        log_probs, state = model.step(tokens, vector.expand(len(nodes), -1),
                                      states.stack([n.state for n in nodes]))
    top_log_probs, top_tokens = log_probs.float().topk(min(width, log_probs.size(-1)), dim=-1)
    children_states = [states.row(state, i, device) for i in range(len(nodes))]
    return top_log_probs.cpu(), top_tokens.cpu(), children_states


def priority_queue_beam_search(model: nn.Module, vector: Any, *, beam: int, bos_id: int,
                               eos_id: int, max_len: int, length_penalty: str = "none",
                               stop_after: int | None = None,
                               device: str | torch.device = "cpu") -> Hypothesis:
    """Return the best hypothesis for one sentence vector (D,), as `beam_search` defines it
    (for `length_penalty="paper"`, the released search: `released_beam_search`)."""
    if length_penalty == "paper":
        return released_beam_search(model, vector, beam=beam, bos_id=bos_id, eos_id=eos_id,
                                    max_len=max_len, device=device,
                                    finished=RELEASED_FINISHED if stop_after is None
                                    else stop_after)
    with generating(model, device) as (device, autocast):
        row = _as_row(vector, device)
        states = _States(model, row)
        queued = itertools.count()
        live = [_Node(model.initial_state(row), None, bos_id, np.float32(0.0), 0, 0.0,
                      next(queued))]
        best: _Node | None = None
        best_rank, ended = -math.inf, 0
        for step in range(1, max_len + 1):
            top_log_probs, top_tokens, child_states = _expand(model, states, live, row, beam,
                                                              autocast)
            queue: PriorityQueue[_Node] = PriorityQueue()
            for i, node in enumerate(live):
                for log_prob, token in zip(top_log_probs[i].tolist(), top_tokens[i].tolist(),
                                           strict=True):
                    score = node.score + np.float32(log_prob)
                    queue.put(_Node(child_states[i], node, token, score, step, score,
                                    next(queued)))
            popped: list[_Node] = []
            while len(popped) < beam and not queue.empty():
                candidate = queue.get()
                if not math.isfinite(candidate.score):
                    break
                if candidate.token == eos_id:
                    ended += 1
                    value = rank(candidate.score, step, length_penalty)
                    if value > best_rank:
                        best, best_rank = candidate, value
                else:
                    popped.append(candidate)
            if not popped:
                break
            live = popped
            if stop_after is not None and ended >= stop_after:
                break
            if best_rank >= best_reachable(live[0].score, max_len, length_penalty):
                break
        chosen = best if best is not None else live[0]
        return Hypothesis(chosen.ids(eos_id), float(chosen.score))


def released_beam_search(model: nn.Module, vector: Any, *, beam: int, bos_id: int, eos_id: int,
                         max_len: int, finished: int = RELEASED_FINISHED,
                         device: str | torch.device = "cpu",
                         max_rounds: int = RELEASED_MAX_ROUNDS) -> Hypothesis:
    """Return the hypothesis the released Vec2Sent search picks for one vector (D,).

    `beam_decode` of maruker/vec2sent src/vec2sent/lstm/beam_search.py, step by step: one
    `PriorityQueue` of all unexpanded nodes, ordered by (sum of token probabilities) /
    (len + 5/6) with len counting the start token; each round pops nodes until
    `min(queue size, beam)` can be expanded (ended ones are set aside, ones longer than
    `max_len` dropped) and pushes their `beam` best continuations; stops once `finished`
    hypotheses have ended (or the queue is empty) and returns the ended one ranked highest,
    the first popped among equals. Probabilities are exp of the model's float32
    log-probabilities, summed in Python floats. Equal values leave the queue first queued, first
    out; a sentence with no ended hypothesis (where the release raises `queue.Empty`) gets the
    highest-valued node dropped at `max_len`. After `max_rounds` rounds the search gives up
    (the harness's guard, as `harness.generation.released`): with no ended hypothesis, the answer
    is the best queued node, the release's `nodes.get(False)`. The score is the summed
    log-probability.
    """
    with generating(model, device) as (device, autocast):
        row = _as_row(vector, device)
        states = _States(model, row)
        nodes: PriorityQueue[_Node] = PriorityQueue()
        queued = itertools.count()
        nodes.put(_Node(model.initial_state(row), None, bos_id, 0.0, 0, 0.0, next(queued)))
        results: list[_Node] = []
        dropped: _Node | None = None
        rounds = 0
        while not nodes.empty() and len(results) < finished and rounds < max_rounds:
            rounds += 1
            batch: list[_Node] = []
            wanted = min(nodes.qsize(), beam)
            while len(batch) < wanted and not nodes.empty():
                node = nodes.get()
                if node.token == eos_id:
                    results.append(node)
                elif node.tokens < max_len:  # the released `len <= max_len`, len = tokens + 1
                    batch.append(node)
                elif dropped is None or node.value > dropped.value:
                    dropped = node
            if not batch:
                continue
            top_log_probs, top_tokens, child_states = _expand(model, states, batch, row,
                                                              beam, autocast)
            probabilities = top_log_probs.exp().tolist()  # float32, as the batched search
            for i, node in enumerate(batch):
                for log_prob, probability, token in zip(top_log_probs[i].tolist(),
                                                        probabilities[i],
                                                        top_tokens[i].tolist(), strict=True):
                    probability_sum = node.probability_sum + probability
                    tokens = node.tokens + 1
                    nodes.put(_Node(child_states[i], node, token, node.score + log_prob,
                                    tokens, released_value(probability_sum, tokens),
                                    next(queued), probability_sum))
        if not results and not nodes.empty():
            results = [nodes.get()]  # gave up at the round limit
        if not results:
            if dropped is None:
                return Hypothesis((), float("-inf"))
            return Hypothesis(dropped.ids(eos_id), float(dropped.score))
        chosen = max(results, key=lambda n: n.value)  # the first among equals, as sorted()
        return Hypothesis(chosen.ids(eos_id), float(chosen.score))
