"""The MoS-LSTM decoder, the core trainer and greedy/beam search, on tiny CPU models."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch

from harness.errors import DataError
from harness.generation.search import Hypothesis, beam_search, greedy_search
from harness.protocols import BuildContext, ConditionalLanguageModel
from harness.training.trainer import load_decoder_state, save_decoder, train_decoder
from harness_plugins.decoders.lstm import MixtureOfSoftmaxesLSTM, build_mos_lstm
from harness_plugins.decoders.options import MosLstmOptions

PAD, BOS, EOS = 0, 1, 2


@dataclass
class FakeVocab:
    """The part of `SubwordVocab` a decoder and the trainer use."""

    vectors: np.ndarray
    pad_id: int = PAD
    bos_id: int = BOS
    eos_id: int = EOS

    def __len__(self) -> int:
        return len(self.vectors)


def make_vocab(size: int = 24, dim: int = 16, seed: int = 0) -> FakeVocab:
    return FakeVocab(np.random.default_rng(seed).normal(size=(size, dim)).astype(np.float32))


def make_model(vocab: FakeVocab, input_dim: int, seed: int = 0, **options: object):
    torch.manual_seed(seed)
    return build_mos_lstm(MosLstmOptions(**options), BuildContext(vocab=vocab, input_dim=input_dim))


def copy_task(n: int = 32, vocab_size: int = 24,
              seed: int = 0) -> tuple[np.ndarray, list[list[int]]]:
    """Sentences of random subwords, each with a one-hot code of its identity as its vector."""
    rng = np.random.default_rng(seed)
    ids = [rng.integers(3, vocab_size, size=rng.integers(2, 7)).tolist() for _ in range(n)]
    return np.eye(n, dtype=np.float32), ids


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Run these tiny models on one thread: idle OpenMP workers spinning against other processes
    on a busy 2-core machine made this file 40x slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory):
    """A decoder trained on the copy task, with its data and training log."""
    vocab = make_vocab()
    vectors, ids = copy_task()
    model = make_model(vocab, vectors.shape[1], hidden=64, experts=2, dropout=0.0,
                       dropout_input=0.0, dropout_layers=0.0, freeze_embeddings=False)
    work = tmp_path_factory.mktemp("copy")
    summary = train_decoder(model, vocab, vectors, ids, epochs=40, batch_size=8, lr=1e-2, clip=1.0,
                            seed=1, device="cpu", checkpoint_dir=work / "ckpt",
                            log_path=work / "train.jsonl", progress=False)
    return model, vocab, vectors, ids, summary, work


@pytest.mark.parametrize("experts", [1, 3])
def test_forward_shapes_and_normalised(experts: int) -> None:
    vocab = make_vocab()
    model = make_model(vocab, 5, layers=2, hidden=12, last_hidden=10, experts=experts).eval()
    assert isinstance(model, ConditionalLanguageModel)
    log_probs = model(torch.randint(0, len(vocab), (3, 7)), torch.randn(3, 5))
    assert log_probs.shape == (3, 7, len(vocab))
    torch.testing.assert_close(torch.logsumexp(log_probs, -1), torch.zeros(3, 7), atol=1e-5, rtol=0)


@pytest.mark.parametrize("experts", [1, 3])
def test_forward_equals_repeated_steps(experts: int) -> None:
    vocab = make_vocab()
    model = make_model(vocab, 5, layers=2, hidden=12, last_hidden=16, experts=experts).eval()
    inputs, vectors = torch.randint(0, len(vocab), (4, 6)), torch.randn(4, 5)
    with torch.no_grad():
        teacher_forced = model(inputs, vectors)
        state, steps = model.initial_state(vectors), []
        for t in range(inputs.size(1)):
            log_probs, state = model.step(inputs[:, t], vectors, state)
            steps.append(log_probs)
    torch.testing.assert_close(torch.stack(steps, 1), teacher_forced, atol=1e-5, rtol=1e-5)


def test_wrong_vector_dimension_names_both_dimensions(tmp_path: Path) -> None:
    vocab = make_vocab()
    model = make_model(vocab, 5)
    with pytest.raises(DataError, match=r"dimension 5.*dimension 6"):
        model(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 6))
    with pytest.raises(DataError, match=r"dimension 5.*\(4, 6\)"):
        train_decoder(model, vocab, np.zeros((4, 6), np.float32), [[3]] * 4, epochs=1,
                      batch_size=2, lr=1e-3, clip=1.0, seed=1, device="cpu",
                      checkpoint_dir=tmp_path, log_path=tmp_path / "log.jsonl", progress=False)


def test_frozen_embeddings_are_tied_and_not_trained() -> None:
    vocab = make_vocab()
    model = make_model(vocab, 5, hidden=8)  # hidden != E: a projection feeds the tied output
    assert not model.embedding.weight.requires_grad
    assert np.array_equal(model.embedding.weight.numpy(), vocab.vectors)


def test_training_loss_falls_and_greedy_regenerates(trained) -> None:
    model, _, vectors, ids, summary, work = trained
    log = [json.loads(line) for line in (work / "train.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in log] == list(range(1, 41))
    assert set(log[0]) == {"epoch", "train_loss", "tokens_per_s", "seconds"}
    assert log[-1]["train_loss"] < 0.2 * log[0]["train_loss"]
    assert summary.epochs == 40 and summary.steps == 40 * 4 and summary.val_loss is None
    assert summary.train_loss == log[-1]["train_loss"] and summary.tokens_per_s > 0
    out = greedy_search(model, vectors, bos_id=BOS, eos_id=EOS, max_len=10, batch_size=8,
                        device="cpu")
    assert sum(list(h.ids) == s for h, s in zip(out, ids, strict=True)) >= 0.8 * len(ids)


def test_beam_one_equals_greedy(trained) -> None:
    model, _, vectors, _, _, _ = trained
    untrained = make_model(make_vocab(), vectors.shape[1], hidden=16, experts=3)
    for decoder, max_len in ((model, 10), (untrained, 5)):
        greedy = greedy_search(decoder, vectors, bos_id=BOS, eos_id=EOS, max_len=max_len,
                               batch_size=32, device="cpu")
        beam = beam_search(decoder, vectors, beam=1, bos_id=BOS, eos_id=EOS, max_len=max_len,
                           batch_size=32, device="cpu")
        assert [h.ids for h in beam] == [h.ids for h in greedy]
        np.testing.assert_allclose([h.score for h in beam], [h.score for h in greedy], atol=1e-5)


@pytest.mark.parametrize("length_normalise", [False, True])
def test_batched_beam_equals_one_at_a_time(trained, length_normalise: bool) -> None:
    model, _, vectors, _, _, _ = trained
    # Noisy codes make the search less certain than on training vectors.
    noisy = vectors + np.random.default_rng(3).normal(0, 0.5, vectors.shape).astype(np.float32)
    kwargs = {"beam": 4, "bos_id": BOS, "eos_id": EOS, "max_len": 8, "device": "cpu",
              "length_normalise": length_normalise}
    batched = beam_search(model, noisy, batch_size=32, **kwargs)
    single = beam_search(model, noisy, batch_size=1, **kwargs)
    assert all(isinstance(h, Hypothesis) for h in batched)
    assert [h.ids for h in batched] == [h.ids for h in single]
    np.testing.assert_allclose([h.score for h in batched], [h.score for h in single], atol=1e-4)
    assert all(len(h.ids) <= 8 and EOS not in h.ids and BOS not in h.ids for h in batched)


def test_beam_score_is_sum_of_log_probs(trained) -> None:
    model, _, vectors, _, _, _ = trained
    out = beam_search(model, vectors[:4], beam=3, bos_id=BOS, eos_id=EOS, max_len=10,
                      batch_size=4, device="cpu")
    with torch.no_grad():
        for h, vector in zip(out, vectors[:4], strict=True):
            inputs = torch.tensor([[BOS, *h.ids]])
            targets = torch.tensor([*h.ids, EOS])
            log_probs = model(inputs, torch.from_numpy(vector[None]))[0]
            assert log_probs[torch.arange(len(targets)), targets].sum().item() == pytest.approx(
                h.score, abs=1e-4)


def test_resume_after_kill_gives_identical_weights(tmp_path: Path) -> None:
    vocab = make_vocab()
    codes, ids = copy_task(n=12)
    np.save(tmp_path / "vectors.npy", codes)
    vectors = np.load(tmp_path / "vectors.npy", mmap_mode="r")  # the trainer reads rows lazily
    # Dropout on, so the restored RNG state matters too.
    options = {"layers": 2, "hidden": 16, "experts": 2, "dropout": 0.3, "dropout_input": 0.2,
               "dropout_layers": 0.2}
    common = {"batch_size": 4, "lr": 5e-3, "clip": 0.5, "seed": 7, "device": "cpu",
              "progress": False}

    whole = make_model(vocab, 12, seed=3, **options)
    train_decoder(whole, vocab, vectors, ids, epochs=3, checkpoint_dir=tmp_path / "a",
                  log_path=tmp_path / "a.jsonl", **common)

    first = make_model(vocab, 12, seed=3, **options)
    train_decoder(first, vocab, vectors, ids, epochs=1, checkpoint_dir=tmp_path / "b",
                  log_path=tmp_path / "b.jsonl", **common)
    torch.manual_seed(12345)  # a restarted process need not share the RNG state of the first
    resumed = make_model(vocab, 12, seed=3, **options)
    summary = train_decoder(resumed, vocab, vectors, ids, epochs=3,
                            checkpoint_dir=tmp_path / "b", log_path=tmp_path / "b.jsonl", **common)

    assert summary.epochs == 3 and summary.steps == 9
    a, b = whole.state_dict(), resumed.state_dict()
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert len((tmp_path / "b.jsonl").read_text().splitlines()) == 3
    assert [p.name for p in (tmp_path / "b").glob("*.safetensors")] == ["epoch-0003.safetensors"]
    with pytest.raises(DataError, match="delete the directory"):
        train_decoder(resumed, vocab, vectors, ids, epochs=4, checkpoint_dir=tmp_path / "b",
                      log_path=tmp_path / "b.jsonl", **{**common, "lr": 1e-3})


def test_save_and_load_decoder(trained, tmp_path: Path) -> None:
    model, vocab, vectors, _, _, _ = trained
    save_decoder(model, tmp_path)
    copy = make_model(vocab, vectors.shape[1], seed=9, hidden=64, experts=2,
                      freeze_embeddings=False)
    load_decoder_state(copy, tmp_path)
    assert all(torch.equal(v, copy.state_dict()[k]) for k, v in model.state_dict().items())
    with pytest.raises(DataError, match="no trained decoder"):
        load_decoder_state(copy, tmp_path / "missing")


def test_registration_imports_no_torch() -> None:
    code = ("import sys, harness_plugins.decoders as d; "
            "assert 'torch' not in sys.modules, 'torch imported'; "
            "names = []; d.register_decoders(lambda name, factory, **kw: names.append(name)); "
            "assert names == ['mos-lstm'], names")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_model_class_is_the_plugin_class() -> None:
    assert isinstance(make_model(make_vocab(), 3), MixtureOfSoftmaxesLSTM)
