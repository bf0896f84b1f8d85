"""The sentence constructions of the quickstart corpus.

Each construction draws its phrases from an RNG and returns lowercase tokens
ending in '.' or '?'. Most put meaning in word order (who did what to whom,
from where to where, which one is taller), so that a bag of words is not
enough to reconstruct the sentence.
"""

from __future__ import annotations

import random
from typing import NamedTuple

from harness.synthetic.lexicon import (
    _COUNTABLE_FOOD_VERBS,
    ADJECTIVES,
    COUNTABLE_FOODS,
    COUNTING_VERBS,
    COUNTRIES,
    EAT,
    FOOD_VERBS,
    FREQUENCY_ADVERBS,
    MENTAL_VERBS,
    OBJECTS,
    PLACES,
    TRANSFER_VERBS,
    TRANSITIVE_VERBS,
    TRAVEL_MODES,
    TRAVEL_VERBS,
    Verb,
)
from harness.synthetic.phrases import (
    PAST,
    PRESENT,
    Tokens,
    _animal,
    _count,
    _food,
    _head_noun,
    _location,
    _manner,
    _negation,
    _person,
    _place_name,
    _predicate,
    _render,
    _tense,
    _thing,
    _two_people,
    _verb_phrase,
    _when,
)

# --- The transitive template, public so tests can swap its roles -------------


class TransitiveSlots(NamedTuple):
    """The filled slots of one transitive sentence (phrases are lowercase text)."""

    agent: str
    verb: Verb
    patient: str
    tense: str = PAST
    negation: str = ""
    tail: str = ""  # adverb and/or time expression after the patient


def sample_transitive(rng: random.Random) -> TransitiveSlots:
    """Draw the slots of a transitive sentence, as the quickstart generator does."""
    agent, patient = _two_people(rng)
    tense = _tense(rng)
    return TransitiveSlots(
        agent=" ".join(agent),
        verb=rng.choice(TRANSITIVE_VERBS),
        patient=" ".join(patient),
        tense=tense,
        negation=_negation(rng),
        tail=" ".join(_manner(rng) + _when(rng, tense)),
    )


def _transitive_tokens(slots: TransitiveSlots) -> Tokens:
    return [
        *slots.agent.split(),
        *_verb_phrase(slots.verb, slots.tense, slots.negation),
        *slots.patient.split(),
        *slots.tail.split(),
        ".",
    ]


def transitive_sentence(slots: TransitiveSlots) -> str:
    """Render 'The teacher from France saw the doctor .' from its slots."""
    return _render(_transitive_tokens(slots))


# --- The other constructions ----------------------------------------------
# The transitive construction itself is defined in the package's __init__,
# beside the table of constructions (see the comment there for why).


def _passive(rng: random.Random) -> Tokens:
    """'The doctor was seen by the teacher .' -- the patient comes first."""
    agent, patient = _two_people(rng)
    tense = _tense(rng)
    negation = _negation(rng)
    verb = rng.choice(TRANSITIVE_VERBS)
    auxiliary = "was" if tense == PAST else "is"
    middle = [auxiliary, negation, verb.participle] if negation else [auxiliary, verb.participle]
    return [*patient, *middle, "by", *agent, *_when(rng, tense), "."]


def _ditransitive(rng: random.Random) -> Tokens:
    """'Anna gave the bread to Marco .'"""
    giver, receiver = _two_people(rng)
    tense = _tense(rng)
    verb = rng.choice(TRANSFER_VERBS)
    return [
        *giver,
        *_verb_phrase(verb, tense, _negation(rng)),
        *_thing(rng),
        "to",
        *receiver,
        *_when(rng, tense),
        ".",
    ]


def _head_and_other(rng: random.Random) -> tuple[Tokens, Tokens, Verb]:
    """The head noun of a relative clause, another person, and the clause's verb."""
    head = _head_noun(rng)
    other = _person(rng)
    while other == head:
        other = _person(rng)
    return head, other, rng.choice(TRANSITIVE_VERBS)


def _relative_subject(rng: random.Random) -> Tokens:
    """'The doctor who helped Anna lives in Paris .'"""
    head, other, verb = _head_and_other(rng)
    return [*head, "who", verb.past, *other, *_predicate(rng), "."]


def _relative_object(rng: random.Random) -> Tokens:
    """'The doctor that Anna helped is French .' -- the head is the patient."""
    head, other, verb = _head_and_other(rng)
    return [*head, "that", *other, verb.past, *_predicate(rng), "."]


def _comparative(rng: random.Random) -> Tokens:
    """'Anna is taller than the doctor .' -- swapping the two reverses it."""
    if rng.random() < 0.6:
        first, second = _two_people(rng)
    else:
        first, second = _animal(rng), _animal(rng)
        while second == first:
            second = _animal(rng)
    copula = "was" if _tense(rng) == PAST else "is"
    negation = ["not"] if _negation(rng, allow_never=False) else []
    comparative = rng.choice(ADJECTIVES)[1]
    return [*first, copula, *negation, comparative, "than", *second, "."]


