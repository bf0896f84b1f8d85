"""Tests for the offline quickstart corpus generator (harness.synthetic)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from harness import synthetic
from harness.synthetic import (
    COUNTRIES,
    GENERATOR_VERSION,
    GENERATORS,
    generate_examples,
    generate_sentences,
    sample_transitive,
    transitive_sentence,
    vocabulary,
)

N = 3000


@pytest.fixture(scope="module")
def examples() -> list[tuple[str, str]]:
    return generate_examples("quickstart", N, seed=0)


@pytest.fixture(scope="module")
def sentences(examples: list[tuple[str, str]]) -> list[str]:
    return [sentence for _, sentence in examples]


def test_public_constants() -> None:
    assert "quickstart" in GENERATORS
    assert isinstance(GENERATOR_VERSION, str) and GENERATOR_VERSION


def test_deterministic_for_name_count_seed() -> None:
    first = generate_sentences("quickstart", 500, seed=7)
    assert first == generate_sentences("quickstart", 500, seed=7)
    # A shorter request is a prefix of a longer one with the same seed.
    assert generate_sentences("quickstart", 100, seed=7) == first[:100]


def test_does_not_touch_global_rng() -> None:
    random.seed(123)
    expected = random.random()
    random.seed(123)
    generate_sentences("quickstart", 200, seed=1)
    assert random.random() == expected


def test_different_seeds_differ() -> None:
    a = generate_sentences("quickstart", 200, seed=1)
    b = generate_sentences("quickstart", 200, seed=2)
    assert a != b
    assert len(set(a) & set(b)) < 20


def test_count_zero_and_negative() -> None:
    assert generate_sentences("quickstart", 0, seed=0) == []
    with pytest.raises(ValueError):
        generate_sentences("quickstart", -1, seed=0)


def test_token_length_bounds(sentences: list[str]) -> None:
    lengths = [len(sentence.split()) for sentence in sentences]
    assert min(lengths) >= 3
    assert max(lengths) < 15


def test_natural_surface_form(sentences: list[str]) -> None:
    for sentence in sentences:
        tokens = sentence.split()
        assert tokens[-1] in {".", "?"}
        assert tokens[0][0].isupper() or tokens[0][0].isdigit()
    # Names and places are capitalised mid-sentence too, so lowercasing matters.
    assert any(token[0].isupper() for s in sentences for token in s.split()[1:])
    assert any(s.endswith("?") for s in sentences)


def test_vocabulary_size_and_case() -> None:
    words = vocabulary()
    assert 250 <= len(words) <= 600
    assert all(word == word.lower() for word in words)


def test_every_token_is_in_vocabulary(sentences: list[str]) -> None:
    words = vocabulary("quickstart")
    emitted = {token.lower() for sentence in sentences for token in sentence.split()}
    assert emitted <= words


def test_vocabulary_lists_nothing_the_generator_never_emits() -> None:
    emitted = {
        token.lower()
        for sentence in generate_sentences("quickstart", 20000, seed=0)
        for token in sentence.split()
    }
    assert vocabulary() - emitted == set()


def test_negation_rate(sentences: list[str]) -> None:
    negated = sum(1 for s in sentences if {"not", "never"} & set(s.split()))
    assert 0.10 <= negated / len(sentences) <= 0.40


def test_constructions(examples: list[tuple[str, str]]) -> None:
    counts = Counter(construction for construction, _ in examples)
    assert len(counts) >= 8
    # No construction is starved by the duplicate redraws.
    assert min(counts.values()) > N / 50


def test_swapping_agent_and_patient_keeps_words_changes_sentence() -> None:
    rng = random.Random(0)
    for _ in range(25):
        slots = sample_transitive(rng)
        swapped = slots._replace(agent=slots.patient, patient=slots.agent)
        forward, backward = transitive_sentence(slots), transitive_sentence(swapped)
        assert forward != backward
        assert Counter(forward.lower().split()) == Counter(backward.lower().split())


def test_generated_transitive_examples_swap_roles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Record the slots behind the generator's own transitive sentences.
    recorded: list[synthetic.TransitiveSlots] = []

    def recording_sampler(rng: random.Random) -> synthetic.TransitiveSlots:
        slots = sample_transitive(rng)
        recorded.append(slots)
        return slots

    monkeypatch.setattr(synthetic, "sample_transitive", recording_sampler)
    generated = {
        sentence
        for construction, sentence in generate_examples("quickstart", 300, seed=3)
        if construction == "transitive"
    }
    rendered = [transitive_sentence(slots) for slots in recorded]
    assert generated and generated <= set(rendered)
    for slots, sentence in zip(recorded, rendered):
        if sentence not in generated:
            continue  # redrawn for length or as a duplicate
        swapped = transitive_sentence(
            slots._replace(agent=slots.patient, patient=slots.agent)
        )
        assert swapped != sentence
        assert Counter(swapped.lower().split()) == Counter(sentence.lower().split())


def test_some_sentences_have_digits(sentences: list[str]) -> None:
    with_digits = sum(1 for s in sentences if any(c.isdigit() for c in s))
    assert 0.02 < with_digits / len(sentences) < 0.6


def test_stated_capitals_are_true(examples: list[tuple[str, str]]) -> None:
    capital_of = {c.name: c.capital for c in COUNTRIES}
    checked = 0
    for construction, sentence in examples:
        tokens = sentence.lower().split()
        if construction != "capital" or "not" in tokens or "never" in tokens:
            continue
        for i, token in enumerate(tokens[:-2]):
            if token == "capital" and tokens[i + 1] == "of":
                assert capital_of[tokens[i + 2]] in tokens
                checked += 1
    assert checked > 10


def test_unknown_generator_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="quickstart"):
        generate_sentences("nope", 10, seed=0)
    with pytest.raises(ValueError, match="quickstart"):
        vocabulary("nope")


def test_mostly_unique_and_small_train_test_overlap() -> None:
    train = generate_sentences("quickstart", 20000, seed=1)
    assert len(set(train)) == len(train)
    test = generate_sentences("quickstart", 500, seed=2)
    overlap = sum(1 for sentence in test if sentence in set(train))
    assert overlap < 0.05 * len(test)


def test_proper_nouns_do_not_shadow_common_words() -> None:
    # A proper noun spelled like a common word ("turkey" the bird, "polish"
    # the verb) would be capitalised wherever the common word appears.
    common = set(synthetic.PROFESSIONS) | set(synthetic.MASS_FOODS)
    common |= set(synthetic.ANIMALS) | set(synthetic.PLACES)
    for pairs in (synthetic.COUNTABLE_FOODS, synthetic.OBJECTS, synthetic.ADJECTIVES):
        common |= {word for pair in pairs for word in pair}
    for verbs in (
        synthetic.TRANSITIVE_VERBS,
        synthetic.TRANSFER_VERBS,
        synthetic.FOOD_VERBS,
        synthetic.TRAVEL_VERBS,
        synthetic.MENTAL_VERBS,
    ):
        common |= {form for verb in verbs for form in verb}
    common |= set(synthetic.MANNER_ADVERBS) | set(synthetic.TRAVEL_MODES)
    assert not synthetic._PROPER_NOUNS & common
