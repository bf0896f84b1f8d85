"""The InferSent, QuickThought and LASER adapters: registration, availability, the pickle opt-in,
and each architecture run on small random weights saved in the released layout.

No released weights are available offline; the architectures are checked for shape, pooling,
the mapping of every released key, and hand-computable cases.
"""

from __future__ import annotations

import math
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
import torch
from pydantic import ValidationError

from harness.errors import HarnessError
from harness.protocols import BuildContext
from harness.testing import check_encoder, check_registration
from harness_plugins.encoders import models
from harness_plugins.encoders.adapters.bpe import BytePairEncoder, read_codes, read_vocabulary
from harness_plugins.encoders.adapters.checkpoints import save_safetensors
from harness_plugins.encoders.adapters.common import WeightsError, file_identity
from harness_plugins.encoders.adapters.infersent import read_word_vectors
from harness_plugins.encoders.adapters.quickthought import (
    TensorFlowGRUCell,
    reverse_within_length,
)
from harness_plugins.encoders.adapters.text import word_tokenize
from harness_plugins.encoders.options import (
    InferSentOptions,
    LaserOptions,
    QuickThoughtOptions,
    SbertOptions,
    Sent2VecOptions,
)

ENV = ("HARNESS_INFERSENT_WEIGHTS", "HARNESS_INFERSENT_WORD_VECTORS",
       "HARNESS_QUICKTHOUGHT_WEIGHTS", "HARNESS_LASER_WEIGHTS")
SENTENCES = ["The cat sat.", "the cat , the cat sat on the mat .", "hello", "sat sat sat",
             "a dog barked at the cat ."]


@pytest.fixture(autouse=True)
def _no_weights_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def _random_like(shapes: dict[str, tuple[int, ...]], seed: int = 0) -> OrderedDict:
    generator = torch.Generator().manual_seed(seed)
    return OrderedDict((k, torch.randn(*s, generator=generator) * 0.5) for k, s in shapes.items())


# ------------------------------------------------------------------- registration, availability


def test_registration_and_actionable_unavailability() -> None:
    infos = {info.name: info for info in check_registration(models, name="harness-model-encoders")}
    assert set(infos) == {"sent2vec", "sbert", "infersent", "quickthought", "laser", "mpnet",
                          "minilm-l3-onnx", "e5-small-q4"}
    assert infos["sent2vec"].trainable
    expected = {"infersent": ("HARNESS_INFERSENT_WEIGHTS", "`weights:`", "infersent2.pkl",
                              "https://dl.fbaipublicfiles.com/infersent/"),
                "quickthought": ("HARNESS_QUICKTHOUGHT_WEIGHTS", "`weights:`", ".npz",
                                 "lajanugen/S2V"),
                "laser": ("HARNESS_LASER_WEIGHTS", "`weights:`", "bilstm.93langs.2018-12-26.pt",
                          "https://dl.fbaipublicfiles.com/laser/models/")}
    for name, parts in expected.items():
        status = infos[name].status()
        assert status.startswith("unavailable: ") and "\n" not in status
        for part in parts:
            assert part in status, (name, part, status)


