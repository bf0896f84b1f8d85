"""The defence contract: a transform of an encoder's vectors after encoding, which a store of
embeddings would apply to keep its text from being read back (Kerscher & Eger's decoder is then
the attack). Imports nothing from the rest of the harness; numpy appears in annotations only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np


@runtime_checkable
class Defence(Protocol):
    """What a `register_defences` factory returns, built with one setting of its options (one
    level: its options class names the option the levels vary in `LEVEL`).

    The core calls `fit` once, on the training split's vectors (a defence that needs nothing
    from them ignores them), then `transform` on rows, handing it a `numpy.random.Generator`.
    A randomised defence draws its noise only from it, and is handed one row at a time with
    that record's generator, seeded from the defence's secret seed, the defence at this level,
    the encoder and the record (a corpus row's split and position, another stored sentence's
    text; an attacker's query fresh noise): a record's defended vector is the same in every
    run, whatever the process and whatever shares its call, and two levels draw independent
    noise. A deterministic defence (its output does not follow the generator) is handed
    blocks of rows. `output_dim(dim)` is the width
    of what `transform` returns for `dim`-wide input. `describe()` says in a few words what this
    level does (for the report: "Laplace noise, epsilon 1 per vector"). Optional:
    `budget(dim)` (`BudgetedDefence`)."""

    def fit(self, vectors: np.ndarray) -> None:
        """Learn what the transform needs from the training vectors (n, dim), float32."""

    def transform(self, vectors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The defended vectors, (n, output_dim(dim)) finite float32, row i from row i."""

    def output_dim(self, dim: int) -> int:
        """The width of the defended vectors for `dim`-wide input."""

    def describe(self) -> str:
        """This level in words."""


@runtime_checkable
class BudgetedDefence(Protocol):
    """Optional for a defence with a privacy guarantee: `budget(dim)`, the guarantee at this
    level for `dim`-wide input as name -> number (`{"epsilon": 1.0, "epsilon_per_dimension":
    0.0156}`), recorded with its privacy point (results.json `budget`); called after `fit`."""

    def budget(self, dim: int) -> dict[str, float]:
        """The privacy parameters of this level, e.g. epsilon and delta, per vector and per
        dimension."""


def defence_budget(defence: object, dim: int) -> dict[str, float] | None:
    """The defence's `budget(dim)` (`BudgetedDefence`) as name -> float, or None when it has
    none."""
    if not isinstance(defence, BudgetedDefence):
        return None
    return {str(name): float(value) for name, value in defence.budget(dim).items()}
