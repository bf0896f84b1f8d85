"""The example plugin's own tests: what a third-party plugin author writes.

They run the harness conformance kit on the plugin's components, with the package installed
(`pip install tests/plugins/example-plugin`). The harness's own suite does not collect this
folder; its integration test installs the package and runs this folder as the author would.
The length-gap analysis and the parts it declares are tested in test_length_gap.py, the
attack `example-neighbours` in test_neighbours.py.
"""

from __future__ import annotations

import importlib.metadata as md
import math
from pathlib import Path

import numpy as np
import pytest
import v2s_example_plugin as plugin

from harness.protocols import BuildContext, Options
from harness.testing import (
    check_encoder,
    check_executor,
    check_metric,
    check_registration,
)

FIT_TEXT = ["The cat sat on the mat.", "A dog sat by the door.", "",
            "The dog barked at the cat.", "Birds sang in the morning.", "", "", "it rained"]
"""Fit text as a run passes it: blank lines separate documents (and are no documents)."""


def test_registration() -> None:
    infos = check_registration(plugin, name="example")
    assert {(info.kind, info.name) for info in infos} == {
        ("encoder", "example-bow"), ("encoder", "example-idf"), ("metric", "example-length"),
        ("executor", "example-processes"), ("analysis", "example-length-gap"),
        ("attack", "example-neighbours")}
    idf = {info.name: info for info in infos}["example-idf"]
    assert idf.trainable and idf.options is plugin.IdfOptions
    assert idf.status() == "ok"  # as `harness list` calls it, with options=None
    gap = {info.name: info for info in infos}["example-length-gap"]
    assert gap.parts is plugin.LENGTH_GAP_PARTS  # the analysis's parts: test_length_gap.py


def test_bow_encoder_conforms() -> None:
    options = plugin.BagOfWordsOptions()
    check_encoder(plugin.build_bow(options, BuildContext()))
    check_encoder(plugin.build_bow(plugin.BagOfWordsOptions(dim=7), BuildContext()))


