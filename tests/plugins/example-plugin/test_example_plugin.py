"""The example plugin's own tests: what a third-party plugin author writes.

They run the harness conformance kit on the plugin's components, with the package installed
(`pip install tests/plugins/example-plugin`). The harness's own suite does not collect this
folder; its integration test installs the package and runs this file as the author would.
"""

from __future__ import annotations

import importlib.metadata as md

import numpy as np
import pytest
import v2s_example_plugin as plugin

from harness.protocols import BuildContext, Options
from harness.testing import check_encoder, check_metric, check_registration


def test_registration() -> None:
    infos = check_registration(plugin, name="example")
    assert {(info.kind, info.name) for info in infos} == {
        ("encoder", "example-bow"), ("metric", "example-length")}


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