def _capital(rng: random.Random) -> Tokens:
    """'Paris is the capital of France .' and variants.

    Positive statements are always true so the corpus can feed analogy probes;
    negated ones name a wrong country.
    """
    country = rng.choice(COUNTRIES)
    roll = rng.random()
    if roll < 0.7:
        # Reported fact: the reporting verb may be negated, the fact stays true.
        tense = _tense(rng)
        verb = rng.choice(MENTAL_VERBS)
        return [
            *_person(rng),
            *_verb_phrase(verb, tense, _negation(rng)),
            "that",
            country.capital,
            "is",
            "the",
            "capital",
            "of",
            country.name,
            ".",
        ]
    if roll < 0.85:
        # Two facts in one sentence: which capital goes with which country.
        other = rng.choice(COUNTRIES)
        while other == country:
            other = rng.choice(COUNTRIES)
        return [
            country.capital, "is", "the", "capital", "of", country.name, "and",
            other.capital, "is", "the", "capital", "of", other.name, ".",
        ]
    negation = _negation(rng, allow_never=False)
    named = country
    if negation:
        while named == country:
            named = rng.choice(COUNTRIES)
    not_ = [negation] if negation else []
    if roll < 0.92:
        return [country.capital, "is", *not_, "the", "capital", "of", named.name, "."]
    if roll < 0.97:
        return ["the", "capital", "of", named.name, "is", *not_, country.capital, "."]
    return ["is", country.capital, *not_, "the", "capital", "of", named.name, "?"]


def _habitual(rng: random.Random) -> Tokens:
    """'The farmer grows tomatoes in the garden .' -- 'X eats Y in Z'."""
    if rng.random() < 0.25:
        subject, verb = _animal(rng), EAT
    else:
        subject, verb = _person(rng), rng.choice(FOOD_VERBS)
    negation = _negation(rng)
    if not negation and rng.random() < 0.3:
        verb_phrase = [rng.choice(FREQUENCY_ADVERBS), verb.third]
    else:
        verb_phrase = _verb_phrase(verb, PRESENT, negation)
    return [
        *subject,
        *verb_phrase,
        *_food(rng),
        *_location(rng),
        *_when(rng, PRESENT),
        ".",
    ]


def _counting(rng: random.Random) -> Tokens:
    """'Anna bought 3 apples at the market .' -- carries most of the digits."""
    tense = _tense(rng)
    if rng.random() < 0.5:
        item = rng.choice(COUNTABLE_FOODS)[1]
        verb = rng.choice(COUNTING_VERBS + _COUNTABLE_FOOD_VERBS)
    else:
        item = rng.choice(OBJECTS)[1]
        verb = rng.choice(COUNTING_VERBS)
    extra: Tokens = []
    roll = rng.random()
    if roll < 0.4:
        extra = _location(rng)
    elif roll < 0.6:
        extra = ["for", *_person(rng)]
    return [
        *_person(rng),
        *_verb_phrase(verb, tense, _negation(rng)),
        _count(rng),
        item,
        *extra,
        *_when(rng, tense),
        ".",
    ]


def _travel(rng: random.Random) -> Tokens:
    """'Anna travelled from Paris to Rome by train .' -- from/to is ordered."""
    tense = _tense(rng)
    verb = rng.choice(TRAVEL_VERBS)
    origin = _place_name(rng)
    destination = _place_name(rng)
    while destination == origin:
        destination = _place_name(rng)
    mode: Tokens = []
    if verb.base in ("travel", "go") and rng.random() < 0.4:
        mode = ["by", rng.choice(TRAVEL_MODES)]
    return [
        *_person(rng),
        *_verb_phrase(verb, tense, _negation(rng)),
        "from",
        origin,
        "to",
        destination,
        *mode,
        *_when(rng, tense),
        ".",
    ]


def _yes_no_question(rng: random.Random) -> Tokens:
    """'Did Anna see the doctor ?', 'Was the doctor seen by Anna ?', ..."""
    first, second = _two_people(rng)
    kind = rng.randrange(4)
    if kind == 0:
        tense = _tense(rng)
        verb = rng.choice(TRANSITIVE_VERBS)
        auxiliary = "did" if tense == PAST else "does"
        return [auxiliary, *first, verb.base, *second, *_when(rng, tense), "?"]
    if kind == 1:
        verb = rng.choice(TRANSITIVE_VERBS)
        return ["was", *second, verb.participle, "by", *first, "?"]
    if kind == 2:
        return ["is", *first, rng.choice(ADJECTIVES)[1], "than", *second, "?"]
    verb = rng.choice(TRANSFER_VERBS)
    return ["did", *first, verb.base, *_thing(rng), "to", *second, "?"]


def _wh_question(rng: random.Random) -> Tokens:
    """'Who saw the doctor ?' versus 'Who did the doctor see ?', and friends."""
    first, second = _two_people(rng)
    verb = rng.choice(TRANSITIVE_VERBS)
    kind = rng.randrange(6)
    if kind == 0:
        return ["who", verb.past, *second, *_when(rng, PAST), "?"]
    if kind == 1:
        return ["who", "did", *first, verb.base, *_when(rng, PAST), "?"]
    if kind == 2:
        return [rng.choice(("where", "when", "why")), "did", *first, verb.base, *second, "?"]
    if kind == 3:
        give = rng.choice(TRANSFER_VERBS)
        return ["what", "did", *first, give.base, "to", *second, "?"]
    if kind == 4:
        eater = _animal(rng) if rng.random() < 0.3 else first
        return ["what", "does", *eater, "eat", "in", "the", rng.choice(PLACES), "?"]
    return ["when", "did", *first, "travel", "to", _place_name(rng), "?"]

