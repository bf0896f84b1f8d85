"""Canaries: sentences carrying seeded synthetic names, numbers, dates and e-mail addresses at
known positions, and how much of each entity an attacker's output recovers.

The entities are made up from a seed (names from syllables, so no training sentence holds
them), placed in a few plain sentence frames; the sentences are normalised like the run's
corpus (a corpus with `digits: zero` turns every digit into 0, so only a number's shape is
left to recover). An entity is recovered exactly when its tokens appear, in order and
contiguous, in the output, and partly when at least half of its tokens appear in it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

ENTITY_TYPES: tuple[str, ...] = ("name", "number", "date", "email")

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "tr",
           "st", "gr", "kl", "sh")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ei", "ou")
_CODAS = ("", "n", "r", "s", "l", "m", "k", "nd", "rt")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_FRAMES = (
    "{name} paid {number} euros on {date} .",
    "please write to {email} before {date} .",
    "the account of {name} holds {number} dollars .",
    "{name} was born on {date} and lives at number {number} .",
    "send the invoice to {email} and copy {name} .",
)


@dataclass(frozen=True)
class Canary:
    """One canary sentence and its entities: (type, text) in the order they appear."""

    sentence: str
    entities: tuple[tuple[str, str], ...]


def _word(rng: np.random.Generator, syllables: int) -> str:
    return "".join(str(rng.choice(_ONSETS)) + str(rng.choice(_VOWELS)) + str(rng.choice(_CODAS))
                   for _ in range(syllables))


def _entity(kind: str, rng: np.random.Generator) -> str:
    if kind == "name":
        return f"{_word(rng, 2).capitalize()} {_word(rng, 2).capitalize()}"
    if kind == "number":
        return str(int(rng.integers(100, 10000)))
    if kind == "date":
        return f"{int(rng.integers(1, 29))} {rng.choice(_MONTHS)} {int(rng.integers(1950, 2024))}"
    return f"{_word(rng, 2)}.{_word(rng, 1)}@{_word(rng, 2)}.org"


def canaries(count: int, seed: int, normalise: Callable[[str], str] = str) -> list[Canary]:
    """`count` canary sentences from `seed`, normalised by `normalise` (the run's)."""
    rng = np.random.default_rng(seed)
    found = []
    for index in range(count):
        frame = _FRAMES[index % len(_FRAMES)]
        values = {kind: _entity(kind, rng) for kind in ENTITY_TYPES}
        order = sorted((frame.index("{" + kind + "}"), kind) for kind in ENTITY_TYPES
                       if "{" + kind + "}" in frame)
        found.append(Canary(sentence=normalise(frame.format(**values)),
                            entities=tuple((kind, normalise(values[kind])) for _, kind in order)))
    return found


def recovered(entity: str, hypothesis: str) -> tuple[bool, bool]:
    """(exact, partial): the entity's tokens contiguous in the hypothesis; at least half of its
    tokens anywhere in it (each token counted as often as it occurs)."""
    tokens, output = entity.split(), hypothesis.split()
    width = len(tokens)
    exact = any(output[i:i + width] == tokens for i in range(len(output) - width + 1))
    remaining = list(output)
    hits = 0
    for token in tokens:
        if token in remaining:
            remaining.remove(token)
            hits += 1
    return exact, 2 * hits >= width


def recovery_counts(found: Sequence[Canary], hypotheses: Sequence[str]
                    ) -> dict[str, tuple[int, int, int]]:
    """Entity type -> (entities, recovered exactly, recovered partly) over the canaries and the
    attacker's output for each."""
    counts = {kind: [0, 0, 0] for kind in ENTITY_TYPES}
    for canary, hypothesis in zip(found, hypotheses, strict=True):
        for kind, text in canary.entities:
            exact, partial = recovered(text, hypothesis)
            counts[kind][0] += 1
            counts[kind][1] += exact
            counts[kind][2] += partial
    return {kind: (n, e, p) for kind, (n, e, p) in counts.items() if n}
