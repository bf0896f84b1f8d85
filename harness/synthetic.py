"""Seeded, offline generator of a small English-like corpus for the quickstart.

The quickstart trains a decoder to regenerate sentences from sentence vectors
and scores exact reconstruction and word order. This module gives it data
without any download, built so that those metrics say something:

* a closed vocabulary of a few hundred words (:func:`vocabulary`), small enough
  for a tiny model to cover;
* constructions where word order carries the meaning (who did what to whom,
  from where to where, which one is taller), so that a bag of words is not
  enough to reconstruct a sentence;
* a fraction of negated sentences ("did not", "never", "is not");
* digits in some sentences, capitalised names, sentence-initial capitals and
  punctuation as its own token, so the pipeline's digit and lowercase
  normalisation steps have something to do;
* consistent country / capital / nationality triples ("France", "Paris",
  "French") for later analogy probes.

All randomness comes from ``random.Random(seed)``; the global RNG is never
used, so the output is a function of (generator name, count, seed) and of
:data:`GENERATOR_VERSION`, which must be bumped whenever the output changes
because it is part of cache keys.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from functools import cache
from itertools import accumulate
from typing import NamedTuple

__all__ = [
    "GENERATORS",
    "GENERATOR_VERSION",
    "TransitiveSlots",
    "generate_examples",
    "generate_sentences",
    "sample_transitive",
    "transitive_sentence",
    "vocabulary",
]

GENERATOR_VERSION = "1"

# The paper keeps sentences with fewer than 15 tokens; fewer than 3 is not a
# sentence worth reconstructing. Punctuation counts as a token.
MIN_TOKENS = 3
MAX_TOKENS = 14

# How many times to redraw before accepting a duplicate sentence. Duplicates
# are only accepted once the combinatorial space is effectively exhausted.
_MAX_REDRAWS = 50

PAST = "past"
PRESENT = "present"


class Verb(NamedTuple):
    """The forms of an English verb that the templates need."""

    base: str
    past: str
    participle: str
    third: str  # third person singular present: "sees"


class Country(NamedTuple):
    """A country with its capital and nationality adjective (for analogies)."""

    name: str
    capital: str
    nationality: str


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _verbs(*specs: str) -> tuple[Verb, ...]:
    return tuple(Verb(*spec.split()) for spec in specs)


def _pairs(*specs: str) -> tuple[tuple[str, str], ...]:
    return tuple((a, b) for a, b in (spec.split() for spec in specs))


# --- Word lists -------------------------------------------------------------
# Everything is lowercase here; proper nouns are capitalised when rendering.

NAMES = _words(
    "anna marco maria john sofia david emma lucas sara peter laura omar nina "
    "paul elena tom julia ali clara hugo mia leo eva ivan lena carlos rosa "
    "felix hana oscar"
)
PROFESSIONS = _words(
    "teacher doctor nurse farmer baker lawyer pilot driver singer painter "
    "writer student engineer cook judge dancer waiter banker scientist "
    "mechanic actor gardener"
)
COUNTRIES = tuple(
    Country(*spec.split())
    for spec in (
        "france paris french",
        "germany berlin german",
        "italy rome italian",
        "spain madrid spanish",
        "portugal lisbon portuguese",
        "greece athens greek",
        "egypt cairo egyptian",
        "japan tokyo japanese",
        "china beijing chinese",
        "russia moscow russian",
        "canada ottawa canadian",
        "peru lima peruvian",
        "kenya nairobi kenyan",
        "austria vienna austrian",
        "norway oslo norwegian",
        "sweden stockholm swedish",
        "poland warsaw polish",
        "ireland dublin irish",
        "turkey ankara turkish",
        "brazil brasilia brazilian",
    )
)
WEEKDAYS = _words("monday tuesday wednesday thursday friday saturday sunday")

# Foods: mass nouns go bare ("eats bread"), countable ones take a plural.
MASS_FOODS = _words("bread rice soup cheese meat fish pasta salad chocolate honey")
COUNTABLE_FOODS = _pairs(
    "apple apples", "egg eggs", "orange oranges", "banana bananas",
    "tomato tomatoes", "potato potatoes", "cake cakes", "sandwich sandwiches",
    "cookie cookies", "pear pears", "lemon lemons", "carrot carrots",
)
OBJECTS = _pairs(
    "book books", "key keys", "letter letters", "phone phones", "ball balls",
    "bag bags", "cup cups", "pen pens", "map maps", "ticket tickets",
    "box boxes", "bottle bottles", "watch watches", "camera cameras",
    "hat hats", "knife knives", "plate plates", "picture pictures",
    "ring rings", "basket baskets",
)
ANIMALS = _words(
    "dog cat horse cow bird mouse rabbit fox bear lion tiger wolf pig monkey"
)
PLACES = _words(
    "kitchen garden park school office market library hospital station "
    "restaurant cafe museum hotel bakery shop church"
)

# Person-to-person verbs: the core of the who-did-what-to-whom templates.
TRANSITIVE_VERBS = _verbs(
    "see saw seen sees", "help helped helped helps", "meet met met meets",
    "call called called calls", "visit visited visited visits",
    "follow followed followed follows", "thank thanked thanked thanks",
    "invite invited invited invites", "pay paid paid pays",
    "teach taught taught teaches", "find found found finds",
    "ignore ignored ignored ignores", "admire admired admired admires",
    "trust trusted trusted trusts", "warn warned warned warns",
    "greet greeted greeted greets", "forgive forgave forgiven forgives",
    "wake woke woken wakes",
)
# Verbs of transfer: "anna gave the bread to marco".
TRANSFER_VERBS = _verbs(
    "give gave given gives", "send sent sent sends", "show showed shown shows",
    "hand handed handed hands", "sell sold sold sells", "lend lent lent lends",
    "throw threw thrown throws", "bring brought brought brings",
    "offer offered offered offers",
)
# Habitual food verbs: "the farmer grows tomatoes in the garden".
FOOD_VERBS = _verbs(
    "eat ate eaten eats", "cook cooked cooked cooks", "buy bought bought buys",
    "like liked liked likes", "order ordered ordered orders",
    "grow grew grown grows",
)
# Counted things: "anna bought 3 apples at the market".
COUNTING_VERBS = _verbs(
    "buy bought bought buys", "sell sold sold sells", "find found found finds",
    "order ordered ordered orders", "bring brought brought brings",
)
EAT = FOOD_VERBS[0]
# Food verbs that also take a count in the past: "marco ate 3 apples".
_COUNTABLE_FOOD_VERBS = FOOD_VERBS[:2]
TRAVEL_VERBS = _verbs(
    "travel travelled travelled travels", "fly flew flown flies",
    "drive drove driven drives", "walk walked walked walks",
    "move moved moved moves", "go went gone goes",
)
MENTAL_VERBS = _verbs(
    "know knew known knows", "learn learned learned learns",
    "say said said says", "think thought thought thinks",
)
# (adjective, comparative) -- the comparative template is order-sensitive.
ADJECTIVES = _pairs(
    "tall taller", "short shorter", "old older", "young younger",
    "strong stronger", "fast faster", "slow slower", "happy happier",
    "busy busier", "rich richer", "smart smarter", "kind kinder",
    "quiet quieter", "big bigger", "small smaller", "heavy heavier",
    "brave braver", "calm calmer",
)
MANNER_ADVERBS = _words(
    "quickly slowly carefully quietly politely happily secretly suddenly "
    "finally again"
)
FREQUENCY_ADVERBS = _words("often always usually sometimes")
TRAVEL_MODES = _words("train bus car plane boat")
NUMBER_WORDS = _words("two three four five six seven eight nine ten twelve twenty")
DIGITS = tuple(str(n) for n in range(1, 21))
YEARS = _words("1990 1995 1999 2001 2005 2008 2010 2012 2015 2018 2020 2023")
PAST_TIMES = (
    "yesterday", "last night", "last week", "last year", "this morning",
    "this evening",
)
HABITUAL_TIMES = ("every day", "every morning", "every evening", "every week", "at night")

# Words that only the templates themselves contribute.
_FUNCTION_WORDS = _words(
    "the from who that is was by to not never did does than of in at on "
    "and every for lives works days weeks years ago capital what where when "
    "why . ?"
)

_PROPER_NOUNS = frozenset(
    [*NAMES, *WEEKDAYS]
    + [word for country in COUNTRIES for word in country]
)


# --- Small samplers ---------------------------------------------------------
# Phrases are lists of lowercase tokens; only _render() capitalises.

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


# --- Constructions ----------------------------------------------------------
# Each returns lowercase tokens ending in '.' or '?'.


def _transitive(rng: random.Random) -> Tokens:
    return _transitive_tokens(sample_transitive(rng))


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


def _relative_subject(rng: random.Random) -> Tokens:
    """'The doctor who helped Anna lives in Paris .'"""
    head = _head_noun(rng)
    other = _person(rng)
    while other == head:
        other = _person(rng)
    verb = rng.choice(TRANSITIVE_VERBS)
    return [*head, "who", verb.past, *other, *_predicate(rng), "."]


def _relative_object(rng: random.Random) -> Tokens:
    """'The doctor that Anna helped is French .' -- the head is the patient."""
    head = _head_noun(rng)
    other = _person(rng)
    while other == head:
        other = _person(rng)
    verb = rng.choice(TRANSITIVE_VERBS)
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


def _place_name(rng: random.Random) -> str:
    country = rng.choice(COUNTRIES)
    return country.capital if rng.random() < 0.5 else country.name


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


# Relative frequencies of the constructions in the quickstart corpus.
_QUICKSTART_CONSTRUCTIONS: dict[str, tuple[float, Callable[[random.Random], Tokens]]] = {
    "transitive": (2.0, _transitive),
    "passive": (1.5, _passive),
    "ditransitive": (1.5, _ditransitive),
    "relative_subject": (1.0, _relative_subject),
    "relative_object": (1.0, _relative_object),
    "comparative": (1.0, _comparative),
    "capital": (1.0, _capital),
    "habitual": (1.5, _habitual),
    "counting": (1.0, _counting),
    "travel": (1.0, _travel),
    "yes_no_question": (1.0, _yes_no_question),
    "wh_question": (1.0, _wh_question),
}
_CONSTRUCTION_NAMES = tuple(_QUICKSTART_CONSTRUCTIONS)
_CUMULATIVE_WEIGHTS = list(accumulate(w for w, _ in _QUICKSTART_CONSTRUCTIONS.values()))


def _render(tokens: Tokens) -> str:
    """Capitalise proper nouns and the first word; punctuation stays a token."""
    words = [word.capitalize() if word in _PROPER_NOUNS else word for word in tokens]
    words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words)


def _quickstart_example(rng: random.Random) -> tuple[str, str]:
    """One (construction name, sentence) pair of the quickstart corpus."""
    name = rng.choices(_CONSTRUCTION_NAMES, cum_weights=_CUMULATIVE_WEIGHTS)[0]
    build = _QUICKSTART_CONSTRUCTIONS[name][1]
    # Templates are kept simple and can overshoot the length limit when every
    # optional phrase is long; redrawing is cheaper than budgeting lengths.
    for _ in range(1000):
        tokens = build(rng)
        if MIN_TOKENS <= len(tokens) <= MAX_TOKENS:
            return name, _render(tokens)
    raise RuntimeError(f"construction {name!r} cannot produce a sentence within the limits")


def _quickstart_vocabulary() -> frozenset[str]:
    words: set[str] = set(_FUNCTION_WORDS)
    groups: Iterable[Iterable[str]] = (
        NAMES, PROFESSIONS, WEEKDAYS, MASS_FOODS, ANIMALS, PLACES,
        MANNER_ADVERBS, FREQUENCY_ADVERBS, TRAVEL_MODES, NUMBER_WORDS, DIGITS, YEARS,
        *COUNTRIES, *COUNTABLE_FOODS, *OBJECTS, *ADJECTIVES,
        (word for phrase in PAST_TIMES + HABITUAL_TIMES for word in phrase.split()),
    )
    for group in groups:
        words.update(group)
    # Only the verb forms the templates use; e.g. only transitive verbs go
    # passive, so only they contribute a participle.
    verb_forms: list[tuple[Iterable[Verb], tuple[str, ...]]] = [
        (TRANSITIVE_VERBS, ("base", "past", "participle", "third")),
        (TRANSFER_VERBS, ("base", "past", "third")),
        (FOOD_VERBS, ("base", "third")),
        (_COUNTABLE_FOOD_VERBS, ("past",)),
        (COUNTING_VERBS, ("base", "past", "third")),
        (TRAVEL_VERBS, ("base", "past", "third")),
        (MENTAL_VERBS, ("base", "past", "third")),
    ]
    for verbs, forms in verb_forms:
        words.update(getattr(verb, form) for verb in verbs for form in forms)
    return frozenset(words)


# Generator name -> function drawing one (construction, sentence) pair from an RNG.
GENERATORS: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    "quickstart": _quickstart_example,
}
_VOCABULARIES: dict[str, Callable[[], frozenset[str]]] = {
    "quickstart": _quickstart_vocabulary,
}


def _generator(name: str) -> Callable[[random.Random], tuple[str, str]]:
    try:
        return GENERATORS[name]
    except KeyError:
        known = ", ".join(sorted(GENERATORS))
        raise ValueError(
            f"unknown synthetic generator {name!r}; known generators: {known}"
        ) from None


def generate_examples(name: str, count: int, seed: int) -> list[tuple[str, str]]:
    """Return ``count`` (construction name, sentence) pairs, deterministically.

    Sentences are unique unless the generator's space is effectively exhausted
    (it is not for the quickstart at tens of thousands of sentences). The
    result for a smaller ``count`` is a prefix of the result for a larger one.
    """
    draw = _generator(name)
    if count < 0:
        raise ValueError(f"count must be non-negative, got {count}")
    rng = random.Random(seed)
    seen: set[str] = set()
    examples: list[tuple[str, str]] = []
    while len(examples) < count:
        for _ in range(_MAX_REDRAWS):
            construction, sentence = draw(rng)
            if sentence not in seen:
                break
        seen.add(sentence)
        examples.append((construction, sentence))
    return examples


def generate_sentences(name: str, count: int, seed: int) -> list[str]:
    """Return ``count`` sentences of generator ``name``, deterministic in ``seed``.

    Sentences are natural text with capitals and punctuation as separate
    tokens, e.g. ``"Anna gave the bread to Marco ."``. Use different seeds for
    train and test splits; they share few sentences.
    """
    return [sentence for _, sentence in generate_examples(name, count, seed)]


@cache
def vocabulary(name: str = "quickstart") -> frozenset[str]:
    """All lowercased tokens (words, digits, punctuation) generator ``name`` can emit."""
    _generator(name)  # same error for an unknown name
    return _VOCABULARIES[name]()
