"""`check_defence`: what the core relies on from a defence (`harness.protocols.Defence`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.testing.failures import fail, max_difference, name_of


def default_vectors(n: int = 200, dim: int = 16, seed: int = 0) -> np.ndarray:
    """(n, dim) float32 vectors whose dimensions differ in scale and offset, as an encoder's
    do."""
    rng = np.random.default_rng(seed)
    scales = np.geomspace(0.05, 5.0, dim)
    return (rng.standard_normal((n, dim)) * scales + rng.normal(0, 1, dim)).astype(np.float32)


def check_defence(defence: Any, vectors: np.ndarray | None = None) -> bool:
    """Return whether `defence` is randomised, after checking it as the core uses it:

    - it implements `harness.protocols.Defence` and `describe()` says something;
    - after `fit` on the vectors (default: `default_vectors()`), `transform` returns finite
      float32 of shape (n, `output_dim(dim)`), and leaves its input unchanged;
    - it is reproducible: the same generator seed gives the same vectors, also after fitting
      again;
    - a defence whose output does not follow the generator (deterministic) maps each row on
      its own: two blocks give the rows of one call; a randomised one gives other vectors for
      another seed, and noises each row on its own (one row repeated in a block comes out as
      different rows; the core hands it one row at a time, each with its record's generator:
      `harness.analyses.privacy.defend.record_rng`);
    - a `budget(dim)` (`harness.protocols.BudgetedDefence`), where it has one, gives finite
      numbers by name after `fit`.
    """
    from harness.protocols import Defence

    name = name_of(defence)
    if not isinstance(defence, Defence):
        raise fail(f"{name} does not implement harness.protocols.Defence",
                   "give it fit(vectors), transform(vectors, rng), output_dim(dim) and describe()")
    described = defence.describe()
    if not isinstance(described, str) or not described.strip():
        raise fail(f"{name}.describe() returned {described!r}",
                   "say in a few words what this level does")
    x = default_vectors() if vectors is None else np.asarray(vectors, dtype=np.float32)
    n, dim = x.shape
    original = x.copy()
    defence.fit(x)
    width = defence.output_dim(dim)
    first = _transformed(defence, x, 7, width)
    if not np.array_equal(x, original):
        raise fail(f"{name}.fit or transform changed its input", "copy before changing values")
    defence.fit(x)
    again = _transformed(defence, x, 7, width)
    if not np.array_equal(first, again):
        raise fail(f"{name} is not reproducible: the same seed gave other vectors "
                   f"(max difference {max_difference(first, again):.3g})",
                   "draw randomness only from the rng transform is handed, and fit "
                   "deterministically")
    _check_budget(defence, dim)
    other = _transformed(defence, x, 8, width)
    randomised = not np.array_equal(first, other)
    if randomised:
        _check_rows_noised_apart(defence, x, width)
    else:
        half = n // 2
        blocks = np.concatenate([_transformed(defence, x[:half], 9, width),
                                 _transformed(defence, x[half:], 10, width)])
        if not np.array_equal(blocks, first):
            raise fail(f"{name} maps a row differently when it comes in another block",
                       "let row i of the output depend on row i of the input only (and on "
                       "what fit learned)")
    return randomised


def _check_rows_noised_apart(defence: Any, x: np.ndarray, width: int) -> None:
    """A randomised defence draws each row's noise on its own: one row repeated in a block
    comes out as different rows, and each row alone takes the shape of one row."""
    name = name_of(defence)
    repeated = _transformed(defence, np.repeat(x[:1], 8, axis=0), 11, width)
    if len(np.unique(repeated, axis=0)) < len(repeated):
        raise fail(f"{name} gives one row repeated in a block the same noise",
                   "draw noise for every row (rng.standard_normal((n, dim)), not (dim,))")
    _transformed(defence, x[:1], 12, width)


def _check_budget(defence: Any, dim: int) -> None:
    from harness.protocols import defence_budget

    name = name_of(defence)
    budget = defence_budget(defence, dim)
    if budget is not None and (not budget or not all(np.isfinite(list(budget.values())))):
        raise fail(f"{name}.budget({dim}) returned {budget!r}",
                   "return the level's privacy parameters by name, each a finite number")


def _transformed(defence: Any, x: np.ndarray, seed: int, width: int) -> np.ndarray:
    name = name_of(defence)
    out = defence.transform(x, np.random.default_rng(seed))
    out = np.asarray(out)
    if out.shape != (x.shape[0], width):
        raise fail(f"{name}.transform returned shape {out.shape}, expected "
                   f"({x.shape[0]}, {width}) (output_dim({x.shape[1]}) = {width})",
                   "return one row per input row, output_dim(dim) wide")
    if out.dtype != np.float32:
        raise fail(f"{name}.transform returned dtype {out.dtype}", "return float32")
    if not np.isfinite(out).all():
        raise fail(f"{name}.transform returned non-finite values", "keep every value finite")
    return out
