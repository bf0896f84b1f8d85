"""Noise augmentation of the trained attacks (bag-of-words, align, corrector): with query access
under a randomised defence each re-encodes its leaked texts through the store for a fresh draw
of their vectors (each epoch, or for each of align's stacked draws), and stops querying a store
whose answer repeats the draw before it exactly. Checked against a fake store that adds fresh
Gaussian noise to fixed clean vectors: the queries counted, bag-of-words' gain measured with its
own mean F1 against the known sentences, align's map against numpy's least squares on the stacked
draws and its penalty against leaving each pair out by refitting."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.protocols import AttackInputs, ThreatModel
from harness_plugins.attacks.align import Align, ridge, ridge_loo
from harness_plugins.attacks.correction import Corrector, Settings
from harness_plugins.attacks.draws import Redraws
from harness_plugins.attacks.words import BagOfWords, mean_f1, targets

WORDS = [f"w{i}" for i in range(12)]
_DRAWN = np.random.default_rng(0)
TEXTS = [" ".join(sorted(_DRAWN.choice(WORDS, size=3, replace=False))) for _ in range(400)]
"""400 sentences of 3 of the 12 words each, drawn with seed 0."""
WIDTH = 48
BASIS = np.linalg.qr(np.random.default_rng(1).standard_normal((WIDTH, WIDTH)))[0][:len(WORDS)]


def clean(texts: Sequence[str]) -> np.ndarray:
    """The clean vectors: each sentence's multi-hot of its words in a random 12-dimensional
    subspace of 48 dimensions (the words linearly readable)."""
    return (targets(list(texts), WORDS) @ BASIS).astype(np.float32)


class Store:
    """A fake attacked store: `query(texts)` is the texts' clean vectors plus Gaussian noise
    of sd `sigma` drawn afresh on every call and row (none with sigma 0: a deterministic
    store), each call's texts kept in `calls`; `offset` is added to every answer (a
    deterministic store whose answers differ from its stored vectors, as re-encoding can)."""

    def __init__(self, sigma: float, seed: int = 7, offset: float = 0.0) -> None:
        self.sigma, self.offset = sigma, offset
        self.rng = np.random.default_rng(seed)
        self.calls: list[list[str]] = []
        self.answers: list[np.ndarray] = []

    def stored(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors the store holds: one draw, not recorded as a query."""
        return self._draw(texts)

    def query(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        found = self._draw(texts) + np.float32(self.offset)
        self.answers.append(found)
        return found

    def _draw(self, texts: Sequence[str]) -> np.ndarray:
        vectors = clean(texts)
        if self.sigma:
            vectors = vectors + self.sigma * self.rng.standard_normal(vectors.shape)
        return vectors.astype(np.float32)


def given(texts: list[str], store: Store, tmp_path: Path, query: bool = True,
          **granted: Any) -> AttackInputs:
    """The leaked pairs as the store holds them (one draw), with its query when `query`."""
    return AttackInputs(texts=texts, vectors=store.stored(texts), seed=1, workdir=tmp_path,
                        query=store.query if query else None, **granted)


# --------------------------------------------------------------------------------- the draws


def test_the_draws_are_the_stored_vectors_then_one_query_each() -> None:
    store = Store(sigma=1.0)
    stored = store.stored(TEXTS[:5])
    draws = Redraws(stored, TEXTS[:5], store.query)
    assert draws.next() is draws.stored and store.calls == []
    np.testing.assert_array_equal(draws.stored, stored)
    found = [draws.next() for _ in range(3)]
    assert store.calls == [TEXTS[:5]] * 3 and draws.queries == 3 and not draws.settled
    for answer, drawn in zip(store.answers, found, strict=True):
        np.testing.assert_array_equal(answer, drawn)


@pytest.mark.parametrize(("offset", "queries"), [(0.0, 1), (0.25, 2)])
def test_a_deterministic_store_is_queried_no_more_once_an_answer_repeats(offset: float,
                                                                         queries: int) -> None:
    """An answer equal to the stored vectors settles it at the first query; one that differs
    from them (re-encoding) but repeats itself at the second."""
    store = Store(sigma=0.0, offset=offset)
    draws = Redraws(store.stored(TEXTS[:5]), TEXTS[:5], store.query)
    found = [draws.next() for _ in range(6)]
    assert len(store.calls) == draws.queries == queries and draws.settled
    assert all(drawn is found[queries] for drawn in found[queries:])
    np.testing.assert_allclose(found[-1], clean(TEXTS[:5]) + offset)


def test_without_query_access_every_draw_is_the_stored_one() -> None:
    stored = clean(TEXTS[:5])
    draws = Redraws(stored, TEXTS[:5], None)
    assert draws.settled and all(draws.next() is draws.stored for _ in range(3))


# ----------------------------------------------------------------------------- bag of words


def test_the_trained_attacks_declare_query_access_and_keep_the_rest() -> None:
    assert BagOfWords(words=5, epochs=2, held_out=0.1).threat == ThreatModel(leaked=None,
                                                                            queries=True)
    assert Align(pairs=7).threat == ThreatModel(leaked=7, surrogate=True, public=True,
                                                queries=True)
    assert Corrector().threat == ThreatModel(leaked=None, decoder=True, queries=True)


def test_bag_of_words_queries_its_training_texts_once_per_later_epoch(tmp_path: Path) -> None:
    """100 leaked pairs, 20 held out (their stored vectors choose the threshold): 5 epochs are
    the stored draw and 4 queries, each of the same 80 training texts."""
    store = Store(sigma=1.0)
    leaked = TEXTS[:100]
    attack = BagOfWords(words=12, epochs=5, held_out=0.2, seed=1)
    attack.fit(given(leaked, store, tmp_path))
    order = np.random.default_rng(1).permutation(100)
    train = [leaked[i] for i in order[20:]]
    assert store.calls == [train] * 4


@pytest.mark.parametrize(("offset", "queries"), [(0.0, 1), (0.25, 2)])
def test_bag_of_words_stops_querying_a_deterministic_store(tmp_path: Path, offset: float,
                                                           queries: int) -> None:
    store = Store(sigma=0.0, offset=offset)
    BagOfWords(words=12, epochs=6, held_out=0.2, seed=1).fit(given(TEXTS[:100], store, tmp_path))
    assert len(store.calls) == queries


def test_bag_of_words_with_one_epoch_queries_nothing(tmp_path: Path) -> None:
    store = Store(sigma=1.0)
    BagOfWords(words=12, epochs=1, held_out=0.2, seed=1).fit(given(TEXTS[:100], store, tmp_path))
    assert store.calls == []


def test_fresh_noise_every_epoch_reads_more_words_than_one_draw(tmp_path: Path) -> None:
    """Noise of sd 0.5 on every coordinate of 48 (the words' signal has norm 1 per word) and 100
    leaked pairs: fitted 300 epochs on the one stored draw the classifier learns that draw's
    noise; on a fresh draw every epoch it learns the noise's distribution. On 200 attacked
    vectors (the store's draws of other sentences), its mean content-word F1 against the known
    sentences is 0.72 against 0.52 (the store's seed 7; 0.70 and 0.72 against 0.53 and 0.54 at
    seeds 8 and 9; the margin asserted is 0.1)."""
    found = {}
    for augmented in (False, True):
        store = Store(sigma=0.5, seed=7)
        leaked, attacked = TEXTS[:100], TEXTS[200:400]
        inputs = given(leaked, store, tmp_path, query=augmented)
        vectors = store.stored(attacked)
        attack = BagOfWords(words=12, epochs=300, held_out=0.2, seed=1)
        attack.fit(inputs)
        found[augmented] = mean_f1(attacked, attack.invert(vectors).words or [])
        assert len(store.calls) == (299 if augmented else 0)
    assert found[True] > found[False] + 0.1, found


# ---------------------------------------------------------------------------------- align


def surrogate_of(texts: Sequence[str]) -> np.ndarray:
    """A surrogate encoder's clean vectors: an affine map of the clean ones, 16 wide."""
    rng = np.random.default_rng(5)
    return (clean(texts) @ rng.standard_normal((WIDTH, 16)) + rng.standard_normal(16)
            ).astype(np.float32)


def aligned(leaked: list[str], store: Store, tmp_path: Path, draws: int
            ) -> tuple[Align, np.ndarray]:
    """Align with `draws` fitted on the leaked pairs, and their stored vectors."""
    attack = Align(pairs=len(leaked), draws=draws)
    inputs = given(leaked, store, tmp_path, surrogate_vectors=surrogate_of(leaked),
                   surrogate_decode=lambda vectors, k: [["x"]] * len(vectors))
    attack.fit(inputs)
    return attack, inputs.vectors


def test_align_fits_the_ridge_map_of_the_stacked_draws(tmp_path: Path) -> None:
    """draws 4: the stored vectors and 3 queries of the leaked texts, stacked against the
    surrogate's vectors repeated 4 times; the map equals the penalised least-squares solution
    of the centred stacked data, [Xc; sqrt(l) I] w = [Yc; 0] by numpy's lstsq, its intercept
    the means' (y_mean - x_mean w)."""
    store = Store(sigma=0.3)
    leaked = TEXTS[:40]
    attack, stored = aligned(leaked, store, tmp_path, draws=4)
    assert store.calls == [leaked] * 3 and attack.used == 4
    x = np.concatenate([stored, *store.answers]).astype(np.float64)
    y = np.tile(surrogate_of(leaked), (4, 1)).astype(np.float64)
    xc, yc = x - x.mean(axis=0), y - y.mean(axis=0)
    rows = np.vstack([xc, np.sqrt(attack.penalty) * np.eye(WIDTH)])
    wanted = np.linalg.lstsq(rows, np.vstack([yc, np.zeros((WIDTH, 16))]), rcond=None)[0]
    assert attack._map is not None
    x_mean, weights, y_mean = attack._map
    np.testing.assert_allclose(weights, wanted, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(y_mean - x_mean @ weights,
                               y.mean(axis=0) - x.mean(axis=0) @ wanted, rtol=1e-6, atol=1e-8)
    # its penalty: the least error of leaving each pair out with all its draws
    chosen, errors = ridge_loo(x, y, draws=4)
    assert attack.penalty == chosen


@pytest.mark.parametrize(("offset", "queries", "used"), [(0.0, 1, 1), (0.25, 2, 2)])
def test_align_stacks_no_repeated_draw_of_a_deterministic_store(
        tmp_path: Path, offset: float, queries: int, used: int) -> None:
    """An answer equal to the stored vectors: one draw, the plain fit on the stored pairs; an
    answer off the stored vectors (re-encoding) that repeats itself: the stored and that one."""
    store = Store(sigma=0.0, offset=offset)
    leaked = TEXTS[:30]
    attack, _ = aligned(leaked, store, tmp_path, draws=5)
    assert len(store.calls) == queries and attack.used == used
    if used == 1:
        x, y = clean(leaked), surrogate_of(leaked)
        penalty, _ = ridge_loo(x, y)
        assert attack.penalty == penalty
        assert attack._map is not None
        np.testing.assert_allclose(attack._map[1], ridge(x, y, penalty)[1])


def test_leaving_a_pair_out_with_all_its_draws_equals_refitting_without_them() -> None:
    """Rows of 3 draws of 10 pairs (draw-major): the grouped leave-one-out error of every
    penalty equals refitting without the pair's 3 rows and predicting them, summed."""
    rng = np.random.default_rng(4)
    base, y = rng.standard_normal((10, 4)), rng.standard_normal((10, 2))
    x = np.concatenate([base + 0.5 * rng.standard_normal(base.shape) for _ in range(3)])
    ys = np.tile(y, (3, 1))
    penalties = np.array([0.01, 1.0, 100.0])
    chosen, errors = ridge_loo(x, ys, penalties, draws=3)
    scale = float(np.mean(np.linalg.svd(x - x.mean(axis=0), compute_uv=False) ** 2))
    pair = np.tile(np.arange(10), 3)
    for penalty, error in zip(penalties * scale, errors, strict=True):
        brute = 0.0
        for i in range(10):
            keep = pair != i
            x_mean, weights, y_mean = ridge(x[keep], ys[keep], penalty)
            brute += float(np.sum((ys[~keep] - ((x[~keep] - x_mean) @ weights + y_mean)) ** 2))
        assert error == pytest.approx(brute, rel=1e-9)
    assert chosen == pytest.approx(penalties[int(np.argmin(errors))] * scale)
    with pytest.raises(ValueError, match="blocks"):
        ridge_loo(x[:29], ys[:29], penalties, draws=3)


# ------------------------------------------------------------------------------ corrector


def nearest_decoder(leaked: list[str]) -> Callable[[np.ndarray, int], list[list[str]]]:
    """The leaked sentences nearest by cosine to each vector, best first."""
    known = clean(leaked)
    known /= np.linalg.norm(known, axis=1, keepdims=True)

    def decode(vectors: np.ndarray, k: int) -> list[list[str]]:
        cosines = np.asarray(vectors) @ known.T
        return [[leaked[j] for j in np.argsort(-row, kind="stable")[:k]] for row in cosines]

    return decode


@pytest.mark.parametrize(("sigma", "offset", "queries"), [(1.0, 0.0, 3), (0.0, 0.0, 1),
                                                          (0.0, 0.25, 2)])
def test_the_corrector_queries_its_leaked_texts_once_per_later_epoch(
        tmp_path: Path, sigma: float, offset: float, queries: int) -> None:
    """4 epochs on 40 leaked pairs: under noise 3 queries of the 40 texts (beside the one
    query of the decoder's hypotheses, which it makes either way); a deterministic store is
    queried no more once an answer repeats the draw before it."""
    store = Store(sigma=sigma, offset=offset)
    leaked = TEXTS[:40]
    attack = Corrector(Settings(steps=1, beam=1, candidates=2, pairs=40, hypotheses=2,
                                epochs=4, hidden=16, words=50))
    attack.fit(given(leaked, store, tmp_path, decode=nearest_decoder(leaked)))
    assert [texts for texts in store.calls if texts == leaked] == [leaked] * queries
    assert len(store.calls) == queries + 1
