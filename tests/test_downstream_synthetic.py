"""The quickstart's synthetic downstream suite: labels by construction, layout, determinism."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from harness import synthetic as corpus
from harness.protocols import GeneratedTask
from harness.testing import check_task, hashed_bag_of_words
from harness_plugins.tasks.synthetic import (
    GROUP_A,
    SYNTHETIC_TASKS,
    Sizes,
    generate,
    synthetic_task,
    write_suite,
)

SMALL = Sizes(train=200, dev=60, test=100)
PARTICIPLES = {verb.participle for verb in corpus.TRANSITIVE_VERBS}


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_suite(tmp_path_factory.mktemp("suite"), sizes=SMALL, seed=3)


def _agent(sentence: str) -> str:
    """Return the agent of 'X saw Y .' or 'Y was seen by X .' (names are single words)."""
    words = sentence.lower().split()
    return words[words.index("by") + 1] if "by" in words else words[0]


def test_sizes_and_layout(suite: dict[str, Path]) -> None:
    for name in SYNTHETIC_TASKS:
        data = synthetic_task(name, SMALL, seed=3).load(suite[name])
        assert data.sizes() == {"train": 200, "dev": 60, "test": 100}, name
    assert (suite["syn-relatedness"] / "SICK_trial.txt").read_text().startswith("pair_ID\t")
    assert "\t" in (suite["syn-order"] / "sentiment-train").read_text().split("\n")[0]


def test_order_labels_say_whether_group_a_is_the_agent(suite: dict[str, Path]) -> None:
    data = synthetic_task("syn-order", SMALL, seed=3).load(suite["syn-order"])
    voices = Counter()
    for split in data.splits.values():
        for sentence, label in zip(split.first, split.labels):
            assert (_agent(sentence) in GROUP_A) == (label == 1), sentence
            voices[("by" in sentence.split(), int(label))] += 1
    assert len(voices) == 4  # both voices in both classes: word order, not words, decides


def test_negation_labels_are_the_scope_of_never(suite: dict[str, Path]) -> None:
    data = synthetic_task("syn-negation", SMALL, seed=3).load(suite["syn-negation"])
    for split in data.splits.values():
        for sentence, label in zip(split.first, split.labels):
            words = sentence.split()
            assert words.count("never") == 1 and words.count("that") == 1
            assert (words.index("never") < words.index("that")) == (label == 1), sentence


def test_topics_are_balanced_and_lexically_marked(suite: dict[str, Path]) -> None:
    data = synthetic_task("syn-topic", SMALL, seed=3).load(suite["syn-topic"])
    labels = np.concatenate([split.labels for split in data.splits.values()])
    assert sorted(Counter(labels.tolist()).values()) == [120, 120, 120]
    for split in data.splits.values():
        for sentence, label in zip(split.first, split.labels):
            if label == 2:
                assert "capital" in sentence.split()
            if label == 1:
                assert {"from", "to"} <= set(sentence.split())


def test_relatedness_levels_by_construction(suite: dict[str, Path]) -> None:
    data = synthetic_task("syn-relatedness", SMALL, seed=3).load(suite["syn-relatedness"])
    scores = np.concatenate([split.labels for split in data.splits.values()])
    assert Counter(scores.tolist()) == {5.0: 72, 4.0: 72, 3.0: 72, 2.0: 72, 1.0: 72}
    for split in data.splits.values():
        for a, b, score in zip(split.first, split.second, split.labels):
            bag_a, bag_b = Counter(a.lower().split()), Counter(b.lower().split())
            if score in (5.0, 2.0):  # fronted time phrase / swapped roles: same words
                assert bag_a == bag_b and a != b
            if score == 4.0:
                assert "by" in bag_a or "by" in bag_b
                assert PARTICIPLES & (set(bag_a) | set(bag_b))
            if score == 3.0:
                assert "not" in (bag_a - bag_b) or "not" in (bag_b - bag_a)


def test_same_seed_same_files_other_seed_other_files(tmp_path: Path) -> None:
    first = generate(tmp_path / "a", "syn-order", SMALL, 5)
    second = generate(tmp_path / "b", "syn-order", SMALL, 5)
    third = generate(tmp_path / "c", "syn-order", SMALL, 6)
    read = lambda d: (d / "sentiment-train").read_bytes()  # noqa: E731
    assert read(first) == read(second) != read(third)


def test_generate_is_idempotent_and_replaces_stale_data(tmp_path: Path) -> None:
    directory = generate(tmp_path / "t", "syn-topic", SMALL, 1)
    stamp = (directory / "sentiment-dev").stat().st_mtime_ns
    generate(directory, "syn-topic", SMALL, 1)
    assert (directory / "sentiment-dev").stat().st_mtime_ns == stamp
    generate(directory, "syn-topic", Sizes(train=100, dev=30, test=30), 1)
    assert len((directory / "sentiment-dev").read_text().splitlines()) == 30
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no scratch left


def test_task_data_key_names_everything_that_shapes_the_data() -> None:
    task = synthetic_task("syn-negation", SMALL, seed=3)
    assert isinstance(task, GeneratedTask)
    key = task.data_key()
    assert key.startswith("syn-negation-v") and f"-g{corpus.GENERATOR_VERSION}-s3-" in key
    assert key.endswith("-200-60-100")
    assert synthetic_task("syn-negation", SMALL, seed=4).data_key() != key


def test_a_bag_of_words_cannot_solve_order_but_the_agent_can(tmp_path: Path) -> None:
    task = synthetic_task("syn-order", Sizes(train=400, dev=100, test=200), seed=2)
    directory = tmp_path / task.data_key()
    bag = check_task(task, directory, hashed_bag_of_words(dim=64))
    assert bag.score < 65  # chance is 50; 200 test sentences

    def agent_encoder(sentences: list[str]) -> np.ndarray:
        return np.array([[1.0, float(_agent(s) in GROUP_A)] for s in sentences])

    oracle = task.evaluate(agent_encoder, directory, seed=1)
    assert oracle.score > 95
