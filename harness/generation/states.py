"""Rows of a decoder's recurrent state, whatever its structure.

A `ConditionalLanguageModel`'s state is a tensor or a (named) tuple or list of them, each with a
batch dimension somewhere; the protocol only promises `reorder_state` (select rows). The
searches that keep nodes outside one batch (the one-sentence references, the batched released
search) also need to stack rows and to store rows in a growing pool. The batch dimension of each
tensor is found once, by comparing the model's initial states of one and of two rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn


def _rebuild(like: Any, items: list[Any]) -> Any:
    """A container of `like`'s type (tuple, list or named tuple) holding `items`."""
    return type(like)(*items) if hasattr(like, "_fields") else type(like)(items)


def map_state(fn: Callable[..., torch.Tensor], state: Any, *others: Any) -> Any:
    """Apply `fn` to corresponding tensors of `state` and `others`, keeping the structure."""
    if isinstance(state, torch.Tensor):
        return fn(state, *others)
    return _rebuild(state, [map_state(fn, *parts)
                            for parts in zip(state, *others, strict=True)])


def batch_dims(model: nn.Module, vector: torch.Tensor) -> Any:
    """The batch dimension of each tensor of `model`'s state (a structure of ints like it),
    from its initial states for one row of `vector` (1, D) and for two."""
    def dim(one: torch.Tensor, two: torch.Tensor) -> torch.Tensor:
        found = [d for d in range(one.dim()) if one.size(d) != two.size(d)]
        if not found:
            raise ValueError(f"a state tensor of shape {tuple(one.shape)} has no batch "
                             "dimension: every tensor of a decoder's state needs one")
        return found[0]  # type: ignore[return-value]

    row = vector.reshape(1, -1)
    return map_state(dim, model.initial_state(row), model.initial_state(row.expand(2, -1)))


def stack_states(states: list[Any], dims: Any) -> Any:
    """One state holding the rows of `states`, in order, along each tensor's batch dimension."""
    if isinstance(dims, int):
        return torch.cat(states, dim=dims)
    return _rebuild(states[0], [stack_states([s[i] for s in states], d)
                                for i, d in enumerate(dims)])


class StatePool:
    """A growing store of state rows (and of each row's generated ids), addressed by row number.

    `state` is one state whose batch dimensions have room for `capacity` rows, of which the
    first `size` are in use; `seqs[row]` holds the ids generated up to that row's node.
    `compact` keeps only the rows still referenced and says where each went.
    """

    def __init__(self, model: nn.Module, dims: Any, first: Any, rows: int, capacity: int,
                 max_len: int, device: torch.device) -> None:
        self.model, self.dims = model, dims
        self.capacity = max(capacity, rows)
        self.state = map_state(self._empty, first, dims)
        self.seqs = torch.zeros((self.capacity, max_len), dtype=torch.long, device=device)
        self.size = 0
        self.add(first, rows)

    def _empty(self, like: torch.Tensor, dim: int) -> torch.Tensor:
        shape = list(like.shape)
        shape[dim] = self.capacity
        return like.new_zeros(shape)

    def rows(self, index: torch.Tensor) -> Any:
        """The state of rows `index`, as one batch (the model's own `reorder_state`)."""
        return self.model.reorder_state(self.state, index)

    def add(self, state: Any, count: int) -> torch.Tensor:
        """Store the `count` rows of `state` (room must have been `reserve`d); their numbers."""
        index = torch.arange(self.size, self.size + count, device=self.seqs.device)
        map_state(lambda pool, rows, dim: pool.index_copy_(dim, index, rows), self.state, state,
                  self.dims)
        self.size += count
        return index

    def reserve(self, extra: int, live: Callable[[], torch.Tensor]) -> torch.Tensor | None:
        """Make room for `extra` more rows, keeping the rows `live()` (numbers, any order,
        repeats allowed; asked for only when rows must move). Returns None when nothing moved,
        else old row number -> new (-1: dropped)."""
        if self.size + extra <= self.capacity:
            return None
        kept = torch.unique(live())
        remap = torch.full((self.capacity,), -1, dtype=torch.long, device=self.seqs.device)
        remap[kept] = torch.arange(kept.numel(), device=self.seqs.device)
        state, seqs = self.rows(kept), self.seqs[kept]
        needed = kept.numel() + extra
        if needed > self.capacity // 2:  # grow, so that compactions stay rare
            self.capacity = max(2 * self.capacity, needed)
            self.state = map_state(self._empty, state, self.dims)
            self.seqs = seqs.new_zeros((self.capacity, seqs.size(1)))
        self.size = 0
        self.add(state, kept.numel())
        self.seqs[:kept.numel()] = seqs
        return remap
