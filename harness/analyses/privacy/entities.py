"""What the canaries are made of: the entity types, the values each type is drawn from, and the
sentence frames that carry them (`harness.analyses.privacy.canaries` builds the sentences).

The entities are of the kinds an attacker could know, not made up, so that what the attacker's
language model has learnt can be told apart from what a vector gives away:

- for a corpus drawn by a generator (`corpus.train: {generate: quickstart}`), the generator's
  own word lists (`harness.synthetic.lexicon`), which the training split is drawn from: its
  first names (`NAMES`), its capitals (`COUNTRIES`) as places, its numbers in digits and in
  words (`DIGITS`, `NUMBER_WORDS`) and its weekdays (`WEEKDAYS`) as dates;
- for a corpus read from a file, the small first-party lists below: common English first
  names, well-known cities, the numbers 1-99 in digits and some in words, and day-month dates
  (1-28 of each month).

The run keeps the values its subword vocabulary represents without <unk>
(`canaries.lexicon`), normalised like its corpus. The frames use the quickstart's own function
words and verbs ("lives in", "visited", "bought ... cakes", ...), short as the corpus'
sentences are (at most 7 words, 8 with a two-word date): each holds a name and two of the other
types at most, every type at most once, so that a canary fits the pieces `generation.max_len`
decodes.

The spec's check (`harness.analyses.privacy.checks`) reads `fewest_words`: a canary has at
least one subword piece per word, which `generation.max_len` must leave room for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

ENTITY_TYPES: tuple[str, ...] = ("name", "place", "number", "date")

FRAMES: tuple[str, ...] = (
    "{name} lives in {place}",
    "{name} visited {place} on {date}",
    "{name} bought {number} cakes in {place}",
    "{name} found {number} keys on {date}",
    "{name} ordered {number} cakes on {date}",
)
"""The canary sentences' frames, without their full stop, which the canaries punctuate as the
corpus' sentences are (`final_stop`); canary i is frame i modulo their number."""


def final_stop(sentences: Sequence[str]) -> str:
    """How `sentences` (the corpus' training sentences) end a sentence: " ." where most of those
    that end in a full stop have it apart from the last word (tokenised text, as the quickstart
    corpus), else "." (running text, as news and Tatoeba)."""
    stops = [sentence.rstrip() for sentence in sentences if sentence.rstrip().endswith(".")]
    apart = sum(sentence.endswith(" .") for sentence in stops)
    return " ." if stops and 2 * apart > len(stops) else "."


_FIRST_NAMES = (
    "James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David Barbara "
    "Richard Susan Joseph Jessica Thomas Sarah Charles Karen Daniel Nancy Matthew Lisa "
    "Anthony Betty Mark Sandra Paul Ashley Steven Emily Andrew Donna Kevin Michelle Brian "
    "Carol George Amanda Edward Melissa Ronald Deborah Timothy Stephanie Jason Rebecca").split()
_CITIES = (
    "London Paris Berlin Madrid Rome Vienna Dublin Lisbon Athens Warsaw Prague Moscow Tokyo "
    "Beijing Delhi Cairo Nairobi Sydney Toronto Chicago Boston Seattle Dallas Houston Denver "
    "Atlanta Miami Glasgow Manchester Liverpool Leeds Bristol").split()
_NUMBER_WORDS = "two three four five six seven eight nine ten twelve twenty fifty hundred".split()
_MONTHS = ("January February March April May June July August September October November "
           "December").split()


def entity_values(generator: str | None) -> dict[str, tuple[str, ...]]:
    """Entity type -> the values canaries draw from, as a sentence would write them (names
    capitalised): the word lists of the corpus generator `generator` (`quickstart`), or the
    first-party lists for a corpus read from a file (`generator` None) or drawn by a generator
    without such lists."""
    if generator == "quickstart":
        from harness.synthetic import COUNTRIES, DIGITS, NAMES, NUMBER_WORDS, WEEKDAYS

        return {"name": _capitalised(NAMES),
                "place": _capitalised(country.capital for country in COUNTRIES),
                "number": (*DIGITS, *NUMBER_WORDS),
                "date": _capitalised(WEEKDAYS)}
    return {"name": tuple(_FIRST_NAMES), "place": tuple(_CITIES),
            "number": (*(str(n) for n in range(1, 100)), *_NUMBER_WORDS),
            "date": tuple(f"{day} {month}" for month in _MONTHS for day in range(1, 29))}


def _capitalised(words: Iterable[str]) -> tuple[str, ...]:
    return tuple(word.capitalize() for word in words)


def frames_used(count: int) -> tuple[str, ...]:
    """The frames `count` canaries use."""
    return FRAMES[:min(count, len(FRAMES))]


def fewest_words(count: int) -> int:
    """The fewest whitespace tokens the longest of `count` canaries can have (every entity one
    word at least): a lower bound on its length in subword pieces; 0 without canaries."""
    return max((len(frame.split()) for frame in frames_used(count)), default=0)
