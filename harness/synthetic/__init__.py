"""Seeded, offline generator of a small English-like corpus for the quickstart.

The quickstart trains a decoder to regenerate sentences from sentence vectors
and scores exact reconstruction and word order. This package gives it data
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

Layout of the package, one concern per module:

- `lexicon`: the closed vocabulary (word lists, verb forms, countries);
- `phrases`: small phrase builders (people, tense, negation, times, things, ...)
  and the rendering of tokens into a sentence;
- `constructions`: the sentence constructions, including the public transitive
  template (`TransitiveSlots`, `sample_transitive`, `transitive_sentence`);
- this module: the generator registry and the functions that draw a corpus.

The word lists and the types are importable from here too
(`harness.synthetic.NAMES`), as the downstream synthetic suite uses them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from functools import cache
from itertools import accumulate

from harness.synthetic.constructions import (
    TransitiveSlots,
    _capital,
    _comparative,
    _counting,
    _ditransitive,
    _habitual,
    _passive,
    _relative_object,
    _relative_subject,
    _transitive_tokens,
    _travel,
    _wh_question,
    _yes_no_question,
    sample_transitive,
    transitive_sentence,
)

# The vocabulary and its types, re-exported for the downstream synthetic suite and the tests; the
# redundant aliases mark them as deliberate re-exports without widening __all__.
from harness.synthetic.lexicon import _PROPER_NOUNS as _PROPER_NOUNS
from harness.synthetic.lexicon import ADJECTIVES as ADJECTIVES
from harness.synthetic.lexicon import ANIMALS as ANIMALS
from harness.synthetic.lexicon import COUNTABLE_FOODS as COUNTABLE_FOODS
from harness.synthetic.lexicon import COUNTING_VERBS as COUNTING_VERBS
from harness.synthetic.lexicon import COUNTRIES as COUNTRIES
from harness.synthetic.lexicon import DIGITS as DIGITS
from harness.synthetic.lexicon import EAT as EAT
from harness.synthetic.lexicon import FOOD_VERBS as FOOD_VERBS
from harness.synthetic.lexicon import FREQUENCY_ADVERBS as FREQUENCY_ADVERBS
from harness.synthetic.lexicon import HABITUAL_TIMES as HABITUAL_TIMES
from harness.synthetic.lexicon import MANNER_ADVERBS as MANNER_ADVERBS
from harness.synthetic.lexicon import MASS_FOODS as MASS_FOODS
from harness.synthetic.lexicon import MENTAL_VERBS as MENTAL_VERBS
from harness.synthetic.lexicon import NAMES as NAMES
from harness.synthetic.lexicon import NUMBER_WORDS as NUMBER_WORDS
from harness.synthetic.lexicon import OBJECTS as OBJECTS
from harness.synthetic.lexicon import PAST_TIMES as PAST_TIMES
from harness.synthetic.lexicon import PLACES as PLACES
from harness.synthetic.lexicon import PROFESSIONS as PROFESSIONS
from harness.synthetic.lexicon import TRANSFER_VERBS as TRANSFER_VERBS
from harness.synthetic.lexicon import TRANSITIVE_VERBS as TRANSITIVE_VERBS
from harness.synthetic.lexicon import TRAVEL_MODES as TRAVEL_MODES
from harness.synthetic.lexicon import TRAVEL_VERBS as TRAVEL_VERBS
from harness.synthetic.lexicon import WEEKDAYS as WEEKDAYS
from harness.synthetic.lexicon import YEARS as YEARS
from harness.synthetic.lexicon import Country as Country
from harness.synthetic.lexicon import Verb as Verb
from harness.synthetic.lexicon import _quickstart_vocabulary
from harness.synthetic.phrases import PAST as PAST
from harness.synthetic.phrases import PRESENT as PRESENT
from harness.synthetic.phrases import Tokens, _render

__all__ = [
    "GENERATORS",
    "GENERATOR_VERSION",
    "TransitiveSlots",
    "generate_examples",
    "generate_sentences",
    "iter_examples",
    "iter_sentences",
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


def _transitive(rng: random.Random) -> Tokens:
    # Defined here rather than in `constructions` so that `sample_transitive` is
    # looked up in this package's namespace at call time: a test that swaps
    # `harness.synthetic.sample_transitive` then sees the generator's own draws.
    return _transitive_tokens(sample_transitive(rng))


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


def iter_examples(name: str, count: int, seed: int) -> Iterator[tuple[str, str]]:
    """Yield ``count`` (construction name, sentence) pairs, deterministically, one at a time.

    The pairs of :func:`generate_examples`, without the list: a corpus of 10M sentences is
    written as it is drawn. Only the set of sentences seen so far (for uniqueness) grows. An
    unknown ``name`` or a negative ``count`` raises ValueError here, not at the first pair.
    """
    draw = _generator(name)
    if count < 0:
        raise ValueError(f"count must be non-negative, got {count}")
    return _draw(draw, count, random.Random(seed))


def _draw(draw: Callable[[random.Random], tuple[str, str]], count: int,
          rng: random.Random) -> Iterator[tuple[str, str]]:
    seen: set[str] = set()
    for _ in range(count):
        for _ in range(_MAX_REDRAWS):
            construction, sentence = draw(rng)
            if sentence not in seen:
                break
        seen.add(sentence)
        yield construction, sentence


def generate_examples(name: str, count: int, seed: int) -> list[tuple[str, str]]:
    """Return ``count`` (construction name, sentence) pairs, deterministically.

    Sentences are unique unless the generator's space is effectively exhausted
    (it is not for the quickstart at tens of thousands of sentences). The
    result for a smaller ``count`` is a prefix of the result for a larger one.
    """
    return list(iter_examples(name, count, seed))


def iter_sentences(name: str, count: int, seed: int) -> Iterator[str]:
    """Yield the sentences of :func:`generate_sentences` one at a time (see `iter_examples`)."""
    return (sentence for _, sentence in iter_examples(name, count, seed))


def generate_sentences(name: str, count: int, seed: int) -> list[str]:
    """Return ``count`` sentences of generator ``name``, deterministic in ``seed``.

    Sentences are natural text with capitals and punctuation as separate
    tokens, e.g. ``"Anna gave the bread to Marco ."``. Use different seeds for
    train and test splits; they share few sentences.
    """
    return list(iter_sentences(name, count, seed))


@cache
def vocabulary(name: str = "quickstart") -> frozenset[str]:
    """All lowercased tokens (words, digits, punctuation) generator ``name`` can emit."""
    _generator(name)  # same error for an unknown name
    return _VOCABULARIES[name]()
