"""Sent2Vec (Pagliardini et al. 2018): training, the sentence average of eq. 2, persistence."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from harness.errors import DataError
from harness.protocols import BuildContext, TrainableEncoder
from harness.synthetic import generate_sentences
from harness.testing import DEFAULT_SENTENCES, check_encoder
from harness_plugins.encoders import models
from harness_plugins.encoders.options import Sent2VecOptions
from harness_plugins.encoders.sent2vec import Sent2VecEncoder

TINY = dict(dim=12, epochs=4, min_count=1, min_target_count=1, buckets=97, negatives=3,
            dropout_k=1, subsample=0.0, batch_size=16, lr=0.02)


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return [s.lower() for s in generate_sentences("quickstart", 240, seed=3)]


@pytest.fixture(scope="module")
def fitted(corpus: list[str]) -> Sent2VecEncoder:
    encoder = Sent2VecEncoder(Sent2VecOptions(**TINY), seed=5)
    encoder.fit(corpus)
    return encoder


def test_factory_builds_a_trainable_encoder_with_the_declared_dim() -> None:
    encoder = models._build_sent2vec(Sent2VecOptions(dim=32), BuildContext(seed=2))
    assert isinstance(encoder, TrainableEncoder)
    assert encoder.dim == 32 and encoder.seed == 2


def test_paper_defaults() -> None:
    options = Sent2VecOptions()
    assert (options.dim, options.negatives, options.dropout_k, options.min_count,
            options.epochs, options.subsample) == (700, 10, 4, 8, 9, 5e-6)


def test_training_loss_decreases(fitted: Sent2VecEncoder) -> None:
    assert len(fitted.history) == TINY["epochs"]
    assert fitted.history[-1] < 0.8 * fitted.history[0]


def test_vector_is_the_average_of_unigram_and_bigram_vectors(fitted: Sent2VecEncoder) -> None:
    a, b = "doctor", "nurse"
    i, j = fitted.index[a], fitted.index[b]
    words = len(fitted.words)
    # the released code's word-bigram hash, written out: bucket (i * 116049371 + j) mod buckets
    bigram = words + (i * 116049371 + j) % TINY["buckets"]
    expected = (fitted.input[i] + fitted.input[j] + fitted.input[bigram]) / 3
    np.testing.assert_allclose(fitted.encode([f"{a} {b}"])[0], expected, rtol=1e-6, atol=1e-7)
    one_word = fitted.encode([a])[0]
    np.testing.assert_allclose(one_word, fitted.input[i], rtol=1e-6)


def test_unknown_words_are_skipped(fitted: Sent2VecEncoder) -> None:
    with_unknown, without = fitted.encode(["doctor qqqq nurse", "doctor nurse"])
    np.testing.assert_array_equal(with_unknown, without)
    assert not fitted.encode(["qqqq zzzz"]).any()


def test_conformance_and_save_load_round_trip(fitted: Sent2VecEncoder, corpus: list[str],
                                              tmp_path) -> None:
    check_encoder(fitted, corpus[:20] + list(DEFAULT_SENTENCES))
    fitted.save(tmp_path)
    restored = Sent2VecEncoder(Sent2VecOptions(**TINY))
    restored.load(tmp_path)
    assert restored.words == fitted.words
    np.testing.assert_array_equal(restored.encode(corpus[:30]), fitted.encode(corpus[:30]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sent2vec.json", "sent2vec.safetensors"]


def test_training_is_deterministic_for_a_seed(corpus: list[str], fitted: Sent2VecEncoder) -> None:
    again = Sent2VecEncoder(Sent2VecOptions(**TINY), seed=5)
    again.fit(corpus)
    np.testing.assert_array_equal(again.input, fitted.input)
    other = Sent2VecEncoder(Sent2VecOptions(**{**TINY, "epochs": 1}), seed=6)
    other.fit(corpus)
    assert not np.allclose(other.input[:10], fitted.input[:10])


def test_fingerprint_names_options_and_seed() -> None:
    a = Sent2VecEncoder(Sent2VecOptions(**TINY), seed=1).fingerprint()
    assert a == Sent2VecEncoder(Sent2VecOptions(**TINY), seed=1).fingerprint()
    assert a != Sent2VecEncoder(Sent2VecOptions(**{**TINY, "dim": 13}), seed=1).fingerprint()
    assert a != Sent2VecEncoder(Sent2VecOptions(**TINY), seed=2).fingerprint()


def test_vocabulary_too_small_is_a_data_error() -> None:
    encoder = Sent2VecEncoder(Sent2VecOptions(**{**TINY, "min_count": 50}))
    with pytest.raises(DataError, match="min_count=50"):
        encoder.fit(["a b c", "d e f"])


def test_no_word_frequent_enough_to_predict_is_a_data_error() -> None:
    """Without it, every batch would be skipped and fit would return its random vectors."""
    encoder = Sent2VecEncoder(Sent2VecOptions(**{**TINY, "min_count": 1,
                                                        "min_target_count": 50}))
    with pytest.raises(DataError, match="no word occurs 50 times in the 2 fit sentences"):
        encoder.fit(["a b c", "d e f"])


def _batch_for(encoder: Sent2VecEncoder, sentences: list[list[int]], words: int, seed: int = 0):
    keep = np.ones(words)
    cdf = np.cumsum(np.ones(words)) / words
    return encoder._batch([np.array(s) for s in sentences], keep, cdf,
                          np.random.default_rng(seed), words)


def test_k_bigrams_are_dropped_per_sentence_leaving_one() -> None:
    encoder = Sent2VecEncoder(Sent2VecOptions(**{**TINY, "dropout_k": 2}))
    batch = _batch_for(encoder, [[0, 1], [2, 3, 4], [0, 1, 2, 3, 4, 5]], words=6)
    kept = np.bincount(batch.bigram_sentence.numpy(), minlength=3)
    # n - 1 bigrams, minus min(K, n - 2): 1 - 0, 2 - 1, 5 - 2
    assert kept.tolist() == [1, 1, 3]
    assert batch.targets.tolist() == list(range(11))  # no subsampling: every token a target


def test_context_is_the_sentence_without_the_target(corpus: list[str]) -> None:
    """The vectorised loss equals the objective computed target by target with explicit context lists."""
    torch.manual_seed(0)
    words, buckets, dim = 7, 11, 5
    encoder = Sent2VecEncoder(Sent2VecOptions(**{**TINY, "buckets": buckets, "dim": dim}))
    batch = _batch_for(encoder, [[0, 1, 2, 3], [4, 5, 6], [1, 1]], words=words, seed=3)
    source = torch.nn.Embedding(words + buckets, dim)
    target = torch.nn.Embedding(words, dim)
    loss = Sent2VecEncoder._loss(source, target, batch, torch.device("cpu"))

    tokens = batch.tokens.tolist()
    left = batch.bigram_left.tolist()
    expected = []
    for p, t in enumerate(batch.targets.tolist()):
        s = batch.token_sentence[t]
        rows = [tokens[g] for g in range(len(tokens)) if batch.token_sentence[g] == s and g != t]
        rows += [row for row, lo, owner in zip(batch.bigrams.tolist(), left,
                                               batch.bigram_sentence.tolist())
                 if owner == s and t not in (lo, lo + 1)]
        context = source.weight[rows].mean(0)
        value = torch.nn.functional.softplus(-target.weight[tokens[t]] @ context)
        for negative in batch.negatives[p].tolist():
            if negative != tokens[t]:
                value = value + torch.nn.functional.softplus(target.weight[negative] @ context)
        expected.append(value)
    torch.testing.assert_close(loss, torch.stack(expected).mean())


def test_negatives_follow_the_square_root_of_frequency() -> None:
    encoder = Sent2VecEncoder(Sent2VecOptions(**{**TINY, "negatives": 50}))
    frequency = np.array([400.0, 100.0, 25.0, 1.0])
    cdf = np.cumsum(np.sqrt(frequency)) / np.sqrt(frequency).sum()
    batch = encoder._batch([np.array([0, 1, 2, 3] * 50)], np.ones(4), cdf,
                           np.random.default_rng(1), 4)
    share = np.bincount(batch.negatives.numpy().ravel(), minlength=4) / batch.negatives.numel()
    np.testing.assert_allclose(share, [20 / 36, 10 / 36, 5 / 36, 1 / 36], atol=0.01)


def test_subsampling_keeps_frequent_words_as_targets_less_often(corpus: list[str]) -> None:
    encoder = Sent2VecEncoder(Sent2VecOptions(**{**TINY, "subsample": 1e-3}))
    t, f = 1e-3, np.array([0.1, 1e-3, 1e-5])
    keep = np.minimum(1.0, np.sqrt(t / f) + t / f)  # q_p(w), section 2
    assert keep[0] == pytest.approx(0.1 + 0.01) and keep[1] == keep[2] == 1.0
    cdf = np.array([1 / 3, 2 / 3, 1.0])
    batch = encoder._batch([np.array([0, 1, 2] * 1000)], keep, cdf, np.random.default_rng(0), 3)
    targets = np.bincount(np.array([0, 1, 2] * 1000)[batch.targets.numpy()], minlength=3)
    assert targets[1] == targets[2] == 1000
    assert abs(targets[0] / 1000 - 0.11) < 0.03
