"""Length-sorted batches for transformer encoders (plugins/encoders/batching.py)."""

from __future__ import annotations

import numpy as np
import pytest

from harness_plugins.encoders.batching import encode_by_length, length_batches

SENTENCES = ["a b c d e f g h", "a", "a b c", "a b", "a b c d e f g h i j k l m n o p", "a b c d"]


def test_batches_cover_every_row_once_longest_first() -> None:
    batches = length_batches(SENTENCES, max_rows=2, budget=1000)
    rows = np.concatenate(batches)
    assert sorted(rows.tolist()) == list(range(len(SENTENCES)))
    # lengths in words + 2: 10, 3, 5, 4, 18, 6 -> longest first
    assert rows.tolist() == [4, 0, 5, 2, 3, 1]
    assert [len(b) for b in batches] == [2, 2, 2]


def test_budget_bounds_rows_times_longest() -> None:
    # longest first: 18 -> 40 // 18 = 2 rows (18, 10); then 6 -> 6 rows cap at what is left
    batches = length_batches(SENTENCES, max_rows=100, budget=40)
    assert [b.tolist() for b in batches] == [[4, 0], [5, 2, 3, 1]]
    lengths = [len(s.split()) + 2 for s in SENTENCES]
    for batch in batches:
        assert len(batch) * max(lengths[i] for i in batch) <= 40


def test_a_sentence_longer_than_the_budget_is_a_batch_of_its_own() -> None:
    batches = length_batches(SENTENCES, max_rows=8, budget=5)
    assert batches[0].tolist() == [4]
    assert all(len(b) >= 1 for b in batches)
    assert len(np.concatenate(batches)) == len(SENTENCES)


def test_no_sentences_no_batches() -> None:
    assert length_batches([], max_rows=4) == []
    assert encode_by_length([], lambda batch: np.zeros((len(batch), 3)), 3, 4).shape == (0, 3)


@pytest.mark.parametrize(("max_rows", "budget"), [(1, 1024), (3, 1024), (100, 12), (0, 1024)])
def test_vectors_come_back_in_the_sentences_order(max_rows: int, budget: int) -> None:
    seen: list[int] = []

    def encode_batch(batch: list[str]) -> np.ndarray:
        seen.append(len(batch))
        return np.array([[len(s.split()), len(s)] for s in batch], dtype=np.float64)

    out = encode_by_length(SENTENCES, encode_batch, 2, max_rows, budget)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[len(s.split()), len(s)] for s in SENTENCES])
    assert sum(seen) == len(SENTENCES) and max(seen) <= max(1, max_rows)
