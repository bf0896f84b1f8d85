"""How the trainer's options divide: which fields change the trained weights (no torch import).

The options themselves are `harness.protocols.TrainingOptions`, the fields every decoder's
`DecoderOptions` carries, so a spec sets them next to a decoder's architecture:
`decoders: [{name: mos-lstm, epochs: 10, patience: 2}]`. The trainer reads them as given.
"""

from __future__ import annotations

from harness.protocols import TrainingOptions

__all__ = ["BOOKKEEPING_FIELDS", "EXTENSIBLE_FIELDS", "RESULT_FIELDS", "TrainingOptions"]

BOOKKEEPING_FIELDS: frozenset[str] = frozenset({"checkpoint_every", "log_every"})
"""How often training checkpoints and logs: never changes the weights, and the trainer resumes
across a change of either, so neither is part of the train stage's cache key."""

EXTENSIBLE_FIELDS: frozenset[str] = frozenset({"epochs", "patience", "min_delta"})
"""Fields that decide only when training ends: a checkpoint written with other values is
resumed (a larger `epochs` or `patience`, or a smaller `min_delta`, lets a stopped run go on)."""

RESULT_FIELDS: tuple[str, ...] = tuple(
    name for name in TrainingOptions.model_fields
    if name not in BOOKKEEPING_FIELDS | EXTENSIBLE_FIELDS)
"""Fields that change the trained weights for a given number of epochs: a checkpoint written
with other values cannot be resumed."""
