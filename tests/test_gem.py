"""GEM (Yang et al. 2018): hand-computed vectors, the orthogonalisation against numpy's QR, the
word weights against a literal per-word re-computation of the paper's Algorithm 1, the fit's
principal vectors against an SVD, and the conformance kit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError

import harness_plugins.encoders as encoders
from harness.errors import DataError, HarnessError
from harness.protocols import BuildContext, TrainableEncoder
from harness.synthetic import generate_sentences
from harness.testing import check_encoder, check_registration
from harness.text.subwords import train_subword_vocab
from harness_plugins.encoders.gem import (
    GeometricEmbedding,
    context_windows,
    novel_components,
)
from harness_plugins.encoders.options import GemOptions


class WordVocab:
    """A fake `SubwordVocab`: one piece per whitespace token (named p0, p1, ...)."""

    def __init__(self, vectors) -> None:
        self.vectors = np.asarray(vectors, dtype=np.float64)

    def encode(self, sentences):
        return [[int(token[1:]) for token in s.split()] for s in sentences]


def fitted(vocab, directions, singular_values, **options) -> GeometricEmbedding:
    encoder = GeometricEmbedding(vocab, GemOptions(**options))
    encoder.directions = np.asarray(directions, dtype=np.float64)
    encoder.singular_values = np.asarray(singular_values, dtype=np.float64)
    return encoder


# ------------------------------------------------------------------------------ by hand

def test_two_orthogonal_words_by_hand():
    # p0 = (2,0,0), p1 = (0,1,0); m = 1: each word's context is the other word, orthogonal to it,
    # so r_{-1} = ||v||: alpha_n = e, alpha_s = ||v|| / 2 (two vectors in the window);
    # q = v/||v||; D = (1,1,0)/sqrt2 with s = 2: alpha_u = exp(-|2 * 1/sqrt2| / 1) = exp(-sqrt2).
    vocab = WordVocab([[2, 0, 0], [0, 1, 0]])
    d = np.array([[1], [1], [0]]) / math.sqrt(2)
    encoder = fitted(vocab, d, [2.0], window=1, k=1, h=1)
    alpha_a = math.e + 2 / 2 + math.exp(-math.sqrt(2))
    alpha_b = math.e + 1 / 2 + math.exp(-math.sqrt(2))
    c = np.array([2 * alpha_a, alpha_b, 0])
    # c - D D^T c = c - ((c1 + c2) / 2) (1, 1, 0)
    expected = [(c[0] - c[1]) / 2, (c[1] - c[0]) / 2, 0]
    np.testing.assert_allclose(encoder.encode(["p0 p1"])[0], expected, rtol=1e-6)


def test_repeated_word_brings_no_new_direction():
    # "p0 p0": each word lies in its context's span: r_{-1} = 0, q = 0, so alpha_n = exp(0) = 1,
    # alpha_s = 0, alpha_u = exp(0) = 1; c = 2 * (2,0,0) + 2 * (2,0,0) = (8,0,0);
    # removing D = (1,1,0)/sqrt2: (8,0,0) - 4 (1,1,0) = (4,-4,0).
    vocab = WordVocab([[2, 0, 0], [0, 1, 0]])
    encoder = fitted(vocab, np.array([[1], [1], [0]]) / math.sqrt(2), [2.0], window=1, k=1, h=1)
    np.testing.assert_allclose(encoder.encode(["p0 p0", ""]), [[4, -4, 0], [0, 0, 0]], atol=1e-6)


def test_single_word_sentence_by_hand():
    # No context: r = v, alpha_n = e, alpha_s = ||v|| / 1 = 3, q = v/||v|| = (0,0,1) is
    # orthogonal to D = (1,0,0): alpha_u = 1. c = (e + 4) (0,0,3), untouched by the removal.
    vocab = WordVocab([[0, 0, 3]])
    encoder = fitted(vocab, [[1], [0], [0]], [10.0], k=1, h=1)
    np.testing.assert_allclose(encoder.encode(["p0"])[0], [0, 0, 3 * (math.e + 4)], rtol=1e-6)


# ------------------------------------------------------------------- Gram-Schmidt vs QR

def test_novel_components_match_numpy_qr_on_3x3():
    rng = np.random.default_rng(0)
    words = rng.normal(size=(3, 3))                       # three words in 3-D, general position
    residual = novel_components(words[None], m=2)[0]      # the context of each is the other two
    for i in range(3):
        window = np.column_stack([words[j] for j in range(3) if j != i] + [words[i]])
        q, r = np.linalg.qr(window)
        sign = np.sign(r[-1, -1])                        # Householder may flip; Gram-Schmidt not
        np.testing.assert_allclose(np.linalg.norm(residual[i]), abs(r[-1, -1]), rtol=1e-10)
        np.testing.assert_allclose(residual[i] / np.linalg.norm(residual[i]), sign * q[:, -1],
                                   rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(r[:, -1]), np.linalg.norm(words[i]))


def test_truncated_windows_match_numpy_qr():
    rng = np.random.default_rng(1)
    words = rng.normal(size=(6, 8))                       # six words in 8-D, m = 2
    residual = novel_components(words[None], m=2)[0]
    positions, inside = context_windows(6, 2)
    assert inside.sum(axis=1).tolist() == [2, 3, 4, 4, 3, 2]
    for i in range(6):
        context = [words[j] for j in range(max(0, i - 2), min(6, i + 3)) if j != i]
        _, r = np.linalg.qr(np.column_stack(context + [words[i]]))
        np.testing.assert_allclose(np.linalg.norm(residual[i]), abs(r[-1, -1]), rtol=1e-8)
        assert sorted(positions[i][inside[i]].tolist()) == [
            j for j in range(max(0, i - 2), min(6, i + 3)) if j != i]


# ------------------------------------------------------- literal re-computation of the weights

def gram_schmidt(window: np.ndarray, tolerance: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Modified Gram-Schmidt QR of the columns of `window`, leaving a zero column in Q where a
    column lies in the span of the previous ones (numpy's Householder QR would put an arbitrary
    direction there, which wrongly widens the span for the columns after it)."""
    q = np.zeros_like(window)
    for j in range(window.shape[1]):
        u = window[:, j].copy()
        for i in range(j):
            u -= (u @ q[:, i]) * q[:, i]
        if np.linalg.norm(u) > tolerance * np.linalg.norm(window[:, j]):
            q[:, j] = u / np.linalg.norm(u)
    return q, q.T @ window


