"""What every check of the kit shares: the failure it raises and the sentences it uses."""

from __future__ import annotations

import numpy as np

DEFAULT_SENTENCES: tuple[str, ...] = (
    "the cat sat on the mat .",
    "a dog barked .",
    "hello",
    "she gave her brother a book about the history of rome yesterday .",
    "two plus two is four",
    "the the the the",
    "did you see the film , or did you read the book ?",
    "birds fly south in the winter .",
    "It was 1999 when Anna moved to Paris.",
)
"""Small English sentences of varied length, case, punctuation and repetition."""


def fail(problem: str, advice: str) -> AssertionError:
    """An AssertionError saying what is wrong and what to do about it."""
    return AssertionError(f"{problem}. To fix: {advice}.")


def name_of(component: object) -> str:
    """The component's class name, for messages."""
    return type(component).__name__


def max_difference(a: np.ndarray, b: np.ndarray) -> float:
    """The largest absolute difference between two arrays, in float64."""
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0.0))
