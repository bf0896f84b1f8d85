"""fastText skip-gram in a child process: reproducible within one process, words on request."""

from __future__ import annotations

import numpy as np

from harness.synthetic import generate_sentences
from harness.text.skipgram import train_skipgram


def test_repeated_training_in_one_process_gives_identical_vectors() -> None:
    lines = [s.lower() for s in generate_sentences("quickstart", 300, 1)]
    runs = [train_skipgram(lines, dim=8, epochs=2) for _ in range(3)]
    words, counts, vectors = runs[0]
    assert words and "</s>" not in words and vectors.shape == (len(words), 8)
    assert list(counts) == sorted(counts, reverse=True)  # fastText's frequency order
    for other in runs[1:]:
        assert other[0] == words and np.array_equal(other[2], vectors)


def test_vectors_for_requested_words_including_unseen_ones() -> None:
    lines = ["the cat sat on the mat", "the dog ran"] * 50
    words, counts, vectors = train_skipgram(lines, dim=4, epochs=1, words=["the", "zebra"])
    assert words == ["the", "zebra"]
    assert counts.tolist() == [150, 0]
    assert np.isfinite(vectors).all() and np.abs(vectors[1]).sum() > 0  # from char n-grams


def test_training_that_keeps_diverging_is_a_data_error(monkeypatch, tmp_path) -> None:
    """Four attempts, each at half the learning rate, then an error rather than huge vectors."""
    import sys
    import types

    import pytest

    from harness.errors import DataError
    from harness.text.skipgram import _fit

    rates = []

    def train_unsupervised(path, **options):
        rates.append(options["lr"])
        return types.SimpleNamespace(get_input_matrix=lambda: np.full((2, 2), 1e25))

    monkeypatch.setitem(sys.modules, "fasttext",
                        types.SimpleNamespace(train_unsupervised=train_unsupervised))
    with pytest.raises(DataError, match="diverged four times"):
        _fit(str(tmp_path / "corpus.txt"), dim=2, epochs=1, min_count=1, minn=2, maxn=3,
             bucket=10, threads=1)
    assert rates == [0.05, 0.025, 0.0125, 0.00625]