def literal_gem(words: np.ndarray, d: np.ndarray, s: np.ndarray, m: int, h: int) -> np.ndarray:
    """Algorithm 1 of Yang et al. 2018 word by word (reference, not fast)."""
    sentence = words.T                                                     # S, d x n
    n = sentence.shape[1]
    order = s * np.linalg.norm(sentence.T @ d, axis=0)
    top = np.argsort(-order, kind="stable")[:h]
    alphas = []
    for i in range(n):
        columns = [sentence[:, j] for j in range(max(0, i - m), min(n, i + m + 1)) if j != i]
        window = np.column_stack(columns + [sentence[:, i]])
        q_all, r_all = gram_schmidt(window)
        q, r = q_all[:, -1], r_all[:, -1]
        alpha_n = np.exp(r[-1] / np.linalg.norm(r))
        alpha_s = r[-1] / window.shape[1]
        alpha_u = np.exp(-np.linalg.norm(s[top] * (q @ d[:, top])) / h)
        alphas.append(alpha_n + alpha_s + alpha_u)
    c = sentence @ np.array(alphas)
    return c - d @ (d.T @ c)


def test_reference_gram_schmidt_is_numpy_qr_up_to_signs():
    window = np.random.default_rng(4).normal(size=(5, 4))
    q, r = gram_schmidt(window)
    q_np, r_np = np.linalg.qr(window)
    signs = np.sign(np.diag(r_np))
    np.testing.assert_allclose(q, q_np * signs, atol=1e-10)
    np.testing.assert_allclose(r, signs[:, None] * r_np, atol=1e-10)


def test_encode_matches_literal_algorithm():
    rng = np.random.default_rng(2)
    vocab = WordVocab(rng.normal(size=(12, 10)))
    d, _ = np.linalg.qr(rng.normal(size=(10, 4)))
    s = np.array([9.0, 5.0, 2.0, 1.0])
    encoder = fitted(vocab, d, s, window=2, k=4, h=2)
    sentences = ["p1 p2 p3 p4 p5 p6 p7", "p0 p11", "p3 p9 p10 p4 p8", "p7", "p2 p5 p2"]
    out = encoder.encode(sentences, batch_size=2)
    for row, sentence in enumerate(sentences):
        words = vocab.vectors[vocab.encode([sentence])[0]]
        np.testing.assert_allclose(out[row], literal_gem(words, d, s, m=2, h=2), rtol=1e-5,
                                   atol=1e-6)


# ------------------------------------------------------- fit: principal vectors of X vs SVD

def test_fit_principal_vectors_and_removal_match_svd():
    rng = np.random.default_rng(3)
    vocab = WordVocab(rng.normal(size=(15, 6)))
    sentences = [" ".join(f"p{j}" for j in rng.integers(0, 15, size=rng.integers(1, 7)))
                 for _ in range(40)] + [""]
    encoder = GeometricEmbedding(vocab, GemOptions(window=3, k=2, h=1))
    encoder.fit(sentences)

    # X (d x N): column i = U sigma^3 of sentence i, singular vectors' signs fixed so that the
    # largest-magnitude entry is positive (the convention the fit documents).
    columns = []
    for sentence in sentences[:-1]:
        u, sigma, _ = np.linalg.svd(vocab.vectors[vocab.encode([sentence])[0]].T,
                                    full_matrices=False)
        u = u * np.sign(u[np.argmax(np.abs(u), axis=0), np.arange(u.shape[1])])
        columns.append(u @ sigma ** 3)
    left, singular, _ = np.linalg.svd(np.column_stack(columns), full_matrices=False)
    d = left[:, :2]
    np.testing.assert_allclose(encoder.singular_values, singular[:2], rtol=1e-8)
    np.testing.assert_allclose(encoder.directions @ encoder.directions.T, d @ d.T, atol=1e-8)

    out = encoder.encode(sentences)
    np.testing.assert_allclose(out.astype(np.float64) @ d, 0.0, atol=1e-4)
    for row in (0, 5, 17):
        words = vocab.vectors[vocab.encode([sentences[row]])[0]]
        np.testing.assert_allclose(out[row], literal_gem(words, d, singular[:2], m=3, h=1),
                                   rtol=1e-5, atol=1e-5)


