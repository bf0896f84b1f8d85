"""The random-weight encoders of Wieting & Kiela (2019): BOREP's projection and the echo state
network's recurrence checked by hand on tiny inputs, their weights' distributions, and the
conformance kit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.protocols import BuildContext
from harness.synthetic import generate_sentences
from harness.testing import check_encoder, check_registration
from harness.text.subwords import SubwordVocab, train_subword_vocab
from harness_plugins import encoders
from harness_plugins.encoders.options import BorepOptions, EsnOptions
from harness_plugins.encoders.random_weights import (
    BorepEncoder,
    EchoStateEncoder,
    reservoir,
    uniform_projection,
)

INFOS = {info.name: info for info in check_registration(encoders)}


class Table:
    """A word table of three one- or two-dimensional vectors: "a", "b", "c"."""

    def __init__(self, vectors: list[list[float]]) -> None:
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.vectors_name = "hand-made"

    def encode(self, sentences: list[str]) -> list[list[int]]:
        return [["abc".index(word) for word in sentence.split()] for sentence in sentences]


def test_borep_projects_each_word_and_pools_by_hand():
    table = Table([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    for pooling, expected in (("max", [2.0, 1.0, 0.5]), ("mean", [1.5, -0.5, 0.25])):
        encoder = BorepEncoder(table, BorepOptions(dim=3, pooling=pooling), seed=1)
        # W e_a = [1, 1, 0.5], W e_b = [2, -2, 0]
        encoder.projection = np.array([[1.0, 1.0], [1.0, -1.0], [0.5, 0.0]])
        found = encoder.encode(["a b", "", "c"])
        np.testing.assert_allclose(found[0], expected)
        np.testing.assert_array_equal(found[1], np.zeros(3))
        np.testing.assert_allclose(found[2], [2.0, 0.0, 0.5])


def test_borep_weights_are_uniform_in_the_papers_bounds_and_seeded():
    weights = uniform_projection(2000, 50, seed=7)
    bound = 1 / math.sqrt(50)
    assert weights.shape == (2000, 50) and np.abs(weights).max() <= bound
    # uniform on [-b, b]: mean 0, variance b^2 / 3
    assert abs(weights.mean()) < 0.01 * bound and weights.var() == pytest.approx(bound ** 2 / 3,
                                                                                 rel=0.02)
    np.testing.assert_array_equal(weights, uniform_projection(2000, 50, seed=7))
    assert not np.array_equal(weights, uniform_projection(2000, 50, seed=8))


def test_the_echo_state_recurrence_on_three_tokens_by_hand():
    table = Table([[1.0], [-1.0], [2.0]])
    encoder = EchoStateEncoder(table, EsnOptions(dim=1, leak=1.0), seed=1)
    encoder.directions = [(np.array([[0.5]]), np.array([[0.9]]), np.array([0.1])),
                          (np.array([[1.0]]), np.array([[0.5]]), np.array([0.0]))]
    # forward over a, b, c = 1, -1, 2
    h1 = math.tanh(0.5 * 1 + 0.1)
    h2 = math.tanh(0.5 * -1 + 0.1 + 0.9 * h1)
    h3 = math.tanh(0.5 * 2 + 0.1 + 0.9 * h2)
    # backward over c, b, a = 2, -1, 1
    g1 = math.tanh(2.0)
    g2 = math.tanh(-1.0 + 0.5 * g1)
    g3 = math.tanh(1.0 + 0.5 * g2)
    expected = [max(h1, h2, h3), max(g1, g2, g3)]
    np.testing.assert_allclose(encoder.encode(["a b c"])[0], expected, rtol=1e-6)
    np.testing.assert_allclose(encoder.sentence(table.vectors[[0, 1, 2]]), expected, rtol=1e-12)
    # with leaking: h_t = (1 - a) h_(t-1) + a tanh(...)
    leaky = EchoStateEncoder(table, EsnOptions(dim=1, leak=0.5), seed=1)
    leaky.directions = encoder.directions
    k1 = 0.5 * math.tanh(0.6)
    k2 = 0.5 * k1 + 0.5 * math.tanh(-0.4 + 0.9 * k1)
    k3 = 0.5 * k2 + 0.5 * math.tanh(1.1 + 0.9 * k2)
    assert leaky.encode(["a b c"])[0][0] == pytest.approx(max(k1, k2, k3), rel=1e-6)


def test_the_reservoir_has_the_spectral_radius_and_sparsity_asked_for():
    weights = reservoir(40, 0.9, 0.5, np.random.default_rng(3))
    assert float(np.max(np.abs(np.linalg.eigvals(weights)))) == pytest.approx(0.9)
    assert ((weights == 0).sum(axis=0) >= 20).all()  # ceil(0.5 x 40) zeros per column


@pytest.fixture(scope="module")
def vocab(tmp_path_factory) -> SubwordVocab:
    corpus = [s.lower() for s in generate_sentences("quickstart", 2000, 1)]
    return train_subword_vocab(corpus, tmp_path_factory.mktemp("vocab"), bpe_size=200, dim=16,
                               epochs=3)


@pytest.mark.parametrize("name", ["borep", "esn"])
def test_random_weight_encoders_pass_the_conformance_kit(vocab, name):
    info = INFOS[name]
    encoder = info.factory(info.options(dim=12), BuildContext(seed=1, vocab=vocab))
    check_encoder(encoder)
    sentences = [s.lower() for s in generate_sentences("quickstart", 40, 5)]
    first = encoder.encode(sentences, batch_size=7)
    np.testing.assert_array_equal(first, encoder.encode(sentences, batch_size=40))
    again = info.factory(info.options(dim=12), BuildContext(seed=1, vocab=vocab))
    np.testing.assert_array_equal(first, again.encode(sentences))
    other = info.factory(info.options(dim=12), BuildContext(seed=2, vocab=vocab))
    assert not np.allclose(first, other.encode(sentences))


def test_the_batched_echo_state_network_equals_one_sentence_at_a_time(vocab):
    encoder = EchoStateEncoder(vocab, EsnOptions(dim=10, leak=0.7), seed=4)
    sentences = [s.lower() for s in generate_sentences("quickstart", 30, 6)]
    batched = encoder.encode(sentences)
    one = [encoder.sentence(encoder.table[np.asarray(ids)])
           for ids in vocab.encode(sentences)]
    np.testing.assert_allclose(batched, np.asarray(one), rtol=1e-5, atol=1e-6)