def test_registration_imports_no_model_code() -> None:
    probe = ("import sys, harness_plugins.encoders.models as m; m.laser_availability(); "
             "m._sbert_availability(); print(sorted(k for k in ('torch', 'transformers', "
             "'sentence_transformers', 'safetensors') if k in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"


def test_environment_variable_to_a_missing_file_is_named(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HARNESS_LASER_WEIGHTS", str(tmp_path / "nowhere"))
    reason = models.laser_availability()
    assert reason is not None and "$HARNESS_LASER_WEIGHTS" in reason and "nowhere" in reason
    monkeypatch.setenv("HARNESS_LASER_WEIGHTS", str(tmp_path))
    reason = models.laser_availability()
    assert reason is not None and "bilstm.93langs.2018-12-26.pt" in reason


def test_building_without_weights_fails_with_the_reason() -> None:
    with pytest.raises(HarnessError, match="HARNESS_QUICKTHOUGHT_WEIGHTS"):
        models._build_quickthought(QuickThoughtOptions(), BuildContext())


def test_the_adapters_never_download(monkeypatch) -> None:
    """Missing released weights are refused with what to fetch and where to point the harness,
    before any work and without any network connection: the adapters read files only."""
    import socket

    attempts: list[object] = []

    def refuse(*args, **kwargs):
        attempts.append(args[:2])
        raise OSError("network disabled by the test")

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", lambda self, address: refuse(address))
    for variable in ("HARNESS_INFERSENT_WEIGHTS", "HARNESS_INFERSENT_WORD_VECTORS",
                     "HARNESS_QUICKTHOUGHT_WEIGHTS", "HARNESS_LASER_WEIGHTS"):
        monkeypatch.delenv(variable, raising=False)
    builds = {"infersent": (models._build_infersent, InferSentOptions()),
              "quickthought": (models._build_quickthought, QuickThoughtOptions()),
              "laser": (models._build_laser, LaserOptions())}
    for name, (build, options) in builds.items():
        with pytest.raises(WeightsError) as refused:
            build(options, BuildContext())
        assert str(refused.value).startswith(f"{name}: needs ") and "\n" not in str(refused.value)
    assert attempts == []


def test_file_identity_follows_content_not_name_or_time(tmp_path) -> None:
    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    a.write_bytes(b"x" * 3000)
    b.write_bytes(b"x" * 3000)
    assert file_identity(a) == file_identity(b)
    b.write_bytes(b"x" * 2999 + b"y")
    assert file_identity(a) != file_identity(b)
    big = tmp_path / "big.bin"
    big.write_bytes(bytes(3 << 20))
    before = file_identity(big)
    with open(big, "r+b") as handle:  # a change in the last MiB of a large file
        handle.seek((3 << 20) - 10)
        handle.write(b"z")
    assert file_identity(big) != before


# ----------------------------------------------------------------------------------- tokeniser


@pytest.mark.parametrize(("text", "tokens"), [
    ("don't stop.", ["do", "n't", "stop", "."]),
    ("it's 1,000 dollars, at 10:30: ok", ["it", "'s", "1,000", "dollars", ",", "at", "10:30",
                                         ":", "ok"]),
    ('he said "no" (twice)!', ["he", "said", '"', "no", '"', "(", "twice", ")", "!"]),
    ("the u.s. economy grew 3.5 %.", ["the", "u.s.", "economy", "grew", "3.5", "%", "."]),
])
def test_word_tokenize_follows_treebank_conventions(text: str, tokens: list[str]) -> None:
    assert word_tokenize(text) == tokens


def test_moses_negation() -> None:
    assert word_tokenize("we can't go", moses_negation=True) == ["we", "can", "'t", "go"]


# ----------------------------------------------------------------------------------- InferSent

WORDS = ["<p>", "</p>", "the", "cat", "sat", ".", ",", "on", "mat", "hello"]


def _infersent_files(tmp_path: Path, hidden: int = 5, dim: int = 6) -> tuple[Path, Path]:
    """A random InferSent state dict in the released layout and a fastText-style .vec file."""
    shapes = {}
    for suffix in ("", "_reverse"):
        shapes |= {f"enc_lstm.weight_ih_l0{suffix}": (4 * hidden, dim),
                   f"enc_lstm.weight_hh_l0{suffix}": (4 * hidden, hidden),
                   f"enc_lstm.bias_ih_l0{suffix}": (4 * hidden,),
                   f"enc_lstm.bias_hh_l0{suffix}": (4 * hidden,)}
    weights = tmp_path / "infersent2.pkl"
    torch.save(_random_like(shapes), weights, _use_new_zipfile_serialization=False)
    vectors = np.random.default_rng(1).normal(size=(len(WORDS), dim))
    lines = [f"{len(WORDS)} {dim}"] + [w + " " + " ".join(f"{x:.5f}" for x in v)
                                       for w, v in zip(WORDS, vectors)]
    vec = tmp_path / "crawl-300d-2M.vec"
    vec.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return weights, vec


def test_infersent_pickle_needs_the_opt_in(tmp_path, monkeypatch) -> None:
    weights, vec = _infersent_files(tmp_path)
    with pytest.raises(ValidationError, match="allow_pickle: true"):
        InferSentOptions(weights=weights, word_vectors=vec)
    monkeypatch.setenv("HARNESS_INFERSENT_WEIGHTS", str(weights))
    monkeypatch.setenv("HARNESS_INFERSENT_WORD_VECTORS", str(vec))
    assert models.infersent_availability() is None
    refusal = models.infersent_availability(InferSentOptions())
    assert refusal is not None and "allow_pickle: true" in refusal
    with pytest.raises(WeightsError, match="can run arbitrary code"):
        models._build_infersent(InferSentOptions(), BuildContext())


def test_infersent_bilstm_max_over_released_keys(tmp_path) -> None:
    weights, vec = _infersent_files(tmp_path)
    encoder = models._build_infersent(
        InferSentOptions(weights=weights, word_vectors=vec, allow_pickle=True),
        BuildContext())
    assert encoder.dim == 10
    given = torch.load(weights, weights_only=True)
    loaded = encoder.model.state_dict()
    assert set(loaded) == set(given)
    for key, value in given.items():
        torch.testing.assert_close(loaded[key], value)

    # <bos> words-with-vectors <eos>; unknown (and, vectors being cased, "The") words dropped
    assert encoder.words("The cat sat on the zebra.") == ["<p>", "cat", "sat", "on", "the", ".",
                                                          "</p>"]
    assert encoder.words("zebra") == ["<p>", "</p>"]

    vectors = encoder.encode(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 10)
    index, table = read_word_vectors(vec, None)
    lstm = encoder.model.enc_lstm
    for row, sentence in enumerate(SENTENCES):
        words = torch.from_numpy(table[[index[w] for w in encoder.words(sentence)]])
        with torch.no_grad():
            outputs, _ = lstm(words.unsqueeze(1))  # this sentence alone, no padding
        np.testing.assert_allclose(vectors[row], outputs.max(0).values[0].numpy(), rtol=1e-5,
                                   atol=1e-6)
    check_encoder(encoder, SENTENCES)


def test_infersent_reads_a_safetensors_conversion_without_opt_in(tmp_path) -> None:
    weights, vec = _infersent_files(tmp_path)
    converted = tmp_path / "infersent2.safetensors"
    save_safetensors(torch.load(weights, weights_only=True), converted)
    original = models._build_infersent(
        InferSentOptions(weights=weights, word_vectors=vec, allow_pickle=True),
        BuildContext())
    safe = models._build_infersent(InferSentOptions(weights=converted, word_vectors=vec),
                                   BuildContext())
    np.testing.assert_array_equal(safe.encode(SENTENCES), original.encode(SENTENCES))
    assert safe.fingerprint() == models._build_infersent(
        InferSentOptions(weights=converted, word_vectors=vec), BuildContext()).fingerprint()


def test_infersent_missing_key_is_named(tmp_path) -> None:
    weights, vec = _infersent_files(tmp_path)
    state = torch.load(weights, weights_only=True)
    del state["enc_lstm.bias_hh_l0_reverse"]
    broken = tmp_path / "broken.safetensors"
    save_safetensors(state, broken)
    encoder = models._build_infersent(InferSentOptions(weights=broken, word_vectors=vec),
                                      BuildContext())
    with pytest.raises(WeightsError, match="missing \\['enc_lstm.bias_hh_l0_reverse'\\]"):
        encoder.encode(["the cat"])


def test_word_vectors_limit_keeps_the_markers(tmp_path) -> None:
    _, vec = _infersent_files(tmp_path)
    index, vectors = read_word_vectors(vec, 2, keep=("<p>", "</p>", "mat"))
    assert list(index) == ["<p>", "</p>", "mat"] and vectors.shape == (3, 6)
    index, _ = read_word_vectors(vec, 3)
    assert list(index) == ["<p>", "</p>", "the"]


# --------------------------------------------------------------------------------------- LASER


def _write_bpe(directory: Path) -> None:
    (directory / "93langs.fcodes").write_text("h e 50\nl l 40\nhe ll 30\nl o</w> 20\nc a 10\n"
                                              "ca t</w> 9\n", encoding="utf-8")
    (directory / "93langs.fvocab").write_text("he@@ 9\nll@@ 9\no 9\nl@@ 9\ncat 9\nt 3\n",
                                              encoding="utf-8")


def test_bpe_merges_in_learnt_order() -> None:
    codes = {("h", "e"): 0, ("l", "l"): 1, ("he", "ll"): 2, ("l", "o</w>"): 3, ("a", "a"): 4}
    bpe = BytePairEncoder(codes)
    # hello: h e l l o</w> -> he l l o</w> -> he ll o</w> -> hell o</w>
    assert bpe.apply(["hello"]) == ["hell@@", "o"]
    # "l l</w>" was never learnt, so the final l stays apart
    assert bpe.apply(["hell"]) == ["he@@", "l@@", "l"]
    assert bpe.apply(["lo", "aaa", "x"]) == ["lo", "aa@@", "a", "x"]


def test_bpe_splits_pieces_missing_from_the_vocabulary(tmp_path) -> None:
    _write_bpe(tmp_path)
    bpe = BytePairEncoder(read_codes(tmp_path / "93langs.fcodes"),
                          read_vocabulary(tmp_path / "93langs.fvocab"))
    # hell@@ is not in the vocabulary: back to he@@ ll@@; lo is not: back to l@@ o
    assert bpe.apply(["hello", "lo", "cat"]) == ["he@@", "ll@@", "o", "l@@", "o", "cat"]


def test_bpe_codes_errors_name_the_line(tmp_path) -> None:
    bad = tmp_path / "codes"
    bad.write_text("h e 3\nnonsense\n", encoding="utf-8")
    with pytest.raises(WeightsError, match="codes:2"):
        read_codes(bad)


LASER_DICTIONARY = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "he@@": 4, "ll@@": 5, "o": 6,
                    "l@@": 7, "cat": 8, "t": 9, ".": 10}


def _laser_files(tmp_path: Path, layers: int = 5, hidden: int = 3, embed: int = 4) -> Path:
    """A random LASER checkpoint in the released layout (params, model, dictionary) + BPE files."""
    shapes: dict[str, tuple[int, ...]] = {"embed_tokens.weight": (len(LASER_DICTIONARY), embed)}
    for layer in range(layers):
        for suffix in ("", "_reverse"):
            inputs = embed if layer == 0 else 2 * hidden
            shapes |= {f"lstm.weight_ih_l{layer}{suffix}": (4 * hidden, inputs),
                       f"lstm.weight_hh_l{layer}{suffix}": (4 * hidden, hidden),
                       f"lstm.bias_ih_l{layer}{suffix}": (4 * hidden,),
                       f"lstm.bias_hh_l{layer}{suffix}": (4 * hidden,)}
    params = {"num_embeddings": len(LASER_DICTIONARY), "padding_idx": 1, "embed_dim": embed,
              "hidden_size": hidden, "num_layers": layers, "bidirectional": True,
              "left_pad": True, "padding_value": 0.0}
    checkpoint = {"params": params, "model": _random_like(shapes, seed=2),
                  "dictionary": LASER_DICTIONARY}
    torch.save(checkpoint, tmp_path / "bilstm.93langs.2018-12-26.pt")
    _write_bpe(tmp_path)
    return tmp_path


def test_laser_bilstm_max_over_released_keys(tmp_path) -> None:
    directory = _laser_files(tmp_path)
    with pytest.raises(ValidationError, match="allow_pickle"):
        LaserOptions(weights=directory / "bilstm.93langs.2018-12-26.pt")
    encoder = models._build_laser(LaserOptions(weights=directory, allow_pickle=True),
                                  BuildContext())
    assert encoder.dim == 6
    model, dictionary = encoder._load()
    checkpoint = torch.load(directory / "bilstm.93langs.2018-12-26.pt", weights_only=True)
    assert set(model.state_dict()) == set(checkpoint["model"])
    for key, value in checkpoint["model"].items():
        torch.testing.assert_close(model.state_dict()[key], value)

    # lowercased, tokenised, BPE-segmented; the closing </s> is added when encoding
    assert encoder.pieces("Hello cat.") == ["he@@", "ll@@", "o", "cat", "."]
    sentences = ["Hello cat.", "cat", "hello hello hello cat cat .", "zzz"]
    vectors = encoder.encode(sentences)
    assert vectors.shape == (4, 6)
    for row, sentence in enumerate(sentences):
        ids = [dictionary.get(p, 3) for p in encoder.pieces(sentence)] + [2]
        with torch.no_grad():
            outputs, _ = model.lstm(model.embed_tokens(torch.tensor(ids)).unsqueeze(1))
        np.testing.assert_allclose(vectors[row], outputs.max(0).values[0].numpy(), rtol=1e-5,
                                   atol=1e-6)
    check_encoder(encoder, sentences)


def test_laser_safetensors_conversion_with_json_sidecar(tmp_path) -> None:
    directory = _laser_files(tmp_path)
    checkpoint = torch.load(directory / "bilstm.93langs.2018-12-26.pt", weights_only=True)
    save_safetensors(checkpoint["model"], directory / "bilstm.93langs.2018-12-26.safetensors",
                     {"params": checkpoint["params"], "dictionary": checkpoint["dictionary"]})
    # the directory now holds both: the conversion is preferred and needs no opt-in
    safe = models._build_laser(LaserOptions(weights=directory), BuildContext())
    assert safe.weights.suffix == ".safetensors"
    pickled = models._build_laser(
        LaserOptions(weights=directory / "bilstm.93langs.2018-12-26.pt", allow_pickle=True),
        BuildContext())
    np.testing.assert_array_equal(safe.encode(SENTENCES), pickled.encode(SENTENCES))


# -------------------------------------------------------------------------------- QuickThought


def test_tensorflow_gru_cell_by_hand() -> None:
    """One step of tf GRUCell with 1 unit: the reset gate scales the state before the product."""
    cell = TensorFlowGRUCell(1, 1)
    with torch.no_grad():
        cell.gates_kernel.copy_(torch.tensor([[0.2, -0.4], [0.7, 0.1]]))
        cell.gates_bias.copy_(torch.tensor([0.1, -0.2]))
        cell.candidate_kernel.copy_(torch.tensor([[0.3], [-0.6]]))
        cell.candidate_bias.copy_(torch.tensor([0.05]))
        new = cell(torch.tensor([[0.5]]), torch.tensor([[-0.3]])).item()

    def sigmoid(x: float) -> float:
        return 1 / (1 + math.exp(-x))

    r = sigmoid(0.5 * 0.2 + -0.3 * 0.7 + 0.1)
    u = sigmoid(0.5 * -0.4 + -0.3 * 0.1 - 0.2)
    c = math.tanh(0.5 * 0.3 + (r * -0.3) * -0.6 + 0.05)
    assert new == pytest.approx(u * -0.3 + (1 - u) * c, rel=1e-6)


def test_reverse_within_length() -> None:
    inputs = torch.tensor([[1.0, 2, 3, 0], [4, 5, 6, 7]]).unsqueeze(2)
    out = reverse_within_length(inputs, torch.tensor([3, 4]))
    assert out.squeeze(2).tolist() == [[3, 2, 1, 0], [7, 6, 5, 4]]


def _text(words: list[str]) -> np.ndarray:
    return np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8)