def test_fit_on_fewer_sentences_than_k_keeps_what_exists():
    vocab = WordVocab(np.eye(5))
    encoder = GeometricEmbedding(vocab, GemOptions(k=4, h=2))
    encoder.fit(["p0 p1", "p2"])
    assert encoder.directions.shape == (5, 2)
    assert encoder.encode(["p0 p3"]).shape == (1, 5)


# --------------------------------------------------------------------------- guards

def test_errors_name_the_problem(tmp_path):
    vocab = WordVocab(np.eye(4))
    with pytest.raises(HarnessError, match="k=45 principal vectors would remove all 4"):
        GeometricEmbedding(vocab, GemOptions())
    with pytest.raises(ValidationError, match="h=3 must not exceed k=2"):
        GemOptions(k=2, h=3)
    encoder = GeometricEmbedding(vocab, GemOptions(k=2, h=1))
    with pytest.raises(HarnessError, match="not fitted"):
        encoder.encode(["p0"])
    with pytest.raises(HarnessError, match="no non-empty training sentence"):
        encoder.fit(["", ""])
    np.save(tmp_path / "principal_vectors.npy", np.zeros((3, 2)))
    np.save(tmp_path / "singular_values.npy", np.zeros(2))
    with pytest.raises(DataError, match="shape \\(3, 2\\) for subword dimension 4"):
        encoder.load(tmp_path)
    with pytest.raises(DataError, match="cannot read gem's fitted state"):
        encoder.load(tmp_path / "missing")


def test_declares_every_option_that_changes_the_vectors():
    """The options GEM declares are the ones its vectors depend on: changing any one of them
    changes the vectors, so each must be part of what a published row is bound to."""
    rng = np.random.default_rng(0)
    vocab = WordVocab(rng.standard_normal((30, 8)))
    sentences = [" ".join(f"p{i}" for i in rng.integers(0, 30, size=6)) for _ in range(40)]
    base = {"window": 2, "k": 4, "h": 2, "sigma_power": 3.0}

    def encoder(**options) -> GeometricEmbedding:
        gem = GeometricEmbedding(vocab, GemOptions(**options))
        gem.fit(sentences)
        return gem

    reference = encoder(**base)
    assert reference.declares() == {**base, "dim": 8}  # no vectors: WordVocab cannot say
    for key, value in {"window": 1, "k": 3, "h": 1, "sigma_power": 2.0}.items():
        other = encoder(**{**base, key: value})
        assert other.declares() == {**base, key: value, "dim": 8}
        assert not np.allclose(other.encode(sentences[:5]), reference.encode(sentences[:5]))
    # the defaults are Yang et al.'s (m = 7, K = 45, h = 17, power 3), as Vec2Sent's code ran
    wide = WordVocab(np.eye(60))
    assert GeometricEmbedding(wide, GemOptions()).declares() == {
        "window": 7, "k": 45, "h": 17, "sigma_power": 3.0, "dim": 60}


# -------------------------------------------------------------- registered and conformant

@pytest.fixture(scope="module")
def tiny_vocab(tmp_path_factory):
    sentences = generate_sentences("quickstart", 300, 1)
    return sentences, train_subword_vocab(sentences, tmp_path_factory.mktemp("vocab"),
                                          bpe_size=200, dim=16, epochs=1)


def test_registered_trainable_and_conformant(tiny_vocab, tmp_path):
    sentences, vocab = tiny_vocab
    info = {i.name: i for i in check_registration(encoders)}["gem"]
    assert info.trainable and info.options is GemOptions
    encoder = info.factory(GemOptions(k=4, h=2), BuildContext(vocab=vocab))
    assert isinstance(encoder, TrainableEncoder)
    encoder.fit(sentences)
    check_encoder(encoder)
    assert encoder.dim == vocab.dim
    encoder.save(tmp_path)
    restored = info.factory(GemOptions(k=4, h=2), BuildContext(vocab=vocab))
    restored.load(tmp_path)
    np.testing.assert_array_equal(restored.encode(sentences[:20]), encoder.encode(sentences[:20]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["principal_vectors.npy",
                                                          "singular_values.npy"]
