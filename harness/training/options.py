"""How the trainer's options divide: which fields change the trained weights (no torch import).

The options themselves are `harness.protocols.TrainingOptions`, the fields every decoder's
`DecoderOptions` carries, so a spec sets them next to a decoder's architecture:
`decoders: [{name: mos-lstm, epochs: 10, patience: 2}]`. The trainer reads them as given.
"""

from __future__ import annotations

from typing import Any

from harness.protocols import TrainingOptions

__all__ = ["ADDED_FIELDS", "BOOKKEEPING_FIELDS", "EXTENSIBLE_FIELDS", "RESULT_FIELDS",
           "TrainingOptions", "bookkeeping", "keyed_options", "weight_settings"]

BOOKKEEPING_FIELDS: frozenset[str] = frozenset({"checkpoint_every", "log_every"})
"""How often training checkpoints and logs: never changes the weights of one process, and the
trainer resumes across a change of either, so neither is part of the train stage's cache key.
With several `workers`, `checkpoint_every` does change them (`bookkeeping`)."""

EXTENSIBLE_FIELDS: frozenset[str] = frozenset({"epochs", "patience", "min_delta"})
"""Fields that decide only when training ends: a checkpoint written with other values is
resumed (a larger `epochs` or `patience`, or a smaller `min_delta`, lets a stopped run go on)."""

RESULT_FIELDS: tuple[str, ...] = tuple(
    name for name in TrainingOptions.model_fields
    if name not in BOOKKEEPING_FIELDS | EXTENSIBLE_FIELDS)
"""Fields that change the trained weights for a given number of epochs: a checkpoint written
with other values cannot be resumed."""

_ABSENT = object()

ADDED_FIELDS: dict[str, Any] = {"workers": 1, "embeddings": "subword"}
"""Result-changing fields added after trained decoders and checkpoints were cached, with the
value all of those were trained with (`embeddings`, an option of the first-party decoders, is
keyed the same way). At that value a field is left out of the train stage's
cache key and of a checkpoint's settings, so what was cached before it existed stays valid;
any other value is part of both (`workers: 2` rounds floats otherwise than one process)."""


def bookkeeping(workers: int) -> frozenset[str]:
    """Return the fields that do not change the weights of a decoder trained by `workers`
    processes: `BOOKKEEPING_FIELDS`, less `checkpoint_every` with several, whose processes
    reseed their dropout at every checkpoint (rank 0's checkpoint cannot hold the others'
    generators), so how often they checkpoint changes the masks they draw."""
    return BOOKKEEPING_FIELDS if workers == 1 else BOOKKEEPING_FIELDS - {"checkpoint_every"}


def weight_settings(options: TrainingOptions) -> dict[str, Any]:
    """Return the `RESULT_FIELDS` values of `options` (without `ADDED_FIELDS` at their first
    value), and `checkpoint_every` with several workers: what a checkpoint records and must
    match to be resumed."""
    names = [*RESULT_FIELDS, *sorted(BOOKKEEPING_FIELDS - bookkeeping(options.workers))]
    return {name: getattr(options, name) for name in names
            if ADDED_FIELDS.get(name, _ABSENT) != getattr(options, name)}


def keyed_options(options: dict[str, Any]) -> dict[str, Any]:
    """Return a decoder's options (as JSON) as the train stage's cache key holds them: without
    the fields of `bookkeeping`, nor `ADDED_FIELDS` at their first value."""
    skipped = bookkeeping(int(options.get("workers", 1)))
    return {name: value for name, value in options.items()
            if name not in skipped and ADDED_FIELDS.get(name, _ABSENT) != value}
