"""Spec sections that name no component: the learning curve and the reference bundle a run
joins (`harness.spec.schema` assembles them into `Spec`), and `Strict`, what every section is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import field_validator, model_validator

from harness.protocols import Settings


class Strict(Settings):
    """Spec sections reject unknown keys, take no boolean for a number, and are not changed
    once validated."""


class CurveSection(Strict):
    """How much training data the decoders need: each decoder is also trained on the first N
    training sentences for every N of `train_sizes` (increasing, each below the training
    split's size), generated and scored on the same test set; the full split is the curve's
    last point. `encoders` names the encoders the curve is drawn for (default: every one)."""

    train_sizes: list[int] = []
    encoders: list[str] | None = None

    def draws_for(self, encoder: str) -> bool:
        """True when the curve is drawn for `encoder`."""
        return self.encoders is None or encoder in self.encoders

    @field_validator("train_sizes")
    @classmethod
    def _increasing(cls, value: list[int]) -> list[int]:
        if value and (value[0] < 1 or any(b <= a for a, b in zip(value, value[1:]))):
            raise ValueError("give increasing numbers of training sentences, e.g. [1000, 5000], "
                             f"not {value}")
        return value


class ReferenceSection(Strict):
    """A reference bundle the run joins (`harness bundle` makes one; docs/spec.md, "Joining a
    reference"): `bundle`, its file or the name of one shipped with the harness
    (`quickstart`); the run trains only its encoders the bundle lacks and merges the bundle's
    rows into every analysis. `rerun` names encoders of the spec to train although the bundle
    has them, to compare each with its bundled self (shown as NAME@BUNDLE)."""

    bundle: str
    rerun: list[str] = []

    @model_validator(mode="before")
    @classmethod
    def _bare_file(cls, value: Any) -> Any:
        return {"bundle": value} if isinstance(value, (str, Path)) else value
