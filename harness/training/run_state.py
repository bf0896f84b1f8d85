"""What a training run knows about itself: where it stands (saved in every checkpoint), the
summary it returns, the fault that stops it and the early-stopping count.

Shared by the one-process trainer and the processes of a data-parallel run
(`harness.training.distributed`), so neither imports the other for them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import HarnessError


class DivergedError(HarnessError):
    """Training produced a non-finite loss or gradient; the last good checkpoint is kept."""

    def __init__(self, message: str, *, step: int, checkpoint: Path | None) -> None:
        self.step, self.checkpoint = step, checkpoint
        super().__init__(message)


@dataclass(frozen=True)
class TrainingSummary:
    """What a training run did: epochs completed, optimiser steps, losses, throughput.

    `val_loss` is the validation loss (nats per token) of the returned weights, which are those
    of the epoch with the lowest validation loss (`best_epoch`) when there is validation.
    """

    epochs: int
    steps: int
    val_loss: float | None
    train_loss: float
    tokens_per_s: float
    best_epoch: int | None = None
    stopped_early: bool = False


@dataclass
class Position:
    """Where training stands; saved in every checkpoint (JSON)."""

    epoch: int = 1              # epoch in progress
    batch: int = 0              # batches of that epoch already trained on
    steps: int = 0              # optimiser steps in total
    history: list[dict[str, Any]] = field(default_factory=list)  # one record per epoch
    epoch_loss: float = 0.0     # summed NLL of the epoch so far (float32 value)
    epoch_tokens: int = 0
    epoch_seconds: float = 0.0
    log_loss: float = 0.0       # the same since the last step record
    log_tokens: int = 0
    log_seconds: float = 0.0
    best_loss: float | None = None   # lowest monitored loss (validation, else training)
    best_epoch: int | None = None
    bad_epochs: int = 0              # epochs since best_loss fell (early stopping)
    plateau_loss: float | None = None
    plateau_epochs: int = 0          # epochs since plateau_loss fell (lr schedule)
    stopped_early: bool = False


def epochs_without_improvement(losses: Sequence[float], min_delta: float) -> int:
    """Return how many of the last epochs' monitored `losses` (one per epoch, in order) came
    after the latest epoch that improved: fell more than `min_delta` below the lowest loss
    before it. The first epoch always improves. Early stopping ends training once this reaches
    `patience` (as Keras' EarlyStopping counts, with the loss of every improving epoch as the
    new reference)."""
    reference, since = math.inf, 0
    for loss in losses:
        if loss < reference - min_delta:
            reference, since = loss, 0
        else:
            since += 1
    return since


def monitored_losses(history: Sequence[dict[str, Any]]) -> list[float]:
    """Return the loss early stopping watches in each epoch record: validation, else
    training."""
    return [h["train_loss"] if h["val_loss"] is None else h["val_loss"] for h in history]