QT_VOCAB = ["<unk>", "the", "cat", "sat", ".", "hello", ","]


def _quickthought_arrays(units: int, dim: int, *, update: np.ndarray | None = None,
                         candidate: np.ndarray | None = None, seed: int = 0,
                         old_names: bool = False, own_g_embeddings: bool = False
                         ) -> dict[str, np.ndarray]:
    """A QuickThought model as exported: TF variable names, embedding table(s), vocab text."""
    rng = np.random.default_rng(seed)
    kernel, bias = ("weights", "biases") if old_names else ("kernel", "bias")
    arrays: dict[str, np.ndarray] = {"word_embedding": rng.normal(size=(len(QT_VOCAB), dim)),
                                     "vocab": _text(QT_VOCAB)}
    if own_g_embeddings:
        arrays["word_embedding_out"] = rng.normal(size=(3, dim))
        arrays["vocab_out"] = _text(["<unk>", "cat", "the"])
    for encoder in ("encoder", "encoder_out"):
        for direction in ("fw", "bw"):
            prefix = f"{encoder}/{direction}/gru_cell"
            if update is None:
                arrays[f"{prefix}/gates/{kernel}"] = rng.normal(size=(dim + units, 2 * units)) * .5
                arrays[f"{prefix}/gates/{bias}"] = rng.normal(size=2 * units)
                arrays[f"{prefix}/candidate/{kernel}"] = rng.normal(size=(dim + units, units)) * .5
                arrays[f"{prefix}/candidate/{bias}"] = rng.normal(size=units)
            else:  # zero kernels: the state follows h_t = u h_{t-1} + (1 - u) tanh(b_c)
                arrays[f"{prefix}/gates/{kernel}"] = np.zeros((dim + units, 2 * units))
                arrays[f"{prefix}/gates/{bias}"] = np.concatenate([np.zeros(units), update])
                arrays[f"{prefix}/candidate/{kernel}"] = np.zeros((dim + units, units))
                arrays[f"{prefix}/candidate/{bias}"] = candidate
    return {k: v.astype(np.float32) if v.dtype != np.uint8 else v for k, v in arrays.items()}


