"""The component contracts: encoders, decoders, the options base classes and what a factory
receives (`BuildContext`, the run's `SubwordVocabulary`).

Optional parts are small protocols or documented attributes with defaults; the core reads them
only through the functions below them (`fit_version`, `is_positional`, ...), so each has one
declaration and one reader. Imports nothing from the rest of the harness; numpy and torch
appear in annotations only.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

if TYPE_CHECKING:
    import numpy as np
    import torch

# ------------------------------------------------------------------------------------ options


def _numeric(annotation: object) -> bool:
    """True for int, float and their optional or union forms that do not also admit bool."""
    if annotation in (int, float):
        return True
    args = typing.get_args(annotation)
    return (typing.get_origin(annotation) in (typing.Union, types.UnionType)
            and bool not in args and any(_numeric(arg) for arg in args))


class Settings(BaseModel):
    """Validated settings, frozen once made: unknown keys are errors, and a number is never
    given as `true`/`false` (pydantic otherwise reads `beam: true` as 1)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _numbers_are_not_booleans(cls, value: object, info: ValidationInfo) -> object:
        field = cls.model_fields.get(info.field_name or "")
        if isinstance(value, bool) and field is not None and _numeric(field.annotation):
            raise ValueError(f"expected a number, got {str(value).lower()}")
        return value


class Options(Settings):
    """Base class of a component's options: unknown keys are errors, values are validated.

    Options that depend on the size of the test split (`retrieval`'s k candidates among the test
    sentences) say so in `test_size_problem`, which `harness validate` calls with the size the
    spec states (a generated split's `sentences`, a file's `limit`) before any work."""

    def test_size_problem(self, sentences: int) -> tuple[str, str] | None:
        """(option, what is wrong) when these options cannot work on `sentences` test
        sentences; None when they can (the default)."""
        return None


class TrainingOptions(Settings):
    """How the core trains a decoder: optimiser, schedule, validation, checkpoints, logging."""

    epochs: int = Field(5, ge=1, description="training epochs (at most, with early stopping)")
    batch_size: int = Field(64, ge=1, description="sentences per training batch")
    lr: float = Field(2e-3, gt=0.0, description="learning rate")
    clip: float = Field(0.25, ge=0.0, description="gradient-norm clipping threshold (0 = off)")
    optimizer: Literal["adam", "sgd"] = Field("adam", description="optimiser")
    weight_decay: float = Field(0.0, ge=0.0, description="L2 weight decay of the optimiser")
    schedule: Literal["constant", "plateau", "linear"] = Field(
        "constant", description="learning rate schedule: constant; plateau (multiplied by "
                                "lr_factor when the validation loss stops falling); linear "
                                "(decayed linearly to 0 over all epochs' steps)")
    lr_factor: float = Field(0.5, gt=0.0, lt=1.0,
                             description="factor applied to the learning rate on a plateau")
    lr_patience: int = Field(0, ge=0, description="epochs without improvement the plateau "
                                                  "schedule tolerates before lowering the rate")
    val_fraction: float = Field(
        0.02, ge=0.0, lt=0.5, description="share of the training sentences held out (seeded) "
                                          "for the validation loss; 0 = no validation")
    patience: int = Field(0, ge=0, description="stop after this many epochs without a lower "
                                               "validation loss (0 = never stop early)")
    min_delta: float = Field(0.0, ge=0.0, description="an epoch improves (early stopping) only "
                             "when its validation loss falls more than this below the lowest")
    checkpoint_every: int = Field(1000, ge=0, description="also checkpoint every N optimiser "
                                                          "steps within an epoch (0 = off)")
    log_every: int = Field(100, ge=0, description="log the training loss every N steps "
                                                  "(0 = per epoch only)")
    workers: int = Field(1, ge=1, description="processes that train the decoder together "
                                              "(torch.distributed, one GPU each on CUDA), each "
                                              "on its share of every batch")


