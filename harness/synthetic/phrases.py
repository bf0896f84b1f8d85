"""Small phrase builders that the quickstart constructions are assembled from.

A phrase is a list of lowercase tokens (:data:`Tokens`); only :func:`_render`
capitalises, once a whole sentence is built. Every builder draws from the
``random.Random`` it is given, so the order of its draws is part of the
generator's output and must not change without bumping ``GENERATOR_VERSION``.
"""

from __future__ import annotations

import random

from harness.synthetic.lexicon import (
    _PROPER_NOUNS,
    ADJECTIVES,
    ANIMALS,
    COUNTABLE_FOODS,
    COUNTRIES,
    DIGITS,
    HABITUAL_TIMES,
    MANNER_ADVERBS,
    MASS_FOODS,
    NAMES,
    NUMBER_WORDS,
    OBJECTS,
    PAST_TIMES,
    PLACES,
    PROFESSIONS,
    WEEKDAYS,
    YEARS,
    Verb,
)

# The two tenses the constructions use (values of TransitiveSlots.tense).
PAST = "past"
PRESENT = "present"

Tokens = list[str]


def _person(rng: random.Random) -> Tokens:
    """A singular person: a name or a profession, sometimes with a nationality."""
    roll = rng.random()
    if roll < 0.35:
        return [rng.choice(NAMES)]
    job = rng.choice(PROFESSIONS)
    if roll < 0.6:
        return ["the", job]
    country = rng.choice(COUNTRIES)
    if roll < 0.8:
        return ["the", job, "from", country.name]
    return ["the", country.nationality, job]


def _two_people(rng: random.Random) -> tuple[Tokens, Tokens]:
    """Two different people, so that swapping them changes the meaning."""
    first = _person(rng)
    second = _person(rng)
    while second == first:
        second = _person(rng)
    return first, second


def _animal(rng: random.Random) -> Tokens:
    if rng.random() < 0.3:
        return ["the", rng.choice(ADJECTIVES)[0], rng.choice(ANIMALS)]
    return ["the", rng.choice(ANIMALS)]


def _tense(rng: random.Random) -> str:
    return PAST if rng.random() < 0.65 else PRESENT


def _negation(rng: random.Random, *, allow_never: bool = True) -> str:
    """'' (most of the time), 'not' or 'never'."""
    if rng.random() >= 0.25:
        return ""
    if allow_never and rng.random() < 0.4:
        return "never"
    return "not"


def _count(rng: random.Random) -> str:
    """A count above one, as digits more often than as a word."""
    if rng.random() < 0.6:
        return rng.choice(DIGITS[1:])
    return rng.choice(NUMBER_WORDS)


def _when(rng: random.Random, tense: str) -> Tokens:
    """An optional time expression that agrees with the tense."""
    if rng.random() < 0.6:
        return []
    if tense == PRESENT:
        kind = rng.randrange(3)
        if kind == 0:
            return rng.choice(HABITUAL_TIMES).split()
        if kind == 1:
            return ["every", rng.choice(WEEKDAYS)]
        return ["at", rng.choice(DIGITS[:12])]
    kind = rng.randrange(5)
    if kind == 0:
        return rng.choice(PAST_TIMES).split()
    if kind == 1:
        return ["on", rng.choice(WEEKDAYS)]
    if kind == 2:
        return ["in", rng.choice(YEARS)]
    if kind == 3:
        return ["at", rng.choice(DIGITS[:12])]
    return [_count(rng), rng.choice(("days", "weeks", "years")), "ago"]


def _manner(rng: random.Random) -> Tokens:
    return [rng.choice(MANNER_ADVERBS)] if rng.random() < 0.15 else []


def _verb_phrase(verb: Verb, tense: str, negation: str) -> Tokens:
    """Finite active verb: 'saw', 'did not see', 'never saw', 'sees', ..."""
    if negation == "not":
        return ["did" if tense == PAST else "does", "not", verb.base]
    form = verb.past if tense == PAST else verb.third
    return ["never", form] if negation == "never" else [form]


def _thing(rng: random.Random) -> Tokens:
    """Something that can be handed over: 'the book', 'the bread', '3 keys'."""
    roll = rng.random()
    if roll < 0.2:
        return [_count(rng), rng.choice(OBJECTS)[1]]
    if roll < 0.6:
        return ["the", rng.choice(OBJECTS)[0]]
    if roll < 0.8:
        return ["the", rng.choice(COUNTABLE_FOODS)[0]]
    return ["the", rng.choice(MASS_FOODS)]


def _food(rng: random.Random) -> Tokens:
    """Food in the generic sense: 'bread', 'apples'."""
    if rng.random() < 0.5:
        return [rng.choice(MASS_FOODS)]
    return [rng.choice(COUNTABLE_FOODS)[1]]


def _location(rng: random.Random) -> Tokens:
    roll = rng.random()
    if roll < 0.4:
        return ["in", "the", rng.choice(PLACES)]
    if roll < 0.7:
        return ["at", "the", rng.choice(PLACES)]
    return ["in", rng.choice(COUNTRIES).capital]


def _predicate(rng: random.Random) -> Tokens:
    """A main-clause predicate for the relative-clause templates."""
    kind = rng.randrange(5)
    if kind == 0:
        return ["lives", "in", rng.choice(COUNTRIES).capital]
    if kind == 1:
        return ["works", "at", "the", rng.choice(PLACES)]
    if kind == 2:
        return ["is", rng.choice(ADJECTIVES)[0]]
    if kind == 3:
        return ["is", "from", rng.choice(COUNTRIES).name]
    return ["likes", *_food(rng)]


def _head_noun(rng: random.Random) -> Tokens:
    """'the doctor' / 'the french doctor': a head that can take a relative clause."""
    if rng.random() < 0.3:
        return ["the", rng.choice(COUNTRIES).nationality, rng.choice(PROFESSIONS)]
    return ["the", rng.choice(PROFESSIONS)]


def _place_name(rng: random.Random) -> str:
    """A capital or a country name, as either end of a journey."""
    country = rng.choice(COUNTRIES)
    return country.capital if rng.random() < 0.5 else country.name


def _render(tokens: Tokens) -> str:
    """Capitalise proper nouns and the first word; punctuation stays a token."""
    words = [word.capitalize() if word in _PROPER_NOUNS else word for word in tokens]
    words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words)

