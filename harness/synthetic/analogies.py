"""Sentence analogies of the quickstart language whose answers are known by construction.

Each relation is a transformation T of a sentence that the quickstart grammar can express:

- `tense`: present to past ("Anna sees Marco ." -> "Anna saw Marco .");
- `negation`: affirmative to negated ("Anna saw Marco ." -> "Anna did not see Marco .");
- `swap`: subject and object swapped ("Anna saw Marco ." -> "Marco saw Anna .");
- `passive`: active to passive ("Anna saw Marco ." -> "Marco was seen by Anna .");
- `capital`: a country replaced by its capital ("Anna flew from France to Rome ." ->
  "Anna flew from Paris to Rome ."), an analogy such as paris - france + japan = tokyo inside a
  sentence.

An item draws two unrelated sentences x and y and applies the same T to both: the analogy
T(x) : x :: T(y) : y holds by construction, so T(y) is the expected answer of the query
(a, b, c) = (T(x), x, y) in the paper's form (a : b :: z : c), and of (x, T(x), y) in the
classic form (a : b :: c : d). Every draw comes from `random.Random(seed)`; the items are a
function of (count, seed) and of `ANALOGY_VERSION`, which must be bumped whenever they change.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import NamedTuple

from harness.synthetic.lexicon import COUNTRIES, TRANSITIVE_VERBS, TRAVEL_VERBS
from harness.synthetic.phrases import (
    PAST,
    PRESENT,
    Tokens,
    _person,
    _place_name,
    _render,
    _tense,
    _two_people,
    _verb_phrase,
)

ANALOGY_VERSION = "1"
RELATIONS = ("tense", "negation", "swap", "passive", "capital")
DEFAULT_ITEMS = 300
DEFAULT_SEED = 0
_MAX_TOKENS = 14


class Quad(NamedTuple):
    """Two sentences and their transforms under one relation: T(x) : x :: T(y) : y."""

    relation: str
    x: str
    tx: str
    y: str
    ty: str


def _active(agent: Tokens, verb_index: int, patient: Tokens, tense: str,
            negation: str = "") -> str:
    verb = TRANSITIVE_VERBS[verb_index]
    return _render([*agent, *_verb_phrase(verb, tense, negation), *patient, "."])


def _passive(agent: Tokens, verb_index: int, patient: Tokens, tense: str) -> str:
    verb = TRANSITIVE_VERBS[verb_index]
    auxiliary = "was" if tense == PAST else "is"
    return _render([*patient, auxiliary, verb.participle, "by", *agent, "."])


def _transitive_pair(rng: random.Random, relation: str) -> tuple[str, str]:
    """(x, T(x)) of a transitive sentence under `relation`."""
    agent, patient = _two_people(rng)
    verb = rng.randrange(len(TRANSITIVE_VERBS))
    if relation == "tense":
        return (_active(agent, verb, patient, PRESENT), _active(agent, verb, patient, PAST))
    tense = _tense(rng)
    x = _active(agent, verb, patient, tense)
    if relation == "negation":
        return x, _active(agent, verb, patient, tense, "not")
    if relation == "swap":
        return x, _active(patient, verb, agent, tense)
    return x, _passive(agent, verb, patient, tense)


def _capital_pair(rng: random.Random) -> tuple[str, str]:
    """(x, T(x)): a journey from a country, and the same journey from its capital."""
    person = _person(rng)
    verb = rng.choice(TRAVEL_VERBS)
    tense = _tense(rng)
    origin = rng.choice(COUNTRIES)
    destination = _place_name(rng)
    while destination in (origin.name, origin.capital):
        destination = _place_name(rng)
    head = [*person, *_verb_phrase(verb, tense, "")]
    return (_render([*head, "from", origin.name, "to", destination, "."]),
            _render([*head, "from", origin.capital, "to", destination, "."]))


_PAIRS: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    "tense": lambda rng: _transitive_pair(rng, "tense"),
    "negation": lambda rng: _transitive_pair(rng, "negation"),
    "swap": lambda rng: _transitive_pair(rng, "swap"),
    "passive": lambda rng: _transitive_pair(rng, "passive"),
    "capital": _capital_pair,
}


def _short(sentence: str) -> bool:
    return len(sentence.split()) <= _MAX_TOKENS


def analogy_quads(count: int = DEFAULT_ITEMS, seed: int = DEFAULT_SEED) -> list[Quad]:
    """`count` analogies, the relations in turn (tense, negation, swap, passive, capital, ...);
    in each, x and y are different sentences with different transforms, and no item repeats."""
    if count < 0:
        raise ValueError(f"count must be non-negative, got {count}")
    rng = random.Random(seed)
    quads: list[Quad] = []
    seen: set[tuple[str, str]] = set()
    while len(quads) < count:
        relation = RELATIONS[len(quads) % len(RELATIONS)]
        draw = _PAIRS[relation]
        for _ in range(1000):
            x, tx = draw(rng)
            y, ty = draw(rng)
            sentences = {x, tx, y, ty}
            if len(sentences) == 4 and all(map(_short, sentences)) and (x, y) not in seen:
                break
        else:  # pragma: no cover - the space is far larger than any count asked for
            raise RuntimeError(f"cannot draw another {relation!r} analogy")
        seen.add((x, y))
        quads.append(Quad(relation, x, tx, y, ty))
    return quads
