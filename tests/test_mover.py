"""Tests of `mover` against a plain, one-pair-at-a-time MoverScore written here from the release.

The reference below follows the Vec2Sent release's `word_mover_score` step by step: embed the
reference and the hypothesis separately (no batching, no padding), normalise every layer,
min/mean/max over the last 5 layers, stack both token sets, renormalise, build the full
squared-distance matrix over all tokens, put the reference's mass on its rows and the
hypothesis' on its columns, and solve the transport problem as a linear programme with scipy
(not POT, which the metric uses). Tests that load the backbone are marked slow.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import torch
from scipy.optimize import linprog
from transformers import AutoModel, AutoTokenizer

from harness.errors import DataError
from harness.protocols import BuildContext, Metric
from harness.synthetic import generate_sentences
from harness.testing import DEFAULT_SENTENCES, check_metric
from harness_plugins.metrics import MoverOptions, register_metrics
from harness_plugins.metrics.mover import (
    MoverScoreMetric,
    idf_weights,
    resolve_backbone,
    transport_distance,
)


@pytest.fixture(scope="module")
def metric() -> MoverScoreMetric:
    return MoverScoreMetric("minilm", batch_size=32)


@pytest.fixture(scope="module")
def backbone():
    path = resolve_backbone("minilm")
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).eval()
    return tokenizer, model


def plain_embedding(tokenizer, model, sentence: str, layers: int = 5) -> np.ndarray:
    tokens = ["[CLS]", *tokenizer.tokenize(sentence), "[SEP]"]
    ids = torch.tensor([tokenizer.convert_tokens_to_ids(tokens)])
    with torch.no_grad():
        hidden = model(ids, token_type_ids=torch.zeros_like(ids),
                       attention_mask=torch.ones_like(ids), output_hidden_states=True).hidden_states
    stacked = torch.stack(hidden)
    stacked = stacked / torch.norm(stacked, dim=-1).unsqueeze(-1)
    last = stacked[-layers:]
    token_vectors = torch.cat([torch.min(last, 0)[0], last.mean(0), torch.max(last, 0)[0]], -1)
    return token_vectors[0].double().numpy()


def linprog_emd(first: np.ndarray, second: np.ndarray, cost: np.ndarray) -> float:
    size = len(first)
    rows = np.kron(np.eye(size), np.ones(size))      # sum_j F_ij = first_i
    columns = np.kron(np.ones(size), np.eye(size))   # sum_i F_ij = second_j
    result = linprog(cost.ravel(), A_eq=np.vstack([rows, columns]),
                     b_eq=np.concatenate([first, second]), bounds=(0, None), method="highs")
    assert result.status == 0, result.message
    return float(result.fun)


def plain_mover(tokenizer, model, reference: str, hypothesis: str, *, squared: bool = True,
                weights: tuple[list[float], list[float]] | None = None) -> float:
    ref = plain_embedding(tokenizer, model, reference)
    hyp = plain_embedding(tokenizer, model, hypothesis)
    raw = np.concatenate([ref, hyp])
    raw = raw / (np.linalg.norm(raw, axis=-1, keepdims=True) + 1e-6)
    cost = ((raw[:, None, :] - raw[None, :, :]) ** 2).sum(-1)
    if not squared:
        cost = np.sqrt(cost)
    ref_w, hyp_w = weights or ([1.0] * len(ref), [1.0] * len(hyp))
    first = np.zeros(len(raw))
    second = np.zeros(len(raw))
    first[:len(ref)] = np.array(ref_w) / sum(ref_w)
    second[len(ref):] = np.array(hyp_w) / sum(hyp_w)
    return 1.0 - linprog_emd(first, second, cost)


def pairs(count: int, seed: int) -> tuple[list[str], list[str]]:
    """Synthetic references and hypotheses: identical, shuffled, shortened, unrelated, empty."""
    rng = random.Random(seed)
    references = generate_sentences("quickstart", count, seed)
    hypotheses = []
    for i, sentence in enumerate(references):
        words = sentence.split()
        kind = i % 6
        if kind == 0:
            hypotheses.append(sentence)
        elif kind == 1:
            rng.shuffle(words)
            hypotheses.append(" ".join(words))
        elif kind == 2:
            hypotheses.append(" ".join(words[:-2] or words))
        elif kind == 3:
            hypotheses.append(references[(i + 7) % count])
        elif kind == 4:
            hypotheses.append(sentence.lower().replace(" the ", " a "))
        else:
            hypotheses.append("" if i % 12 == 5 else " ".join(reversed(words)))
    return references, hypotheses


@pytest.mark.slow
def test_mover_equals_the_plain_per_pair_reference_on_210_pairs(metric, backbone):
    references, hypotheses = pairs(210, seed=11)
    ours = metric.sentence_statistics(references, hypotheses)[:, 0]
    plain = np.array([plain_mover(*backbone, r, h) for r, h in zip(references, hypotheses)])
    assert np.abs(ours - plain).max() < 1e-3
    corpus = float(metric.corpus_score(metric.sentence_statistics(references, hypotheses).sum(0),
                                       len(references)))
    assert corpus == pytest.approx(100 * plain.mean(), abs=1e-3)
    # the pairs are varied: identical ones score 1, the rest spread out
    assert ours[::6] == pytest.approx(1.0, abs=1e-6)
    assert ours.std() > 0.1


@pytest.mark.slow
def test_euclidean_distance_equals_the_plain_reference(backbone):
    metric = MoverScoreMetric("minilm", distance="euclidean")
    references, hypotheses = pairs(12, seed=3)
    ours = metric.sentence_statistics(references, hypotheses)[:, 0]
    plain = [plain_mover(*backbone, r, h, squared=False) for r, h in zip(references, hypotheses)]
    assert ours == pytest.approx(plain, abs=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("idf", ["references", "moverscore"])
def test_idf_weights_equal_the_plain_reference(backbone, idf: str):
    """`references`: both sides weighted by the references' idf; `moverscore`: each side by
    its own sentences' idf (MoverScore's word_mover_score(refs, hyps, get_idf_dict(refs),
    get_idf_dict(hyps)))."""
    metric = MoverScoreMetric("minilm", idf=idf)
    references, hypotheses = pairs(12, seed=5)
    ours = metric.sentence_statistics(references, hypotheses)[:, 0]
    tokenizer = backbone[0]

    def idf_over(corpus: list[str]):
        ids = [tokenizer.encode(sentence) for sentence in corpus]
        frequency = {t: sum(t in set(doc) for doc in ids) for doc in ids for t in doc}
        return lambda token: math.log((len(ids) + 1) / (frequency.get(token, 0) + 1))

    reference_idf = idf_over(references)
    hypothesis_idf = idf_over(hypotheses) if idf == "moverscore" else reference_idf
    for k, (reference, hypothesis) in enumerate(zip(references, hypotheses)):
        ref_w = [reference_idf(t) for t in tokenizer.encode(reference)]
        hyp_w = [hypothesis_idf(t) for t in tokenizer.encode(hypothesis)]
        if sum(hyp_w) == 0:  # an empty hypothesis: only [CLS] and [SEP], both idf 0
            hyp_w = [1.0] * len(hyp_w)
        expected = plain_mover(*backbone, reference, hypothesis, weights=(ref_w, hyp_w))
        assert ours[k] == pytest.approx(expected, abs=1e-3)


def test_idf_weights_hand_computed():
    idf, unseen = idf_weights([[101, 5, 6, 102], [101, 5, 5, 102], [101, 7, 102]])
    # M = 3 documents: df(101) = 3 -> log(4/4) = 0; df(5) = 2 -> log(4/3); df(6) = 1 -> log(2)
    assert idf[101] == 0.0 and idf[102] == 0.0
    assert idf[5] == pytest.approx(math.log(4 / 3))
    assert idf[6] == pytest.approx(math.log(2)) and idf[7] == pytest.approx(math.log(2))
    assert unseen == pytest.approx(math.log(4))


def test_transport_distance_hand_computed():
    # Two unit vectors vs one: all mass of each travels to the single target.
    ref = np.array([[1.0, 0.0], [0.0, 1.0]])
    hyp = np.array([[1.0, 0.0]])
    # squared distances 0 and 2, mass 1/2 each -> 1.0; Euclidean: sqrt(2)/2
    assert transport_distance(ref, hyp, np.ones(2), np.ones(1)) == pytest.approx(1.0)
    assert transport_distance(ref, hyp, np.ones(2), np.ones(1), "euclidean") == pytest.approx(
        math.sqrt(2) / 2)
    # weights move the mass: 3/4 on the far vector
    assert transport_distance(ref, hyp, np.array([1.0, 3.0]), np.ones(1)) == pytest.approx(1.5)


@pytest.mark.slow
def test_identical_sentences_score_100_and_statistics_are_pairwise(metric):
    sentences = list(DEFAULT_SENTENCES)
    stats = metric.sentence_statistics(sentences, sentences)
    assert stats.shape == (len(sentences), 1)
    assert float(metric.corpus_score(stats.sum(0), len(stats))) == pytest.approx(100.0, abs=1e-6)


@pytest.mark.slow
def test_mover_conforms_to_the_metric_protocol(metric):
    assert isinstance(metric, Metric)
    # 1 - squared distance of unit vectors lies in [-3, 1]: the release's MoverScore is not
    # bounded below by 0, and a small backbone scores unrelated sentences below it.
    check_metric(metric, score_range=(-300.0, 100.0))


@pytest.mark.slow
def test_batch_size_does_not_change_scores(metric):
    references, hypotheses = pairs(18, seed=2)
    small = MoverScoreMetric("minilm", batch_size=1)
    assert small.sentence_statistics(references, hypotheses) == pytest.approx(
        metric.sentence_statistics(references, hypotheses), abs=1e-5)


@pytest.mark.slow
def test_empty_input_gives_no_rows(metric):
    assert metric.sentence_statistics([], []).shape == (0, 1)
    with pytest.raises(ValueError):
        metric.sentence_statistics(["a"], [])


@pytest.mark.slow
def test_factory_builds_from_options_and_options_validate():
    calls = {}
    register_metrics(lambda name, factory, **kw: calls.setdefault(name, (factory, kw)))
    factory, kwargs = calls["mover"]
    assert kwargs["options"] is MoverOptions
    assert kwargs["availability"]() is None
    built = factory(MoverOptions(layers=4, distance="euclidean"), BuildContext())
    assert (built.layers, built.distance, built.idf) == (4, "euclidean", "uniform")
    with pytest.raises(ValueError):
        MoverOptions(idf="corpus")
    with pytest.raises(ValueError):
        MoverOptions(layers=0)


@pytest.fixture
def offline_cache(tmp_path, monkeypatch):
    """An empty local Hugging Face cache, offline (HF_HUB_OFFLINE=1); huggingface_hub reads its
    settings at import, so its constants are pointed there too."""
    import huggingface_hub.constants as constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    return tmp_path


def test_a_backbone_missing_from_the_cache_is_unavailable_unless_downloads_are_allowed(
        offline_cache):
    calls = {}
    register_metrics(lambda name, factory, **kw: calls.setdefault(name, (factory, kw)))
    availability = calls["mover"][1]["availability"]
    problem = availability(options=MoverOptions(model="bert-base-uncased"))
    assert "'bert-base-uncased'" in problem and "`allow_download: true`" in problem
    assert availability(options=MoverOptions(model="bert-base-uncased",
                                             allow_download=True)) is None
    assert availability(options=MoverOptions()) is None  # the bundled default needs nothing


@pytest.mark.slow
def test_missing_backbone_is_a_one_line_data_error(offline_cache):
    with pytest.raises(DataError) as refused:
        MoverScoreMetric("no-such-org/no-such-bert-model")
    message = str(refused.value)
    assert message.startswith("mover: cannot load backbone 'no-such-org/no-such-bert-model'")
    assert "set `allow_download: true` in the mover options" in message and "\n" not in message
    with pytest.raises(ValueError, match="hidden states"):
        MoverScoreMetric("minilm", layers=8)
