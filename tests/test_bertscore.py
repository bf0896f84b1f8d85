"""Tests of `bertscore` against calling `bert_score.score` directly on the same pairs.

Tests that load the backbone are marked slow (a few seconds to load it on a shared CPU).
"""

from __future__ import annotations

import bert_score
import numpy as np
import pytest

from harness.errors import DataError
from harness.protocols import BuildContext, Metric
from harness.synthetic import generate_sentences
from harness.testing import check_metric
from harness_plugins.metrics import BertScoreOptions, register_metrics
from harness_plugins.metrics.bertscore import (
    BertScoreMetric,
    default_layers,
    local_model,
    packaged_baseline,
)
from harness_plugins.metrics.mover import resolve_backbone


def pairs(count: int = 24) -> tuple[list[str], list[str]]:
    references = generate_sentences("quickstart", count, 7)
    hypotheses = [(r if i % 4 == 0 else " ".join(reversed(r.split())) if i % 4 == 1
                   else references[(i + 5) % count] if i % 4 == 2 else r.split(" ", 1)[-1])
                  for i, r in enumerate(references)]
    return references, hypotheses


@pytest.fixture(scope="module")
def metric() -> BertScoreMetric:
    return BertScoreMetric("minilm")


@pytest.fixture(scope="module")
def direct() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    references, hypotheses = pairs()
    precision, recall, f1 = bert_score.score(hypotheses, references,
                                             model_type=resolve_backbone("minilm"), num_layers=5)
    return precision.numpy(), recall.numpy(), f1.numpy()


@pytest.mark.slow
def test_f1_equals_bert_score(metric, direct):
    references, hypotheses = pairs()
    stats = metric.sentence_statistics(references, hypotheses)
    assert stats.shape == (len(references), 1)
    assert stats[:, 0] == pytest.approx(direct[2], abs=1e-6)
    corpus = float(metric.corpus_score(stats.sum(axis=0), len(stats)))
    assert corpus == pytest.approx(100 * float(np.mean(direct[2])), abs=1e-4)
    assert stats[::4, 0] == pytest.approx(1.0, abs=1e-5)  # identical pairs


@pytest.mark.slow
@pytest.mark.parametrize("component, index", [("P", 0), ("R", 1)])
def test_precision_and_recall_equal_bert_score(metric, direct, component, index):
    references, hypotheses = pairs()
    metric.component = component
    try:
        stats = metric.sentence_statistics(references, hypotheses)
    finally:
        metric.component = "F"
    assert stats[:, 0] == pytest.approx(direct[index], abs=1e-6)


@pytest.mark.slow
def test_bertscore_conforms_to_the_metric_protocol(metric):
    assert isinstance(metric, Metric)
    check_metric(metric)


@pytest.mark.slow
def test_empty_sides_score_zero_as_bert_score_intends(metric):
    # bert-score sets P, R and F of a pair with an empty side to 0 (utils.greedy_cos_idf).
    stats = metric.sentence_statistics(["a cat sat .", "", "the dog ran"],
                                       ["", "a cat sat .", "the dog ran"])
    assert stats[:, 0] == pytest.approx([0.0, 0.0, 1.0], abs=1e-5)


def test_layers_and_local_models():
    assert default_layers("minilm") == 5
    assert default_layers("bert-base-uncased") == bert_score.utils.model2layers["bert-base-uncased"]
    with pytest.raises(DataError, match="num_layers"):
        default_layers("no-such-model")
    assert local_model("minilm") == resolve_backbone("minilm")


def test_a_backbone_missing_from_the_cache_is_one_line_before_any_work(tmp_path, monkeypatch):
    import huggingface_hub.constants as constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))  # an empty cache
    with pytest.raises(DataError) as refused:
        local_model("no-such-org/no-such-model")
    message = str(refused.value)
    assert message.startswith("bertscore: cannot find backbone 'no-such-org/no-such-model' in "
                              "the local Hugging Face cache and downloads are off")
    assert "set `allow_download: true` in the bertscore options" in message
    assert "\n" not in message
    with pytest.raises(DataError, match="bertscore: cannot find backbone 'bert-base-uncased'"):
        BertScoreMetric("bert-base-uncased")  # before the layer lookup or any model load
    calls = {}
    register_metrics(lambda name, factory, **kw: calls.setdefault(name, (factory, kw)))
    availability = calls["bertscore"][1]["availability"]
    problem = availability(options=BertScoreOptions(model="bert-base-uncased"))
    assert "'bert-base-uncased'" in problem and "`allow_download: true`" in problem
    assert availability(options=BertScoreOptions(model="bert-base-uncased",
                                                 allow_download=True)) is None


def test_rescaling_baselines_are_found_by_the_backbone_name() -> None:
    """bert-score would look under the local snapshot's path; the metric looks up the hub name,
    and says at build time when bert-score ships none."""
    path = packaged_baseline("bert-base-uncased", "en")
    assert path.name == "bert-base-uncased.tsv" and path.parent.name == "en" and path.is_file()
    with pytest.raises(DataError, match="no rescaling baseline for 'bert-base-uncased' in 'xx'"):
        packaged_baseline("bert-base-uncased", "xx")
    with pytest.raises(DataError, match="MiniLM"):
        packaged_baseline("minilm", "en")


@pytest.mark.slow
def test_refusals(metric):
    with pytest.raises(DataError, match="baseline"):
        BertScoreMetric("minilm", rescale_with_baseline=True)
    with pytest.raises(ValueError):
        BertScoreMetric("minilm", component="G")
    with pytest.raises(ValueError):
        metric.sentence_statistics(["a", "b"], ["a"])
    assert metric.sentence_statistics([], []).shape == (0, 1)


@pytest.mark.slow
def test_factory_builds_from_options():
    calls = {}
    register_metrics(lambda name, factory, **kw: calls.setdefault(name, (factory, kw)))
    factory, kwargs = calls["bertscore"]
    assert kwargs["options"] is BertScoreOptions and kwargs["availability"]() is None
    built = factory(BertScoreOptions(component="R", num_layers=3), BuildContext())
    assert (built.component, built.num_layers) == ("R", 3)
    with pytest.raises(ValueError):
        BertScoreOptions(component="F1")
