"""Options of the core trainer, shared by every decoder family (no torch import).

`harness.protocols.DecoderOptions` carries these fields, so a spec sets them next to a decoder's
architecture: `decoders: [{name: mos-lstm, epochs: 10, patience: 2}]`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class TrainingOptions(BaseModel):
    """How the core trains a decoder: optimiser, schedule, validation, checkpoints, logging."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    epochs: int = Field(5, ge=1, description="training epochs (at most, with early stopping)")
    batch_size: int = Field(64, ge=1, description="sentences per training batch")
    lr: float = Field(2e-3, gt=0.0, description="learning rate")
    clip: float = Field(0.25, ge=0.0, description="gradient-norm clipping threshold (0 = off)")
    optimizer: Literal["adam", "sgd"] = Field("adam", description="optimiser")
    weight_decay: float = Field(0.0, ge=0.0, description="L2 weight decay of the optimiser")
    schedule: Literal["constant", "plateau"] = Field(
        "constant", description="learning rate schedule: constant, or multiplied by lr_factor "
                                "when the validation loss stops falling")
    lr_factor: float = Field(0.5, gt=0.0, lt=1.0,
                             description="factor applied to the learning rate on a plateau")
    lr_patience: int = Field(0, ge=0, description="epochs without improvement the plateau "
                                                  "schedule tolerates before lowering the rate")
    val_fraction: float = Field(
        0.02, ge=0.0, lt=0.5, description="share of the training sentences held out (seeded) "
                                          "for the validation loss; 0 = no validation")
    patience: int = Field(0, ge=0, description="stop after this many epochs without a lower "
                                               "validation loss (0 = never stop early)")
    checkpoint_every: int = Field(1000, ge=0, description="also checkpoint every N optimiser "
                                                          "steps within an epoch (0 = off)")
    log_every: int = Field(100, ge=0, description="log the training loss every N steps "
                                                  "(0 = per epoch only)")


RESULT_FIELDS: tuple[str, ...] = (
    "batch_size", "lr", "clip", "optimizer", "weight_decay", "schedule", "lr_factor",
    "lr_patience", "val_fraction")
"""Fields that change the trained weights for a given number of epochs: a checkpoint written
with other values cannot be resumed. `epochs` and `patience` may grow between runs."""


def training_options(options: Any = None, **overrides: Any) -> TrainingOptions:
    """Return the training options read from any object with such fields, then `overrides`.

    `options` is typically a decoder's `DecoderOptions`; fields it lacks keep their defaults.
    """
    values = {}
    if options is not None:
        values = {name: getattr(options, name) for name in TrainingOptions.model_fields
                  if hasattr(options, name)}
    values.update({k: v for k, v in overrides.items() if v is not None})
    return TrainingOptions(**values)