def test_quickthought_final_states_stop_at_each_sentence_length(tmp_path) -> None:
    update = np.array([0.0, 1.0, -1.0])
    candidate = np.array([0.5, -1.0, 2.0])
    np.savez(tmp_path / "1-model.npz", **_quickthought_arrays(3, 4, update=update,
                                                              candidate=candidate))
    encoder = models._build_quickthought(QuickThoughtOptions(weights=tmp_path),
                                         BuildContext())
    assert encoder.dim == 12  # f and g, each 2 directions x 3 units
    assert encoder._models is None  # the dimension comes from the array headers
    vectors = encoder.encode(["the cat", "the cat sat on the mat ."])
    u = 1 / (1 + np.exp(-update))
    for row, length in enumerate((2, 7)):
        state = (1 - u ** length) * np.tanh(candidate)  # h_T in closed form
        f = np.concatenate([state, state])
        f /= np.linalg.norm(f)
        np.testing.assert_allclose(vectors[row], np.concatenate([f, f]), rtol=1e-5, atol=1e-6)


def test_quickthought_multichannel_concatenates_models_in_name_order(tmp_path) -> None:
    np.savez(tmp_path / "1-glove.npz", **_quickthought_arrays(3, 4, seed=1))
    np.savez(tmp_path / "2-umbc.npz", **_quickthought_arrays(2, 5, seed=2, old_names=True,
                                                             own_g_embeddings=True))
    encoder = models._build_quickthought(QuickThoughtOptions(weights=tmp_path),
                                         BuildContext())
    assert encoder.dim == 2 * 2 * 3 + 2 * 2 * 2
    assert sum(model.dim for model in encoder.models) == encoder.dim
    first = models._build_quickthought(
        QuickThoughtOptions(weights=tmp_path / "1-glove.npz"), BuildContext())
    vectors = encoder.encode(SENTENCES)
    np.testing.assert_allclose(vectors[:, :12], first.encode(SENTENCES), rtol=1e-6)
    # every encoder's part is unit length (f/|f|, g/|g| of each model)
    for lo, hi in ((0, 6), (6, 12), (12, 16), (16, 20)):
        np.testing.assert_allclose(np.linalg.norm(vectors[:, lo:hi], axis=1), 1.0, rtol=1e-5)
    # unknown words all read the <unk> row
    np.testing.assert_array_equal(encoder.encode(["zebra zebra"]), encoder.encode(["okapi gnu"]))
    check_encoder(encoder, SENTENCES)


def test_quickthought_missing_variable_is_named(tmp_path) -> None:
    arrays = _quickthought_arrays(3, 4)
    del arrays["encoder_out/bw/gru_cell/candidate/bias"]
    np.savez(tmp_path / "model.npz", **arrays)
    encoder = models._build_quickthought(QuickThoughtOptions(weights=tmp_path),
                                         BuildContext())
    with pytest.raises(WeightsError, match="missing \\['bw.candidate_bias'\\]"):
        encoder.encode(["the cat"])


def test_the_guide_names_every_variable_and_option() -> None:
    guide = (Path(__file__).parents[1] / "docs" / "encoders.md").read_text(encoding="utf-8")
    for variable in ENV:
        assert variable in guide
    for options in (InferSentOptions, QuickThoughtOptions, LaserOptions,
                    Sent2VecOptions, SbertOptions):
        for field in options.model_fields:
            assert f"`{field}" in guide, (options.__name__, field)
