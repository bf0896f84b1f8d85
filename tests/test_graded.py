"""The graded diagnostics `info` and `retrieval`: hand-computed values on stand-in decoders,
then through the score stage on a tiny run (the unconditional model trained once, `chance`
and intervals in results)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.errors import DataError
from harness.protocols import DecoderLikelihood, UnconditionalLikelihood
from harness.registry.loader import load_registry
from harness.runner import run_spec
from harness.spec import load_spec
from harness.util.cache import Cache
from harness_plugins.metrics.graded import InformationMetric, RetrievalMetric, distractor_sets


def _likelihood(table: np.ndarray) -> DecoderLikelihood:
    """A decoder whose NLL of sentence j given vector i is table[i, j]."""
    def nll(vector_rows: np.ndarray, sentence_rows: np.ndarray) -> np.ndarray:
        return table[np.asarray(vector_rows), np.asarray(sentence_rows)]

    return DecoderLikelihood(name="fake", encoder="fake", sentences=len(table), nll=nll)


def test_distractors_are_other_sentences_drawn_once_per_seed() -> None:
    sets = distractor_sets(50, 10, seed=4)
    assert sets.shape == (50, 9)
    for i, row in enumerate(sets):
        assert i not in row and len(set(row.tolist())) == 9 and row.min() >= 0 and row.max() < 50
    assert np.array_equal(sets, distractor_sets(50, 10, seed=4))
    assert not np.array_equal(sets, distractor_sets(50, 10, seed=5))
    # With k = n every other sentence is a distractor.
    assert sorted(distractor_sets(4, 4, seed=0)[2].tolist()) == [0, 1, 3]


def test_a_perfect_decoder_retrieves_every_sentence() -> None:
    n = 30
    table = np.full((n, n), 40.0)
    np.fill_diagonal(table, 3.0)  # its own sentence is the likeliest given each vector
    metric = RetrievalMetric(k=10, seed=1)
    stats = metric.sentence_statistics(["s"] * n, ["h"] * n, decoder=_likelihood(table))
    assert stats.shape == (n, 1) and stats.sum() == n
    assert float(metric.corpus_score(stats.sum(axis=0), n)) == 100.0
    assert metric.chance == 10.0


def test_a_decoder_that_ignores_its_vector_scores_chance() -> None:
    # NLL depends on the sentence only: with k = n every vector picks the one likeliest
    # sentence, so exactly one of the n is retrieved, 100/n = the chance level 100/k.
    n = 5
    prior = np.array([7.0, 3.0, 9.0, 4.0, 8.0])
    table = np.tile(prior, (n, 1))
    metric = RetrievalMetric(k=n, seed=2)
    stats = metric.sentence_statistics(["s"] * n, ["h"] * n, decoder=_likelihood(table))
    assert stats[:, 0].tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]
    assert float(metric.corpus_score(stats.sum(axis=0), n)) == pytest.approx(metric.chance)


def test_retrieval_with_two_candidates_by_hand() -> None:
    # k = 2: vector i is compared with one distractor d_i; a tie is a miss.
    n = 4
    distractor = distractor_sets(n, 2, seed=7)[:, 0]
    table = np.full((n, n), 5.0)
    own = np.array([1.0, 5.0, 9.0, 2.0])  # sentence 1 ties its distractor, 2 loses
    table[np.arange(n), np.arange(n)] = own
    expected = [own[i] < table[i, distractor[i]] for i in range(n)]
    assert expected == [True, False, False, True]
    stats = RetrievalMetric(k=2, seed=7).sentence_statistics(
        ["s"] * n, ["h"] * n, decoder=_likelihood(table))
    assert stats[:, 0].tolist() == [float(e) for e in expected]


def test_retrieval_refuses_more_candidates_than_sentences() -> None:
    with pytest.raises(DataError, match="set the metric's option k to at most 3"):
        RetrievalMetric(k=4).sentence_statistics(["a", "b", "c"], ["a", "b", "c"],
                                                 decoder=_likelihood(np.zeros((3, 3))))


def test_info_is_the_bits_saved_over_the_unconditional_model() -> None:
    # Sentence 0: P = 1/2 given its vector, 1/8 unconditionally: log2(8) - log2(2) = 2 bits.
    # Sentence 1: 1/4 both ways: 0 bits. Sentence 2: 1/16 given the vector, 1/4 without: -2.
    conditional = [math.log(2), math.log(4), math.log(16)]
    unconditional = UnconditionalLikelihood(
        nll=np.array([math.log(8), math.log(4), math.log(4)]), tokens=np.array([3, 2, 4]))
    metric = InformationMetric()
    stats = metric.sentence_statistics(["a", "b", "c"], ["x", "y", "z"], nll=conditional,
                                       tokens=[3, 2, 4], unconditional=unconditional)
    assert stats[:, 0] == pytest.approx([2.0, 0.0, -2.0])
    assert float(metric.corpus_score(stats.sum(axis=0), 3)) == pytest.approx(0.0)
    with pytest.raises(DataError, match="other subwords"):
        metric.sentence_statistics(["a", "b", "c"], ["x", "y", "z"], nll=conditional,
                                   tokens=[3, 2, 5], unconditional=unconditional)


TINY = """
name: graded
seed: 3
device: cpu
corpus:
  train: {generate: quickstart, sentences: 600}
  test: {generate: quickstart, sentences: 40, seed: 9}
  normalise: {lowercase: true, digits: zero}