class DecoderOptions(TrainingOptions, Options):
    """Options every decoder family has: the core's trainer reads the `TrainingOptions` fields
    (epochs, batch size, optimiser, schedule, validation, checkpoints) from them as they are."""


# ------------------------------------------------------------------------- what a plugin gets


@runtime_checkable
class SubwordVocabulary(Protocol):
    """The run's subword vocabulary, as a factory receives it in `BuildContext.vocab`.

    A sentencepiece BPE model with one vector per id (`harness.text.subwords.SubwordVocab`). Ids follow
    the model; `pad_id`, `bos_id` and `eos_id` always exist (ids after the model's pieces, with
    zero vectors, when the model lacks them)."""

    pad_id: int
    unk_id: int
    bos_id: int
    eos_id: int
    vectors: np.ndarray
    """(len(vocab), dim) float32: the subword vectors, row i for id i."""

    def __len__(self) -> int:
        """Number of ids, specials included."""

    @property
    def dim(self) -> int:
        """Dimension of the subword vectors."""

    def encode(self, sentences: Sequence[str]) -> list[list[int]]:
        """The piece ids of each sentence (no bos/eos)."""

    def pieces(self, sentence: str) -> list[str]:
        """The pieces of one sentence, e.g. ['▁the', '▁teach', 'er']."""

    def decode(self, ids: Iterable[int]) -> str:
        """The text of piece ids, special ids left out."""


@dataclass(frozen=True)
class BuildContext:
    """What the core hands a component factory besides the component's own options.

    `vocab` is the run's subword vocabulary; `workdir` is a private cache directory for assets
    the component makes (e.g. trained weights); `input_dim` is the sentence-vector dimension a
    decoder is conditioned on."""

    device: str = "cpu"
    seed: int = 1
    vocab: SubwordVocabulary | None = None
    workdir: Path | None = None
    input_dim: int | None = None


# ------------------------------------------------------------------------------------ encoders