def test_bow_encoder_values() -> None:
    encoder = plugin.build_bow(plugin.BagOfWordsOptions(dim=16), BuildContext())
    vectors = encoder.encode(["The cat", "the CAT", "", "cat the"])
    assert vectors.shape == (4, 16)
    np.testing.assert_allclose(np.linalg.norm(vectors[[0, 1, 3]], axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(vectors[0], vectors[1])  # lower-cased
    np.testing.assert_array_equal(vectors[0], vectors[3])  # a bag: order does not matter
    np.testing.assert_array_equal(vectors[2], 0.0)  # no tokens, no NaN


def test_bow_buckets_are_stable_across_processes() -> None:
    from v2s_example_plugin.bow import bucket

    # Fixed values: Python's hash() is salted per process (PYTHONHASHSEED), BLAKE2b is not, so
    # vectors cached by one run stay valid in the next.
    assert [bucket(token, 64) for token in ("the", "cat", "sat")] == [30, 51, 55]


def _fitted_idf(**options: object) -> object:
    encoder = plugin.build_idf(plugin.IdfOptions(**options), BuildContext())
    encoder.fit(FIT_TEXT)
    return encoder


def test_idf_encoder_conforms(tmp_path: Path) -> None:
    check_encoder(_fitted_idf())
    check_encoder(_fitted_idf(dim=7))
    stopwords = tmp_path / "stopwords.txt"
    stopwords.write_text("the\na\n", encoding="utf-8")
    check_encoder(_fitted_idf(stopwords=stopwords),
                  ["the cat", "THE", "", "an unseen zebra", "the dog sat", "a"])


def test_idf_weights_by_hand() -> None:
    from v2s_example_plugin.bow import bucket

    # three documents: the blank lines between them are skipped, not counted
    corpus = ["the cat sat", "", "the dog sat", "   ", "the cat ran ran"]
    words = ("the", "cat", "sat", "dog", "ran", "zebra")
    buckets = {word: bucket(word, 64) for word in words}
    assert len(set(buckets.values())) == len(words)  # no collisions: the values below hold
    encoder = plugin.build_idf(plugin.IdfOptions(dim=64), BuildContext())
    encoder.fit(corpus)
    assert encoder.documents == 3
    # idf = ln((1 + N) / (1 + df)) + 1 with N = 3; "ran" twice in one document still has df 1
    expected = {"the": 1.0, "cat": math.log(4 / 3) + 1, "sat": math.log(4 / 3) + 1,
                "dog": math.log(2) + 1, "ran": math.log(2) + 1, "zebra": math.log(4) + 1}
    for word, idf in expected.items():
        assert encoder.idf[buckets[word]] == pytest.approx(idf), word
    vector = encoder.encode(["dog dog the"])[0]
    weights = np.array([2 * expected["dog"], expected["the"]])
    np.testing.assert_allclose(vector[[buckets["dog"], buckets["the"]]],
                               weights / np.linalg.norm(weights), rtol=1e-6)
    assert np.count_nonzero(vector) == 2


def test_idf_unknown_and_empty_sentences_stay_finite(tmp_path: Path) -> None:
    stopwords = tmp_path / "stopwords.txt"
    stopwords.write_text("The\n\nof\n", encoding="utf-8")
    encoder = _fitted_idf(stopwords=stopwords)
    vectors = encoder.encode(["zebra quokka", "", "the of THE", "cat"])
    assert np.isfinite(vectors).all()
    assert np.linalg.norm(vectors[0]) == pytest.approx(1.0)  # never seen: largest idf, unit length
    np.testing.assert_array_equal(vectors[[1, 2]], 0.0)  # no tokens left after stopwords
    np.testing.assert_array_equal(encoder.encode(["the cat"]), encoder.encode(["cat"]))


def test_idf_fingerprint_follows_options_and_fitted_state(tmp_path: Path) -> None:
    stopwords = tmp_path / "stopwords.txt"
    stopwords.write_text("the\n", encoding="utf-8")
    fitted = _fitted_idf().fingerprint()
    assert fitted == _fitted_idf().fingerprint()
    assert fitted != _fitted_idf(dim=65).fingerprint()
    assert fitted != _fitted_idf(stopwords=stopwords).fingerprint()
    other = plugin.build_idf(plugin.IdfOptions(), BuildContext())
    other.fit(FIT_TEXT[:2])
    assert fitted != other.fingerprint()
    restored = plugin.build_idf(plugin.IdfOptions(), BuildContext())
    _fitted_idf().save(tmp_path / "state")
    restored.load(tmp_path / "state")
    assert restored.fingerprint() == fitted
    assert not list((tmp_path / "state").glob("*.pkl"))
    with pytest.raises(ValueError, match="dim"):
        plugin.build_idf(plugin.IdfOptions(dim=65), BuildContext()).load(tmp_path / "state")


def test_idf_availability_names_the_missing_stopwords_file(tmp_path: Path) -> None:
    missing = tmp_path / "stopwords.txt"
    reason = plugin.idf_availability(plugin.IdfOptions(stopwords=missing))
    assert reason is not None and "\n" not in reason
    assert str(missing) in reason and "stopwords" in reason
    assert plugin.idf_availability() is None
    assert plugin.idf_availability(plugin.IdfOptions()) is None
    missing.write_text("the\n", encoding="utf-8")
    assert plugin.idf_availability(plugin.IdfOptions(stopwords=missing)) is None
    missing.unlink()
    # what `harness validate` does with the spec's options
    (info,) = [i for i in check_registration(plugin, name="example") if i.name == "example-idf"]
    assert info.status(plugin.IdfOptions(stopwords=missing)) == f"unavailable: {reason}"


def test_length_metric_conforms() -> None:
    check_metric(plugin.build_length(Options(), BuildContext()))


def test_length_metric_values() -> None:
    metric = plugin.build_length(Options(), BuildContext())
    stats = metric.sentence_statistics(["a b c d", "a b", "x"], ["a b c d", "a b c d", ""])
    np.testing.assert_allclose(stats[:, 0], [1.0, 0.5, 0.0])
    assert float(metric.corpus_score(stats.sum(axis=0), 3)) == pytest.approx(50.0)


def test_entry_point_when_installed() -> None:
    distribution = md.distribution("v2s-example-plugin")
    (entry_point,) = [ep for ep in distribution.entry_points if ep.group == "harness"]
    assert entry_point.name == "example"
    assert entry_point.load() is plugin


def test_processes_executor_conforms(tmp_path: Path) -> None:
    """Its jobs run in worker processes and give the local executor's results."""
    check_executor(plugin.build_processes(plugin.ProcessesOptions(workers=2), BuildContext()),
                   tmp_path)

