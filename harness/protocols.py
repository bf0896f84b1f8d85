"""The contracts between the core and its plugins: component protocols and their result types.

Protocols are `runtime_checkable` so any object with the right methods can be evaluated without
being registered (the conformance kit in `harness.testing` checks the details).
This module imports nothing heavy: numpy and torch appear only in annotations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from harness.training.options import TrainingOptions

if TYPE_CHECKING:
    import numpy as np
    import torch

    from harness.vocab import SubwordVocab

KINDS: tuple[str, ...] = ("encoder", "decoder", "metric", "task")
"""Component kinds, in listing order. A new kind needs a hookspec and an entry here."""


class Options(BaseModel):
    """Base class of a component's options: unknown keys are errors, values are validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class DecoderOptions(TrainingOptions, Options):
    """Options every decoder family has: the core's trainer reads the `TrainingOptions` fields
    (epochs, batch size, optimiser, schedule, validation, checkpoints)."""


@dataclass(frozen=True)
class BuildContext:
    """What the core hands a component factory besides the component's own options.

    `vocab` is the run's subword vocabulary (BPE model + subword vectors); `workdir` is a private
    cache directory for assets the component makes (e.g. trained weights); `input_dim` is the
    sentence-vector dimension a decoder is conditioned on.
    """

    device: str = "cpu"
    seed: int = 1
    vocab: SubwordVocab | None = None
    workdir: Path | None = None
    input_dim: int | None = None


@runtime_checkable
class Encoder(Protocol):
    """Maps sentences to fixed-size vectors."""

    @property
    def dim(self) -> int:
        """Dimension of the vectors `encode` returns (known after `fit` for trainable encoders)."""

    def fingerprint(self) -> str:
        """Identity of this encoder for the cache: options, weights identity and plugin version."""

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return a float array of shape (len(sentences), dim)."""


@runtime_checkable
class TrainableEncoder(Encoder, Protocol):
    """An encoder that learns from the run's training corpus before encoding."""

    # Optional: `fit_version`, a string to change whenever the same options and corpus would
    # fit a different state (a changed training procedure), so the cached fit is not reused.

    def fit(self, sentences: Sequence[str]) -> None:
        """Train on the corpus' training sentences."""

    def save(self, directory: Path) -> None:
        """Write the fitted state into `directory` (no pickles)."""

    def load(self, directory: Path) -> None:
        """Restore the state written by `save`."""


@runtime_checkable
class ConditionalLanguageModel(Protocol):
    """A decoder: a language model over subword ids conditioned on a sentence vector.

    Implemented as a `torch.nn.Module`. Token id conventions come from the run's `SubwordVocab`
    (`pad_id`, `bos_id`, `eos_id`). The core's trainer calls `forward` with teacher forcing; the
    core's greedy and beam search call `initial_state`, `step` and `reorder_state`.
    """

    def forward(self, inputs: torch.Tensor, vectors: torch.Tensor) -> torch.Tensor:
        """Log-probabilities (B, T, V) of the next token for inputs (B, T) and vectors (B, D)."""

    def initial_state(self, vectors: torch.Tensor) -> Any:
        """Recurrent state before the first step, for vectors (B, D)."""

    def step(self, tokens: torch.Tensor, vectors: torch.Tensor, state: Any) -> tuple[torch.Tensor, Any]:
        """Advance one token: log-probabilities (B, V) of the next token and the new state."""

    def reorder_state(self, state: Any, index: torch.Tensor) -> Any:
        """Select rows `index` of the state (beam search keeps the surviving hypotheses)."""

    # Optional: a decoder whose `standardise` attribute is true and that defines
    # `set_vector_statistics(mean, var)` gets the per-dimension mean and variance (D,) of the
    # training vectors from the trainer before the first step.


@runtime_checkable
class Metric(Protocol):
    """Compares generated sentences with their inputs.

    A metric reduces each (reference, hypothesis) pair to a row of additive sufficient statistics
    and computes the corpus score from their column sums. That one shape serves means (Id), ratios
    of counts (Id/PERM) and corpus BLEU alike, and lets the core bootstrap any metric's interval by
    resampling rows.
    """

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """Return an (n, k) float array of per-pair statistics.

        A metric that needs more than the two texts names the sample fields it needs in a
        `requires` attribute (e.g. `("nll", "tokens")`); the core then passes each field as a
        keyword argument holding one value per pair.
        """

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Score(s) from summed statistics (..., k) over `count` pairs: on the paper's 0-100
        scale where that applies, NaN where the score is undefined for those statistics.

        A metric where lower is better (perplexity) sets `higher_is_better = False`; ranks and
        reports read it.
        """


@dataclass(frozen=True)
class ComponentInfo:
    """A registered component: cheap metadata plus a factory that builds it on demand.

    `factory(options, context)` is called only when a run needs the component, so registering
    imports no model code. `availability()` returns None when the component can run, otherwise
    what the user must do to make it run.
    """

    kind: str
    name: str
    factory: Callable[[Any, BuildContext], Any]
    description: str = ""
    options: type[Options] = Options
    availability: Callable[[], str | None] | None = None
    trainable: bool = False
    plugin: str = ""
    distribution: str = ""
    version: str = ""

    def status(self, options: Options | None = None) -> str:
        """"ok", or "unavailable: <what to do>".

        An `availability` callable with a parameter named `options` is given the component's
        validated options (e.g. a weights path set in the spec); `harness list` passes None.
        """
        if self.availability is None:
            return "ok"
        try:
            if _takes_options(self.availability):
                reason = self.availability(options=options)
            else:
                reason = self.availability()
        except Exception as exc:  # a broken availability check must not break `harness list`
            reason = f"availability check failed: {exc}"
        return "ok" if reason is None else f"unavailable: {reason}"


def _takes_options(function: Callable[..., Any]) -> bool:
    import inspect

    try:
        return "options" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class PluginFailure:
    """A plugin that could not be loaded or registered, kept for `harness list`."""

    name: str
    distribution: str
    version: str
    error: str