@runtime_checkable
class Encoder(Protocol):
    """Maps sentences to fixed-size vectors. Optional parts: `declares()`, `PositionalEncoder`."""

    @property
    def dim(self) -> int:
        """Dimension of the vectors `encode` returns (known after `fit` for trainable encoders)."""

    def fingerprint(self) -> str:
        """Identity of this encoder for the cache: options, weights identity and plugin version."""

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return a float array of shape (len(sentences), dim)."""


@runtime_checkable
class TrainableEncoder(Encoder, Protocol):
    """An encoder that learns from the run's fit text before encoding (registered with
    `trainable=True`).

    The fit text is the corpus' training split, or the spec's `corpus.fit` source, in which
    blank lines separate documents (for objectives over adjacent sentences).

    Optional parts: a `fit_version` string (`VersionedFit`), and a resumable `fit` that takes a
    `workdir` keyword (`ResumableFit`)."""

    def fit(self, sentences: Sequence[str]) -> None:
        """Train on the fit text."""

    def save(self, directory: Path) -> None:
        """Write the fitted state into `directory` (no pickles)."""

    def load(self, directory: Path) -> None:
        """Restore the state written by `save`."""


@runtime_checkable
class VersionedFit(Protocol):
    """Optional for a `TrainableEncoder`: `fit_version`, changed whenever the same options and
    text would fit a different state (a changed training procedure), so the fit stage's cached
    state is not reused. Default: ""."""

    fit_version: str


class ResumableFit(Protocol):
    """Optional for a `TrainableEncoder`: a `fit` that takes a `workdir` keyword.

    The core passes a directory that survives a killed run (the artifact's partial directory):
    checkpoint there and continue from it when `fit` is called again. The directory is removed
    once the fit is saved. Told apart from a plain `fit` by its signature (`fits_resumably`)."""

    def fit(self, sentences: Sequence[str], *, workdir: Path) -> None:
        """Train on the fit text, resuming from `workdir` when it holds a checkpoint."""


def fit_version(encoder: Encoder) -> str:
    """The encoder's `fit_version` (`VersionedFit`), or "" when it declares none."""
    return str(encoder.fit_version) if isinstance(encoder, VersionedFit) else ""


def fits_resumably(encoder: TrainableEncoder) -> bool:
    """True when the encoder's `fit` takes a `workdir` keyword (`ResumableFit`)."""
    try:
        return "workdir" in inspect.signature(encoder.fit).parameters
    except (TypeError, ValueError):
        return False


@runtime_checkable
class DeclaringEncoder(Protocol):
    """Optional for an encoder: `declares()`, the model it says it is, answered without loading
    it (docs/plugins.md), e.g. {"model": NAME, "dim": 1024}. A downstream table's row counts only
    for the model that earned it."""

    def declares(self) -> Mapping[str, object]:
        """The model's identity: its name under "model", and whatever else identifies it."""


def declared_model(encoder: object) -> dict[str, object]:
    """The encoder's optional `declares()` (`DeclaringEncoder`); {} when it declares nothing."""
    return dict(encoder.declares()) if isinstance(encoder, DeclaringEncoder) else {}


@runtime_checkable
class PositionalEncoder(Encoder, Protocol):
    """Optional for an encoder whose vectors follow a sentence's row in the corpus, not its text
    (`random-gaussian`): with `positional` true, the encode stage passes `split` ("train"/"test")
    and `start`, the row of sentences[0] in that split. Every other call (tasks, metrics, probes)
    is a plain `encode(sentences, batch_size=...)`: answer it from a stream disjoint from the splits'."""

    positional: bool

    def encode(self, sentences: Sequence[str], batch_size: int = 256, *,
               split: str | None = None, start: int = 0) -> np.ndarray:
        """(len(sentences), dim) floats; rows start, start + 1, ... of `split` when given."""


def is_positional(encoder: Encoder) -> bool:
    """True when the encode stage passes the encoder `split` and `start` (`PositionalEncoder`)."""
    return isinstance(encoder, PositionalEncoder) and bool(encoder.positional)


# ------------------------------------------------------------------------------------ decoders


State = TypeVar("State")
"""A decoder's recurrent state between search steps: whatever the decoder keeps (an LSTM's
(h, c)); the search only hands it back and reorders it."""


@runtime_checkable
class ConditionalLanguageModel(Protocol[State]):
    """A decoder: a language model over subword ids conditioned on a sentence vector.

    Implemented as a `torch.nn.Module`. Token id conventions come from the run's vocabulary
    (`pad_id`, `bos_id`, `eos_id`). The core's trainer calls `forward` with teacher forcing; the
    core's greedy and beam search call `initial_state`, `step` and `reorder_state`. Optional
    part: `StandardisedInputs`."""

    def forward(self, inputs: torch.Tensor, vectors: torch.Tensor) -> torch.Tensor:
        """Log-probabilities (B, T, V) of the next token for inputs (B, T) and vectors (B, D)."""

    def initial_state(self, vectors: torch.Tensor) -> State:
        """Recurrent state before the first step, for vectors (B, D)."""

    def step(self, tokens: torch.Tensor, vectors: torch.Tensor, state: State
             ) -> tuple[torch.Tensor, State]:
        """Advance one token: log-probabilities (B, V) of the next token and the new state."""

    def reorder_state(self, state: State, index: torch.Tensor) -> State:
        """Select rows `index` of the state (beam search keeps the surviving hypotheses)."""


@runtime_checkable
class StandardisedInputs(Protocol):
    """Optional for a decoder: one that standardises its sentence vectors per dimension.

    When `standardise` is true, the trainer calls `set_vector_statistics(mean, var)` with the
    per-dimension mean and variance (D,) of the training vectors before the first step."""

    standardise: bool

    def set_vector_statistics(self, mean: torch.Tensor, var: torch.Tensor) -> None:
        """Keep the training vectors' statistics (saved with the weights)."""


def wants_vector_statistics(model: object) -> bool:
    """True when the decoder standardises its inputs and takes their statistics."""
    return isinstance(model, StandardisedInputs) and bool(model.standardise)


