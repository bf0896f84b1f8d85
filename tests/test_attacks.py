"""The attacks as plugins: the contract, the conformance kit, and each first-party attack
against a case whose answer is known or an independent computation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.protocols import AttackInputs, Inversion, ThreatModel, threat_model
from harness.registry.loader import load_registry
from harness.testing import DEFAULT_SENTENCES, check_attack
from harness.testing.attacks import bag_embedding
from harness_plugins.attacks.align import Align, ridge, ridge_loo
from harness_plugins.attacks.correction import Corrector, Settings, Words
from harness_plugins.attacks.decoding import AdaptiveDecoder, Rerank
from harness_plugins.attacks.nearest import Nearest
from harness_plugins.attacks.words import BagOfWords, mean_f1, targets, vocabulary

FIRST_PARTY = ("align", "bag-of-words", "corrector", "decoder", "nearest", "oracle", "prior",
               "rerank")


def inputs(texts: list[str], tmp_path: Path, **granted) -> AttackInputs:
    return AttackInputs(texts=texts, vectors=bag_embedding(texts), seed=3, workdir=tmp_path,
                        **granted)


# ----------------------------------------------------------------------------- the contract


def test_every_first_party_attack_is_registered_and_passes_the_kit() -> None:
    registry = load_registry()
    assert set(FIRST_PARTY) <= set(registry.names("attack"))
    from harness.protocols import BuildContext

    for name in FIRST_PARTY:
        info = registry.get("attack", name)
        attack = registry.create("attack", name, info.options(), BuildContext(seed=1))
        found = check_attack(attack)
        assert len(found) == 5 and all(isinstance(text, str) for text in found), name


def test_the_threat_model_says_what_an_attack_is_given() -> None:
    assert ThreatModel().describe() == "all leaked training pairs"
    assert ThreatModel(leaked=0, public=True, queries=True).describe() == (
        "no leaked pairs, black-box queries, a public corpus")
    assert ThreatModel(leaked=100, surrogate=True, knows_defence=False).describe() == (
        "100 leaked pairs, a surrogate encoder, not the defence")

    class Bare:
        def fit(self, inputs): ...

        def invert(self, vectors): ...

    with pytest.raises(TypeError, match="ThreatModel"):
        threat_model(Bare())


def test_the_kit_refuses_an_attack_that_returns_too_few_texts() -> None:
    class Short:
        threat = ThreatModel(leaked=0)

        def fit(self, inputs: AttackInputs) -> None:
            pass

        def invert(self, vectors: np.ndarray) -> Inversion:
            return Inversion(sentences=["x"])

    with pytest.raises(AssertionError, match="1 sentences for 5 vectors"):
        check_attack(Short())


def test_the_kit_asks_an_attack_that_ranks_for_one_score_per_candidate() -> None:
    """A ranker's `likelihood` is checked as the core checks it: a list per vector, a finite
    score per candidate (the kit asks for each attacked vector's text and two others)."""
    class Ranks:
        threat = ThreatModel(leaked=0)

        def __init__(self, scores: list[float]) -> None:
            self.scores = scores

        def fit(self, inputs: AttackInputs) -> None:
            pass

        def invert(self, vectors: np.ndarray) -> Inversion:
            return Inversion(sentences=["x"] * len(vectors))

        def likelihood(self, vectors: np.ndarray, candidates) -> list[list[float]]:
            return [list(self.scores) for _ in candidates]

    assert check_attack(Ranks([0.0, 1.0, 2.0])) == ["x"] * 5
    with pytest.raises(AssertionError, match="2 scores for the 3 candidates of vector 0"):
        check_attack(Ranks([0.0, 1.0]))
    with pytest.raises(AssertionError, match="not finite numbers"):
        check_attack(Ranks([0.0, float("inf"), 1.0]))


def test_the_kit_names_the_grant_an_attack_uses_without_declaring_it() -> None:
    """Queries without `queries=True`: the core hands None, and the kit says which grant to
    declare instead of "'NoneType' object is not callable"."""
    class Undeclared:
        threat = ThreatModel(leaked=0)

        def fit(self, inputs: AttackInputs) -> None:
            self.vectors = inputs.query(["a"])  # type: ignore[misc]

        def invert(self, vectors: np.ndarray) -> Inversion:
            return Inversion(sentences=["x"] * len(vectors))

    with pytest.raises(AssertionError) as refused:
        check_attack(Undeclared())
    message = str(refused.value)
    assert "'NoneType' object is not callable" in message
    assert "not granted: queries, public, decoder, surrogate" in message
    assert "ThreatModel(queries=True)" in message


def test_the_core_names_the_grant_an_attack_uses_without_declaring_it() -> None:
    from harness.analyses.privacy.attacks import _granted
    from harness.errors import PluginError

    public = AttackInputs(texts=[], vectors=np.zeros((0, 2)), seed=1, workdir=Path()).public
    with pytest.raises(PluginError) as refused, _granted("my-plugin", "attack 'mine' on avg: fit",
                                                         ThreatModel(queries=True)):
        public(["a"])  # type: ignore[misc]  # not granted: None
    assert str(refused.value) == (
        "plugin 'my-plugin': attack 'mine' on avg: fit: an input its ThreatModel does not grant "
        "is None (not granted: public, decoder, surrogate): declare what the attack uses, e.g. "
        "ThreatModel(public=True)")
    with pytest.raises(PluginError, match=r"fit: ValueError: bad$"), _granted(
            "my-plugin", "fit", ThreatModel()):
        raise ValueError("bad")


def test_the_kit_refuses_an_attack_that_writes_into_its_vectors_or_gives_nan_scores() -> None:
    class Writes:
        threat = ThreatModel(leaked=0)

        def fit(self, inputs: AttackInputs) -> None:
            pass

        def invert(self, vectors: np.ndarray) -> Inversion:
            vectors /= 2  # in place: the store's vectors are read-only
            return Inversion(sentences=["x"] * len(vectors))

    with pytest.raises(AssertionError, match="writes into the vectors it is handed"):
        check_attack(Writes())

    class NotANumber(Writes):
        def invert(self, vectors: np.ndarray) -> Inversion:
            return Inversion(sentences=["x"] * len(vectors), scores=[float("nan")] * len(vectors))

    with pytest.raises(AssertionError, match="scores that are not finite numbers"):
        check_attack(NotANumber())


# -------------------------------------------------------------------------------- nearest


def test_nearest_returns_the_public_sentence_each_vector_came_from(tmp_path: Path) -> None:
    public = ["the cat sat on the mat", "a dog barked at night", "rain fell on the town",
              "she wrote a long letter"]
    attack = Nearest(corpus=100)
    attack.fit(inputs([], tmp_path, public=public, query=lambda t: bag_embedding(list(t))))
    order = [2, 0, 3, 1]
    found = attack.invert(bag_embedding([public[i] for i in order]))
    assert found.sentences == [public[i] for i in order]
    assert found.scores == pytest.approx([1.0] * 4)


# ------------------------------------------------------------------------- decoder, rerank


def test_oracle_ranking_finds_a_deterministic_stores_sentence_at_cosine_one(
        tmp_path: Path) -> None:
    """A deterministic store answers a query with the vector it stores: every attacked
    sentence that is among the candidates is found, each at cosine 1."""
    from harness_plugins.attacks.oracle import OracleRanking

    public = [*DEFAULT_SENTENCES, "an extra sentence nobody stored"]
    attack = OracleRanking(corpus=100, repeats=8)
    attack.fit(inputs([], tmp_path, public=public, query=lambda texts: bag_embedding(texts)))
    found = attack.invert(bag_embedding(DEFAULT_SENTENCES))
    assert found.sentences == list(DEFAULT_SENTENCES)
    assert found.scores == pytest.approx([1.0] * len(DEFAULT_SENTENCES))


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_oracle_ranking_uses_the_noise_model_and_beats_one_noisy_query(kind: str,
                                                                       tmp_path: Path) -> None:
    """300 candidates with N(0, 1) vectors (32-d), stored and queried under noise of sd 1.5
    drawn afresh per record and per query: ranking by the likelihood with the noise estimated
    from 8 queries per candidate finds the true sentence for 40% or more (52% and 60% at this
    seed), the nearest by cosine to one noisy query for under half as many (10%, 15%); the
    noise's shape is identified from the residuals (Laplace: heavy-tailed)."""
    from harness_plugins.attacks.nearest import Nearest
    from harness_plugins.attacks.oracle import OracleRanking

    rng, n, dim, sd = np.random.default_rng(0), 300, 32, 1.5
    table = rng.standard_normal((n, dim))
    sentences = [f"s{i}" for i in range(n)]
    index = {s: i for i, s in enumerate(sentences)}

    def noise(generator: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        return (generator.standard_normal(shape) * sd if kind == "gaussian"
                else generator.laplace(0.0, sd / np.sqrt(2), shape))

    fresh = np.random.default_rng(1)

    def query(texts):
        return (table[[index[t] for t in texts]] + noise(fresh, (len(texts), dim))
                ).astype(np.float32)

    stored = (table + noise(np.random.default_rng(2), (n, dim))).astype(np.float32)
    granted = inputs([], tmp_path, public=sentences, query=query)
    oracle, nearest = OracleRanking(corpus=n, repeats=8), Nearest(corpus=n)
    oracle.fit(granted)
    nearest.fit(granted)
    assert oracle._laplace == (kind == "laplace")

    def recovered(attack) -> float:
        return float(np.mean([a == b for a, b in zip(attack.invert(stored).sentences,
                                                     sentences, strict=True)]))

    assert recovered(oracle) >= 0.4 and recovered(oracle) > 2 * recovered(nearest)


def test_the_decoder_attack_is_the_decoders_best_output(tmp_path: Path) -> None:
    attack = AdaptiveDecoder()
    attack.fit(inputs(["a b"], tmp_path, decode=lambda v, k: [["best", "second"][:k]] * len(v)))
    assert attack.invert(np.zeros((3, 4), dtype=np.float32)).sentences == ["best"] * 3


def test_rerank_keeps_the_candidate_whose_vector_is_closest(tmp_path: Path) -> None:
    # The decoder proposes, best first, a wrong sentence and the right one; re-encoded, the
    # right one's vector is the attacked vector itself, so its cosine is 1.
    truth = ["the cat sat", "a dog barked"]
    wrong = ["rain fell", "she wrote"]
    seen = []

    def decode(vectors: np.ndarray, k: int) -> list[list[str]]:
        seen.append(k)
        return [[w, t] for w, t in zip(wrong, truth)]

    attack = Rerank(candidates=2)
    attack.fit(inputs(["x"], tmp_path, decode=decode, query=lambda t: bag_embedding(list(t))))
    found = attack.invert(bag_embedding(truth))
    assert seen == [2] and found.sentences == truth
    assert found.scores == pytest.approx([1.0, 1.0])


# ------------------------------------------------------------------------------ correction

SUBJECTS = ["tom", "mary", "john", "anna", "the cat", "my dad", "her son", "a girl"]
VERBS = ["likes", "sees", "hates", "wants", "needs", "finds", "draws", "buys"]
OBJECTS = ["apples", "books", "music", "trains", "coffee", "flowers", "horses", "snow"]
TRIPLES = [(s, v, o) for s in range(8) for v in range(8) for o in range(8)]
WORLD = [f"{SUBJECTS[s]} {VERBS[v]} {OBJECTS[o]}" for s, v, o in TRIPLES]
LEXICON = sorted({w for text in WORLD for w in text.split()})


def bag(texts) -> np.ndarray:
    """An exact bag of words over the world's words, unit rows: every sentence of the world
    has a vector of its own."""
    rows = np.zeros((len(texts), len(LEXICON)), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in text.split():
            rows[i, LEXICON.index(word)] += 1
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)


def wrong_object(vectors: np.ndarray, k: int) -> list[list[str]]:
    """A decoder that reads subject and verb right and the object wrong: for each vector, its
    sentence with the object shifted by 1, ..., k places (never the right one)."""
    found = []
    for i in np.argmax(np.asarray(vectors) @ bag(WORLD).T, axis=1):
        s, v, o = TRIPLES[i]
        found.append([f"{SUBJECTS[s]} {VERBS[v]} {OBJECTS[(o + j) % 8]}"
                      for j in range(1, k + 1)])
    return found


def test_correction_fixes_what_the_decoder_gets_wrong_and_keeps_the_best_by_cosine(
        tmp_path: Path) -> None:
    """Every hypothesis the decoder gives has the wrong object, so step 0 recovers no
    sentence; the corrector, trained on 400 leaked pairs, rewrites the object from the
    vector: the attacked sentences come back, and the cosine never falls from step to step."""
    order = np.random.default_rng(0).permutation(len(WORLD))
    leaked = [WORLD[i] for i in order[:400]]
    attacked = [WORLD[i] for i in order[400:460]]
    attack = Corrector(Settings(steps=2, beam=2, candidates=3, pairs=400, hypotheses=2,
                                epochs=25, hidden=64))
    attack.fit(AttackInputs(texts=leaked, vectors=bag(leaked), seed=5, workdir=tmp_path,
                            decode=wrong_object, query=lambda t: bag(list(t))))
    found = attack.invert(bag(attacked))
    assert len(found.steps) == 3 and found.steps[-1] == found.sentences
    assert not any(s == t for s, t in zip(found.steps[0], attacked))  # the decoder's: wrong
    exact = np.mean([s == t for s, t in zip(found.sentences, attacked)])
    assert exact >= 0.8
    targets = bag(attacked)
    cosines = [np.sum(bag(step) * targets, axis=1) for step in found.steps]
    assert all(np.all(later >= earlier - 1e-6) for earlier, later in zip(cosines, cosines[1:]))
    np.testing.assert_allclose(found.scores, cosines[-1], atol=1e-5)


def test_an_untrained_corrector_never_replaces_a_closer_hypothesis(tmp_path: Path) -> None:
    """With no training its rewrites are noise; the answer stays the decoder's closest
    candidate (the best by cosine over all steps, not the last step's rewrite)."""
    leaked, attacked = WORLD[:50], WORLD[100:120]
    attack = Corrector(Settings(steps=3, beam=1, candidates=2, pairs=50, epochs=0, hidden=16))
    attack.fit(AttackInputs(texts=leaked, vectors=bag(leaked), seed=1, workdir=tmp_path,
                            decode=wrong_object, query=lambda t: bag(list(t))))
    found = attack.invert(bag(attacked))
    first = wrong_object(bag(attacked), 2)
    best = [max(row, key=lambda text: float(bag([text])[0] @ bag([truth])[0]))
            for row, truth in zip(first, attacked)]
    assert found.steps[0] == best and found.sentences == best


def test_a_corrector_without_steps_reranks_and_one_without_vectors_reads_nothing(
        tmp_path: Path) -> None:
    """steps 0: the decoder's candidates re-ranked by cosine, as `rerank`, nothing trained."""
    leaked, attacked = WORLD[:50], WORLD[100:110]
    granted = {"decode": wrong_object, "query": lambda t: bag(list(t))}
    corrector = Corrector(Settings(steps=0, candidates=3, pairs=50))
    corrector.fit(AttackInputs(texts=leaked, vectors=bag(leaked), seed=1, workdir=tmp_path,
                               **granted))
    rerank = Rerank(candidates=3)
    rerank.fit(AttackInputs(texts=leaked, vectors=bag(leaked), seed=1, workdir=tmp_path,
                            **granted))
    found = corrector.invert(bag(attacked))
    assert found.sentences == rerank.invert(bag(attacked)).sentences == found.steps[0]
    assert corrector.invert(np.zeros((0, len(LEXICON)), dtype=np.float32)).sentences == []


def test_the_corrector_reads_words_outside_its_vocabulary_as_unknown() -> None:
    words = Words(["b a", "a c", "a"], size=2)  # a 3, then b and c once each: b first
    assert words.words[4:] == ["a", "b"]
    assert words.ids("a c b", 10) == [4, 3, 5] and words.text([4, 3, 5, 2]) == "a b"


# ----------------------------------------------------------------------------- bag of words


def test_the_vocabulary_is_the_most_frequent_content_words() -> None:
    texts = ["the dog saw the cat", "a cat ran", "the cat and the dog slept"]
    # content counts: cat 3, dog 2, ran 1, saw 1, slept 1 (function words left out)
    assert vocabulary(texts, 3) == ["cat", "dog", "ran"]
    assert targets(["the dog ran"], ["cat", "dog", "ran"]).tolist() == [[0.0, 1.0, 1.0]]
    # per sentence content F1: {dog, ran} vs {dog}: P 1, R 1/2, F1 2/3; exact: 1
    assert mean_f1(["the dog ran", "a cat"], [["dog"], ["cat"]]) == pytest.approx(
        (2 / 3 + 1) / 2)


def test_bag_of_words_reads_the_words_of_a_vector_that_holds_them(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(12)]
    texts = [" ".join(sorted(rng.choice(words, size=3, replace=False))) for _ in range(600)]
    # a vector that is the multi-hot of its words, rotated: the words are linearly readable
    rotation = np.linalg.qr(rng.standard_normal((12, 12)))[0]

    def embed(batch: list[str]) -> np.ndarray:
        return (targets(batch, words) @ rotation).astype(np.float32)

    attack = BagOfWords(words=12, epochs=300, held_out=0.2, seed=1)
    attack.fit(AttackInputs(texts=texts[:500], vectors=embed(texts[:500]), seed=1,
                            workdir=tmp_path))
    found = attack.invert(embed(texts[500:]))
    assert found.sentences is None
    assert mean_f1(texts[500:], found.words) > 0.95


# ---------------------------------------------------------------------------------- align


def test_the_prior_is_the_constant_with_the_best_mean_content_f1_on_the_leaked_text(
        tmp_path: Path) -> None:
    """By hand, 13a content tokens: "tom ran." x3, "mary ran." x2, "tom sat." x1. Repeated
    sentences "tom ran." (mean F1 (3 x 1 + 2 x 0.5 + 0.5) / 6 = 0.75) and "mary ran."
    ((3 x 0.5 + 2 x 1) / 6); frequent words ran (5), tom (4), mary (2), sat (1): "ran" (F1 2/3
    against each of the 5 sentences holding it: 5 x 2/3 / 6) and "ran tom" (0.75, as "tom
    ran."). The first of the best, "tom ran.", is output for every vector."""
    from harness_plugins.attacks.prior import Prior, candidates, mean_f1

    texts = ["tom ran."] * 3 + ["mary ran."] * 2 + ["tom sat."]
    assert candidates(texts, sentences=5, words=2) == ["tom ran.", "mary ran.", "ran",
                                                        "ran tom"]
    assert mean_f1(texts, "tom ran.") == pytest.approx(0.75)
    assert mean_f1(texts, "mary ran.") == pytest.approx((2 + 3 * 0.5) / 6)
    assert mean_f1(texts, "ran") == pytest.approx(5 * (2 / 3) / 6)
    assert mean_f1(texts, "ran tom") == pytest.approx(0.75)
    attack = Prior(sentences=5, words=2)
    attack.fit(inputs(texts, tmp_path))
    found = attack.invert(np.zeros((4, 3), dtype=np.float32))
    assert found.sentences == ["tom ran."] * 4 and found.words is None


def test_ridge_leave_one_out_equals_refitting_without_each_pair() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((12, 5)), rng.standard_normal((12, 3))
    penalties = np.array([0.01, 1.0, 100.0])
    chosen, errors = ridge_loo(x, y, penalties)
    scale = float(np.mean(np.linalg.svd(x - x.mean(axis=0), compute_uv=False) ** 2))
    for penalty, error in zip(penalties * scale, errors):
        brute = 0.0
        for i in range(len(x)):
            keep = np.arange(len(x)) != i
            x_mean, weights, y_mean = ridge(x[keep], y[keep], penalty)
            brute += float(np.sum((y[i] - ((x[i] - x_mean) @ weights + y_mean)) ** 2))
        assert error == pytest.approx(brute, rel=1e-9)
    assert chosen == pytest.approx(penalties[int(np.argmin(errors))] * scale)


def test_ridge_solves_the_penalised_normal_equations() -> None:
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((20, 4)), rng.standard_normal((20, 2))
    x_mean, weights, y_mean = ridge(x, y, 0.5)
    xc, yc = x - x.mean(axis=0), y - y.mean(axis=0)
    expected = np.linalg.solve(xc.T @ xc + 0.5 * np.eye(4), xc.T @ yc)
    np.testing.assert_allclose(weights, expected, rtol=1e-10)
    np.testing.assert_allclose(y_mean, y.mean(axis=0))


def test_align_maps_an_affinely_related_space_and_reads_it_with_the_surrogate(
        tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    victim = rng.standard_normal((40, 6))
    a, b = rng.standard_normal((6, 4)), rng.standard_normal(4)
    surrogate = victim @ a + b
    received = []

    def surrogate_decode(vectors: np.ndarray, k: int) -> list[list[str]]:
        received.append(vectors)
        return [["decoded"]] * len(vectors)

    attack = Align(pairs=30)
    attack.fit(AttackInputs(texts=["t"] * 30, vectors=victim[:30].astype(np.float32),
                            seed=1, workdir=tmp_path,
                            surrogate_vectors=surrogate[:30].astype(np.float32),
                            surrogate_decode=surrogate_decode))
    found = attack.invert(victim[30:].astype(np.float32))
    assert found.sentences == ["decoded"] * 10
    np.testing.assert_allclose(received[0], surrogate[30:], atol=1e-2)
    assert attack.threat.leaked == 30 and attack.label == "align-30"


@pytest.mark.parametrize("noisy", [False, True])
def test_oracle_ranks_a_canarys_true_candidate_first(noisy: bool, tmp_path: Path) -> None:
    """As a ranker (`harness.protocols.Ranker`), the oracle scores each vector's candidates:
    under a deterministic store the true candidate's query is the stored vector (cosine 1,
    every other below), so it ranks first and the exposure is log2 M; under noise of sd 0.3
    on 32-d N(0, 1) vectors, ranked by the likelihood of 8 queries' mean, it ranks first for
    every one of 12 canaries of 16 candidates (the nearest other candidate is about 8 sd
    away)."""
    from harness.analyses.privacy.exposure import exposure, rank
    from harness.protocols import Ranker, ranking_problem
    from harness_plugins.attacks.oracle import OracleRanking

    rng, dim, sd = np.random.default_rng(0), 32, 0.3
    texts = [f"t{i}" for i in range(400)]
    table = dict(zip(texts, rng.standard_normal((len(texts), dim)), strict=True))
    fresh = np.random.default_rng(1)

    def query(asked):
        clean = np.stack([table[t] for t in asked])
        return (clean + (fresh.standard_normal(clean.shape) * sd if noisy else 0)
                ).astype(np.float32)

    attack = OracleRanking(corpus=200, repeats=8)
    assert isinstance(attack, Ranker)
    attack.fit(inputs([], tmp_path, public=texts[:200], query=query))
    candidates = [[texts[200 + 16 * c + j] for j in range(16)] for c in range(12)]
    stored = query([found[0] for found in candidates])
    scores = attack.likelihood(stored, candidates)
    assert ranking_problem(scores, candidates) is None
    ranks = [rank([-v for v in row]) for row in scores]
    assert ranks == [1.0] * len(candidates)
    assert exposure(ranks[0], 16) == 4.0
    if not noisy:
        assert [row[0] for row in scores] == pytest.approx([1.0] * len(candidates))


def test_a_rankers_answer_is_checked() -> None:
    from harness.protocols import ranking_problem

    asked = [["a", "b"], ["c", "d", "e"]]
    assert ranking_problem([[0.1, 0.2], [1.0, 2.0, 3.0]], asked) is None
    assert ranking_problem([[0.1, 0.2]], asked) == ("likelihood returned 1 score lists for 2 "
                                                    "vectors")
    assert ranking_problem([[0.1, 0.2], [1.0, 2.0]], asked) == (
        "likelihood returned 2 scores for the 3 candidates of vector 1")
    assert ranking_problem([[0.1, float("nan")], [1.0, 2.0, 3.0]], asked) == (
        "likelihood returned scores for vector 0 that are not finite numbers")
    # numpy rows and scalars are numbers too
    assert ranking_problem([np.array([0.1, 0.2], dtype=np.float32),
                            [np.float32(1.0), np.float64(2.0), 3]], asked) is None
    assert ranking_problem([np.array([0.1]), [1.0, 2.0, 3.0]], asked) == (
        "likelihood returned 1 scores for the 2 candidates of vector 0")
    assert ranking_problem("ab", asked) == "likelihood returned str score lists for 2 vectors"


def test_the_canaries_exposure_is_the_strongest_rankers() -> None:
    """Every ranker's mean exposure is kept; the entity's is the highest (the first among
    equals), with that ranker's own interval and name."""
    from harness.analyses.privacy.canary_recovery import entity_recovery

    found = entity_recovery(4, 1, 2, {"decoder": [1.0, 2.0, 0.0, 1.0],
                                      "oracle": [5.0, 5.0, 3.0, 5.0]}, 32, resamples=200)
    assert found.ranker == "oracle" and found.exposure == 4.5
    assert found.exposure_ci95 == found.rankers["oracle"].exposure_ci95
    assert found.rankers["decoder"].exposure == 1.0
    low, high = found.exposure_ci95
    assert low is not None and high is not None and 3.0 <= low <= 4.5 <= high <= 5.0
    tied = entity_recovery(2, 0, 0, {"decoder": [2.0, 2.0], "oracle": [2.0, 2.0]}, 8)
    assert tied.ranker == "decoder"


# ------------------------------------------------------------------- in the privacy analysis

RUN_SPEC = """\
name: attacked
seed: 1
device: cpu
corpus:
  train: {generate: quickstart, sentences: 600}
  test: {generate: quickstart, sentences: 60, seed: 2}
  normalise: {lowercase: true, digits: zero}
vocab: {bpe_size: 200, dim: 64, epochs: 2}
encoders: [avg, gem, {name: random-gaussian, dim: 64}]
decoders: [{name: mos-lstm, hidden: 32, epochs: 2, standardise: true}]
metrics: [id, token-f1, token-f1:content, bleu]
privacy:
  defences:
    - rotation
    - {name: gaussian, levels: [1000]}
  canaries: 0
  attacks: [decoder, {name: rerank, candidates: 3}, nearest, bag-of-words, {name: align, pairs: 20},
            {name: align, pairs: 50},
            {name: corrector, steps: 2, candidates: 2, pairs: 200, epochs: 2, hidden: 32}, prior,
            {name: oracle, corpus: 300, repeats: 3}]
analyses: [privacy]
"""
LABELS = {"decoder", "rerank", "nearest", "bag-of-words", "align-20", "align-50", "corrector",
          "prior", "oracle"}


@pytest.fixture(scope="module")
def attacked_run(tmp_path_factory: pytest.TempPathFactory):
    """The run's directory and its privacy results."""
    from harness.runner import run_spec
    from harness.spec import load_spec
    from harness.util.cache import Cache

    folder = tmp_path_factory.mktemp("attacked")
    (folder / "spec.yaml").write_text(RUN_SPEC, encoding="utf-8")
    spec = load_spec(folder / "spec.yaml", registry=load_registry())
    return folder / "run", run_spec(spec, folder / "run", cache=Cache(folder / "cache")).privacy


@pytest.fixture(scope="module")
def attacked(attacked_run):
    return attacked_run[1]


def test_every_attacks_output_is_in_the_run_directory(attacked_run) -> None:
    """attacks/ENCODER/PART/LABEL.jsonl: one line per test sentence, the reference and what
    the attack read back, at every point and on the floor's vectors."""
    run, privacy = attacked_run
    studied = ["clean", "rotation@0", "gaussian@0"]
    parts = {"avg": studied, "gem": studied, "random-gaussian": ["floor"]}  # a control
    for encoder, found in parts.items():
        for part in found:
            for label in LABELS:
                path = run / "attacks" / encoder / part / f"{label}.jsonl"
                lines = [json.loads(line) for line in path.read_text().splitlines()]
                assert len(lines) == 60 and {"reference", "hypothesis"} <= set(lines[0]), path
    prior = run / "attacks" / "avg" / "clean" / "prior.jsonl"
    assert len({json.loads(line)["hypothesis"] for line in prior.read_text().splitlines()}) == 1


def test_every_point_carries_every_attack_and_the_strongest(attacked) -> None:
    for points in attacked.points.values():
        assert [(p.defence, p.level) for p in points] == [("", None), ("rotation", None),
                                                          ("gaussian", 1000.0)]
        for point in points:
            assert set(point.attacks) == LABELS
            values = {label: a.leakage["token-f1:content"].value
                      for label, a in point.attacks.items()}
            assert point.strongest == max(values, key=values.get)
            # words only: scored on the content measure alone; sentences: on every text metric
            assert set(point.attacks["bag-of-words"].leakage) == {"token-f1:content"}
            assert set(point.attacks["nearest"].leakage) == {"id", "token-f1",
                                                             "token-f1:content", "bleu"}
            assert point.attacks["nearest"].threat == ("no leaked pairs, black-box queries, a "
                                                       "public corpus")
            # the iterative attack's gain per step: steps 0, 1, 2, the last its own score
            steps = point.attacks["corrector"].steps
            assert len(steps) == 3 and steps[-1] == point.attacks["corrector"].leakage[
                "token-f1:content"]
            assert all(a.steps is None for label, a in point.attacks.items()
                       if label != "corrector")
            # the prior reads no vector: one constant output, the same score everywhere
            prior = point.attacks["prior"].leakage["token-f1:content"].value
            assert prior == attacked.floor_attacks["prior"].leakage["token-f1:content"].value


def test_two_verdicts_each_with_its_strongest_attack(attacked_run) -> None:
    """Word leakage: the strongest on token-f1:content of every attack; text recovery: the
    strongest on BLEU (the spec scores it) of those that write sentences, never bag-of-words.
    At matched utility each verdict names its attack and that attack's score on the clean
    vectors; the report's tables say which attack and which measure."""
    run, privacy = attacked_run
    assert (privacy.compare_on, privacy.text_on) == ("token-f1:content", "bleu")
    for points in privacy.points.values():
        for point in points:
            writers = {label: a.leakage["bleu"].value for label, a in point.attacks.items()
                       if a.sentences}
            assert "bag-of-words" not in writers
            assert point.strongest_text == max(writers, key=writers.get)
    for encoder, by_defence in privacy.matched_text.items():
        clean = privacy.points[encoder][0]
        for found in by_defence.values():
            if found.attack is not None:
                assert found.clean == clean.attacks[found.attack].leakage["bleu"]
    for encoder, by_defence in privacy.matched.items():
        clean = privacy.points[encoder][0]
        for found in by_defence.values():
            if found.attack is not None:
                assert found.clean == clean.attacks[found.attack].leakage["token-f1:content"]
    report = (run / "report.md").read_text(encoding="utf-8")
    assert ("| encoder | defence | level | utility [95% interval] | strongest attack | "
            "token-f1:content of the attack | token-f1:content of the attack, clean vectors |"
            ) in report
    assert ("| encoder | defence | level | utility [95% interval] | strongest attack | bleu of "
            "the attack | bleu of the attack, clean vectors | id of the attack |") in report
    assert "Word leakage at 95% of the clean utility" in report
    assert "Text recovery at 95% of the clean utility" in report


def test_a_rotation_leaks_within_the_clean_interval_under_the_strongest_attack(attacked) -> None:
    for points in attacked.points.values():
        clean, rotated = points[0], points[1]
        strongest = clean.attacks[clean.strongest].leakage["token-f1:content"]
        found = rotated.attacks[rotated.strongest].leakage["token-f1:content"]
        low, high = strongest.ci95
        assert low <= found.value <= high, (clean.strongest, rotated.strongest)


def test_noise_at_a_thousand_spreads_is_at_the_floor_for_every_attack(attacked) -> None:
    """Gaussian noise at 1,000 x each dimension's spread leaves nothing to read: every attack
    reads as much back as from the floor encoder's vectors, which carry no information (the
    two 95% intervals over the test sentences overlap)."""
    floor = attacked.floor_attacks
    assert set(floor) == LABELS
    for points in attacked.points.values():
        noisy = points[2]
        for label in LABELS:
            found = noisy.attacks[label].leakage["token-f1:content"]
            at_floor = floor[label].leakage["token-f1:content"]
            assert found.ci95[0] <= at_floor.ci95[1] and at_floor.ci95[0] <= found.ci95[1], label


def test_the_leaked_pairs_figure_follows_align_through_k(attacked) -> None:
    """ALGEN's few-shot curve: align's score on each encoder's clean vectors at k = 20 and 50,
    with the floor encoder's dashed beside it."""
    from harness.analyses.privacy.report import (
        LEAKED_FIGURE,
        leaked_pairs_curves,
        leaked_pairs_figure,
    )

    panels = leaked_pairs_curves(attacked)
    assert set(panels) == set(attacked.points)
    for encoder, lines in panels.items():
        assert set(lines) == {"align", "align (floor)"}
        clean = attacked.points[encoder][0].attacks
        assert [(k, value) for k, value, *_ in lines["align"]] == [
            (20.0, clean["align-20"].leakage["token-f1:content"].value),
            (50.0, clean["align-50"].leakage["token-f1:content"].value)]
        assert [k for k, *_ in lines["align (floor)"]] == [20.0, 50.0]
    assert leaked_pairs_figure(attacked)[LEAKED_FIGURE].startswith(b"\x89PNG")