vocab: {bpe_size: 200, dim: 16, epochs: 2}
encoders: [avg, {name: random-gaussian, dim: 8}]
decoders: [{name: mos-lstm, hidden: 32, epochs: 2, batch_size: 32}]
generation: {beam: 2, max_len: 20}
metrics: [ppl, {name: retrieval, k: 8}, info]
"""


@pytest.fixture(scope="module")
def graded_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Cache]:
    root = tmp_path_factory.mktemp("graded")
    (root / "graded.yaml").write_text(TINY)
    spec = load_spec(root / "graded.yaml", registry=load_registry())
    cache = Cache(root / "cache")
    return run_spec(spec, root / "run", cache=cache).to_json(), cache


def test_the_run_reports_both_with_intervals_support_and_chance(graded_run: tuple[dict, Cache]
                                                                ) -> None:
    results, _ = graded_run
    for run in results["runs"]:
        retrieval, info = run["metrics"]["retrieval"], run["metrics"]["info"]
        assert retrieval["chance"] == pytest.approx(12.5)
        assert retrieval["interval"] == "clopper-pearson" and retrieval["support"] == 40
        assert 0 <= retrieval["ci95"][0] <= retrieval["value"] <= retrieval["ci95"][1] <= 100
        assert info["interval"] == "bootstrap" and info["support"] == 40
        assert info["ci95"][0] <= info["value"] <= info["ci95"][1]
        assert "chance" not in info


def test_info_agrees_with_ppl_and_the_unconditional_model_is_trained_once(
        graded_run: tuple[dict, Cache]) -> None:
    results, cache = graded_run
    trained = [d for d in (cache.root / "train").iterdir() if not d.name.endswith(".partial")]
    assert len(trained) == 3  # avg, random-gaussian, and one unconditional model
    nll = [d for d in (cache.root / "nll").iterdir() if not d.name.endswith(".partial")]
    (directory,) = nll
    rows = np.load(directory / "nll.npy")
    for run in results["runs"]:
        # info's mean bits and ppl share the conditional NLL: mean info * ln 2 equals the mean
        # unconditional NLL minus the conditional one, ppl = exp(sum NLL / sum tokens).
        conditional_total = math.log(run["metrics"]["ppl"]["value"]) * rows[:, 1].sum()
        expected = (rows[:, 0].sum() - conditional_total) / math.log(2) / len(rows)
        assert run["metrics"]["info"]["value"] == pytest.approx(expected, rel=1e-6)


def test_retrieval_by_pointwise_information_discounts_a_sentence_likely_anywhere() -> None:
    """Three sentences; sentence 2 is short and likely under any vector (NLL 2 everywhere,
    and 1 under the unconditional model). By raw NLL it beats the true sentence of vectors 0
    and 1; by NLL(y | x) - NLL_0(y) the true sentences win: 0 - 5 < 2 - 1 and so on."""
    from harness.protocols import UnconditionalLikelihood

    table = np.array([[3.0, 9.0, 2.0],    # vector 0: its own 3 (prior 5), sentence 2 at 2
                      [9.0, 4.0, 2.0],    # vector 1: its own 4 (prior 6)
                      [9.0, 9.0, 0.5]])   # vector 2: its own 0.5 (prior 1)
    prior = UnconditionalLikelihood(nll=np.array([5.0, 6.0, 1.0]), tokens=np.array([5, 6, 2]))
    raw = RetrievalMetric(k=3, seed=0)
    pmi = RetrievalMetric(k=3, seed=0, pointwise=True)
    by_nll = raw.sentence_statistics(["a", "b", "c"], ["", "", ""], decoder=_likelihood(table))
    by_pmi = pmi.sentence_statistics(["a", "b", "c"], ["", "", ""], decoder=_likelihood(table),
                                     unconditional=prior)
    # raw: vector 0 picks sentence 2 (2 < 3), vector 1 picks 2 (2 < 4), vector 2 its own
    assert by_nll[:, 0].tolist() == [0.0, 0.0, 1.0]
    # pmi: vector 0: [3-5, 9-6, 2-1] = [-2, 3, 1]; vector 1: [4, -2, 1]; vector 2: [4, 3, -0.5]
    assert by_pmi[:, 0].tolist() == [1.0, 1.0, 1.0]
    assert pmi.signature() == "k:3|distractors:seed-0|rank:pmi"
    assert raw.signature() == "k:3|distractors:seed-0"
    with pytest.raises(DataError, match="retrieval:pmi"):
        pmi.sentence_statistics(["a", "b", "c"], ["", "", ""], decoder=_likelihood(table))
