"""The quickstart corpus' closed vocabulary: word lists, verb forms, countries.

Everything is lowercase; proper nouns are capitalised only when a sentence is
rendered. Names with a leading underscore are shared with the sibling modules
of this package but are not part of ``harness.synthetic``'s interface.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple


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


def _quickstart_vocabulary() -> frozenset[str]:
    """Every lowercased token the quickstart constructions can emit."""
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

