"""The core trainer: learning, validation, schedule, early stopping, checkpoints and faults."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
import torch

from harness.errors import DataError, HarnessError
from harness.generation.perplexity import reference_nll
from harness.generation.search import greedy_search
from harness.results.model import TrainSummary
from harness.training import faults
from harness.training.batches import bucketed_batches, split_validation
from harness.training.checkpoint import read_checkpoints
from harness.training.options import (
    BOOKKEEPING_FIELDS,
    EXTENSIBLE_FIELDS,
    RESULT_FIELDS,
    TrainingOptions,
)
from harness.training.trainer import (
    DivergedError,
    epochs_without_improvement,
    train_decoder,
)
from harness_plugins.decoders.options import MosLstmOptions
from tests.decoder_fakes import (
    BOS,
    EOS,
    Killed,
    copy_task,
    kill_at,
    make_model,
    make_vocab,
    nan_gradient_at,
)

pytestmark = pytest.mark.usefixtures("one_thread")


# Small, regularised (dropout draws make the restored RNG state matter), checkpointing mid-epoch.
SMALL = {"layers": 2, "hidden": 16, "experts": 2, "dropout": 0.3, "dropout_input": 0.2,
         "dropout_layers": 0.2, "dropout_embedding": 0.1, "dropout_latent": 0.2,
         "weight_drop": 0.3}
RUN = {"epochs": 3, "batch_size": 4, "lr": 5e-3, "clip": 0.5, "val_fraction": 0.25,
       "checkpoint_every": 2, "log_every": 3}


def train_until_killed(data: tuple, work: Path, call: int) -> None:
    """Train the SMALL model on `data` in `work` until its `call`-th forward pass "kills" it."""
    vocab, vectors, ids = data
    dying = make_model(vocab, 16, seed=3, **SMALL)
    kill_at(dying, call)
    with pytest.raises(Killed):
        train(dying, vocab, vectors, ids, work)


def train(model, vocab, vectors, ids, work: Path, **overrides):
    kwargs = {**RUN, **overrides}
    return train_decoder(model, vocab, vectors, ids, TrainingOptions(**kwargs), seed=7,
                         device="cpu", checkpoint_dir=work / "ckpt", log_path=work / "train.jsonl",
                         progress=False, label="decoder 'mos-lstm' for encoder 'test'")


def same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def stable_log(path: Path) -> list[tuple]:
    """The log without its timing fields."""
    keys = ("event", "epoch", "step", "loss", "train_loss", "val_loss", "lr")
    return [tuple(r.get(k) for k in keys) for r in map(json.loads, path.read_text().splitlines())]



@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory):
    """A memory-mapped copy task (the trainer reads rows lazily) and its vocabulary."""
    codes, ids = copy_task(n=16)
    path = tmp_path_factory.mktemp("data") / "vectors.npy"
    np.save(path, codes)
    return make_vocab(), np.load(path, mmap_mode="r"), ids


@pytest.fixture(scope="module")
def uninterrupted(data, tmp_path_factory: pytest.TempPathFactory):
    """The reference run: never killed."""
    vocab, vectors, ids = data
    work = tmp_path_factory.mktemp("whole")
    model = make_model(vocab, 16, seed=3, **SMALL)
    summary = train(model, vocab, vectors, ids, work)
    return model, summary, work


# --- learning ----------------------------------------------------------------------------------

def test_training_learns_the_copy_task(tmp_path: Path) -> None:
    vocab = make_vocab()
    vectors, ids = copy_task()
    model = make_model(vocab, 32, hidden=64, experts=2, dropout=0.0, dropout_input=0.0,
                       dropout_layers=0.0, freeze_embeddings=False)
    summary = train_decoder(model, vocab, vectors, ids,
                            TrainingOptions(epochs=30, batch_size=8, lr=1e-2, clip=1.0,
                                            val_fraction=0.0, log_every=0),
                            seed=1, device="cpu", checkpoint_dir=tmp_path / "c",
                            log_path=tmp_path / "log.jsonl", progress=False)
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in log] == list(range(1, 31)) and {r["event"] for r in log} == {"epoch"}
    assert log[-1]["train_loss"] < 0.2 * log[0]["train_loss"]
    assert summary.epochs == 30 and summary.steps == 30 * 4 and summary.val_loss is None
    assert summary.train_loss == log[-1]["train_loss"] and summary.tokens_per_s > 0
    out = greedy_search(model, vectors, bos_id=BOS, eos_id=EOS, max_len=10, batch_size=8,
                        device="cpu")
    assert sum(list(h.ids) == s for h, s in zip(out, ids, strict=True)) >= 0.8 * len(ids)


def test_log_has_step_and_epoch_records(uninterrupted) -> None:
    _, summary, work = uninterrupted
    records = [json.loads(line) for line in (work / "train.jsonl").read_text().splitlines()]
    epochs = [r for r in records if r["event"] == "epoch"]
    steps = [r for r in records if r["event"] == "step"]
    # 16 sentences, 4 held out, batches of 4: 3 steps per epoch; a step record every 3 steps.
    assert [r["step"] for r in epochs] == [3, 6, 9] and [r["step"] for r in steps] == [3, 6, 9]
    assert set(epochs[0]) == {"event", "epoch", "step", "train_loss", "val_loss", "lr",
                              "tokens_per_s", "seconds"}
    assert set(steps[0]) == {"event", "epoch", "step", "loss", "tokens_per_s", "lr"}
    assert all(r["tokens_per_s"] > 0 and r["lr"] == 5e-3 for r in records)
    assert summary.epochs == 3 and summary.steps == 9


def test_validation_split_is_seeded_and_held_out() -> None:
    train_a, val_a = split_validation(100, 0.1, seed=1)
    train_b, val_b = split_validation(100, 0.1, seed=1)
    assert np.array_equal(val_a, val_b) and len(val_a) == 10
    assert sorted([*train_a, *val_a]) == list(range(100))
    assert not np.array_equal(val_a, split_validation(100, 0.1, seed=2)[1])
    assert len(split_validation(9, 0.1, seed=1)[1]) == 0  # floor(0.9): no validation


def test_bucketed_batches_cover_each_sentence_once_per_epoch() -> None:
    lengths = np.array([5, 1, 3, 3, 2, 5, 1, 4, 2, 6])
    indices = np.arange(10)
    batches = bucketed_batches(indices, lengths, 3, seed=1, epoch=1)
    assert sorted(np.concatenate(batches).tolist()) == list(range(10))
    assert [b.tolist() for b in batches] == [
        b.tolist() for b in bucketed_batches(indices, lengths, 3, seed=1, epoch=1)]
    assert [b.tolist() for b in batches] != [
        b.tolist() for b in bucketed_batches(indices, lengths, 3, seed=1, epoch=2)]
    spread = [np.ptp(lengths[b]) for b in batches]
    assert max(spread) <= 2  # sorted by length before batching


def test_returned_weights_are_those_of_the_best_validation_epoch(uninterrupted, data) -> None:
    model, summary, work = uninterrupted
    vocab, vectors, ids = data
    epochs = [r for r in map(json.loads, (work / "train.jsonl").read_text().splitlines())
              if r["event"] == "epoch"]
    best = min(range(3), key=lambda i: epochs[i]["val_loss"])
    assert summary.best_epoch == best + 1 and summary.val_loss == epochs[best]["val_loss"]
    _, held_out = split_validation(len(ids), RUN["val_fraction"], seed=7)
    nll = reference_nll(model, vectors[held_out], [ids[i] for i in held_out], bos_id=BOS,
                        eos_id=EOS, batch_size=4, device="cpu")
    recomputed = sum(v for v, _ in nll) / sum(n for _, n in nll)
    assert recomputed == pytest.approx(summary.val_loss, rel=1e-5)


# --- resume ------------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [2, 5, 7, 9])
def test_killed_and_rerun_gives_identical_weights(uninterrupted, data, tmp_path: Path,
                                                  call: int) -> None:
    """Killed mid-epoch after a step checkpoint (5), between checkpoints (2, 7) or in the last
    step (9); the rerun, in a fresh model with another RNG state, ends where the whole run did."""
    whole, whole_summary, whole_work = uninterrupted
    vocab, vectors, ids = data
    train_until_killed(data, tmp_path, call)
    steps = [c.meta["steps"] for c in read_checkpoints(tmp_path / "ckpt")]
    assert all(s < call for s in steps)

    torch.manual_seed(12345)
    resumed = make_model(vocab, 16, seed=3, **SMALL)
    summary = train(resumed, vocab, vectors, ids, tmp_path)
    assert same_weights(whole, resumed)
    assert summary.steps == whole_summary.steps and summary.val_loss == whole_summary.val_loss
    assert stable_log(tmp_path / "train.jsonl") == stable_log(whole_work / "train.jsonl")
    assert len(list((tmp_path / "ckpt").glob("*.safetensors"))) == 2  # newest and previous


def test_fresh_draws_feed_every_epoch_after_the_first(data, tmp_path: Path) -> None:
    """`redraw(e)` supplies epoch e's training vectors (e > 1): a redraw equal to the stored
    vectors trains exactly as none does; other draws train otherwise; a run killed mid-epoch
    resumes to the same weights."""
    vocab, vectors, ids = data
    calls: list[int] = []

    def same(epoch: int) -> np.ndarray:
        calls.append(epoch)
        return np.asarray(vectors)

    plain = make_model(vocab, 16, seed=3, **SMALL)
    train(plain, vocab, vectors, ids, tmp_path / "plain")
    echoed = make_model(vocab, 16, seed=3, **SMALL)
    train_decoder(echoed, vocab, vectors, ids, TrainingOptions(**RUN), seed=7, device="cpu",
                  checkpoint_dir=tmp_path / "echo" / "ckpt", log_path=tmp_path / "echo" / "l",
                  progress=False, redraw=same)
    assert same_weights(plain, echoed) and calls == [2, 3]

    def noisy(epoch: int) -> np.ndarray:
        rng = np.random.default_rng(epoch)
        return (np.asarray(vectors) + rng.normal(size=vectors.shape)).astype(np.float32)

    def run(work: Path, model: torch.nn.Module) -> torch.nn.Module:
        train_decoder(model, vocab, vectors, ids, TrainingOptions(**RUN), seed=7, device="cpu",
                      checkpoint_dir=work / "ckpt", log_path=work / "train.jsonl",
                      progress=False, redraw=noisy)
        return model

    fresh = run(tmp_path / "fresh", make_model(vocab, 16, seed=3, **SMALL))
    assert not same_weights(plain, fresh)
    dying = make_model(vocab, 16, seed=3, **SMALL)
    kill_at(dying, 7)  # in the second epoch, after a checkpoint
    with pytest.raises(Killed):
        run(tmp_path / "killed", dying)
    assert same_weights(fresh, run(tmp_path / "killed", make_model(vocab, 16, seed=3, **SMALL)))
    with pytest.raises(AssertionError, match="in one process"):
        train_decoder(make_model(vocab, 16, seed=3, **SMALL), vocab, vectors, ids,
                      TrainingOptions(**RUN, workers=2), seed=7, device="cpu",
                      checkpoint_dir=tmp_path / "w", log_path=tmp_path / "w.jsonl",
                      progress=False, redraw=noisy)


def test_more_epochs_continue_a_finished_run(data, tmp_path: Path) -> None:
    vocab, vectors, ids = data
    whole = make_model(vocab, 16, seed=3, **SMALL)
    train(whole, vocab, vectors, ids, tmp_path / "a", epochs=3)
    first = make_model(vocab, 16, seed=3, **SMALL)
    train(first, vocab, vectors, ids, tmp_path / "b", epochs=1)
    resumed = make_model(vocab, 16, seed=3, **SMALL)
    summary = train(resumed, vocab, vectors, ids, tmp_path / "b", epochs=3)
    assert summary.epochs == 3 and same_weights(whole, resumed)
    with pytest.raises(DataError, match="delete"):
        train(resumed, vocab, vectors, ids, tmp_path / "b", epochs=4, lr=1e-3)


@pytest.mark.parametrize("damage", ["flip", "truncate", "record"])
def test_damaged_checkpoint_is_detected_and_never_used(uninterrupted, data, tmp_path: Path,
                                                       damage: str, caplog) -> None:
    whole, _, _ = uninterrupted
    vocab, vectors, ids = data
    train_until_killed(data, tmp_path, 8)
    newest = max((tmp_path / "ckpt").glob("step-*.json"))
    tensors = newest.with_suffix(".safetensors")
    if damage == "flip":
        data_bytes = bytearray(tensors.read_bytes())
        data_bytes[len(data_bytes) // 2] ^= 0x01
        tensors.write_bytes(bytes(data_bytes))
    elif damage == "truncate":
        tensors.write_bytes(tensors.read_bytes()[:100])
    else:
        newest.write_text(newest.read_text()[:20])

    with caplog.at_level(logging.WARNING, logger="harness.training"):
        resumed = make_model(vocab, 16, seed=3, **SMALL)
        train(resumed, vocab, vectors, ids, tmp_path)
    assert newest.name in caplog.text and "ignoring" in caplog.text
    assert same_weights(whole, resumed)  # resumed from the previous, intact checkpoint


def test_a_kill_while_writing_a_checkpoint_leaves_nothing_that_is_used(
        uninterrupted, data, tmp_path: Path) -> None:
    whole, _, _ = uninterrupted
    vocab, vectors, ids = data
    train_until_killed(data, tmp_path, 8)
    # What a kill between the writes of step 8's files leaves: tensors without their record,
    # and a record cut short before its rename.
    directory = tmp_path / "ckpt"
    newest = max(directory.glob("step-*.safetensors"))
    (directory / "step-0000000008.safetensors").write_bytes(newest.read_bytes())
    (directory / "step-0000000008.json.tmp").write_text('{"steps": 8, "fi')
    resumed = make_model(vocab, 16, seed=3, **SMALL)
    train(resumed, vocab, vectors, ids, tmp_path)
    assert same_weights(whole, resumed)
    assert sorted(p.name for p in directory.iterdir()) == [
        "step-0000000008.json", "step-0000000008.safetensors",
        "step-0000000009.json", "step-0000000009.safetensors"]


def test_no_intact_checkpoint_restarts_with_a_warning(uninterrupted, data, tmp_path: Path,
                                                      caplog) -> None:
    whole, _, _ = uninterrupted
    vocab, vectors, ids = data
    train_until_killed(data, tmp_path, 4)
    for path in (tmp_path / "ckpt").glob("*.safetensors"):
        path.write_bytes(b"garbage")
    with caplog.at_level(logging.WARNING, logger="harness.training"):
        restarted = make_model(vocab, 16, seed=3, **SMALL)
        train(restarted, vocab, vectors, ids, tmp_path)
    assert "starts over" in caplog.text
    assert same_weights(whole, restarted)


# --- faults ------------------------------------------------------------------------------------

def test_nan_loss_stops_training_and_keeps_the_last_good_checkpoint(data, tmp_path: Path) -> None:
    vocab, vectors, ids = data
    model = make_model(vocab, 16, seed=3, **SMALL)
    calls, forward = 0, model.forward

    def poisoned(*args: torch.Tensor) -> torch.Tensor:
        nonlocal calls
        out = forward(*args)
        if model.training:
            calls += 1
            if calls == 6:
                return out * float("nan")
        return out

    model.forward = poisoned
    with pytest.raises(DivergedError, match=r"encoder 'test'.*step 6.*step-0000000004") as info:
        train(model, vocab, vectors, ids, tmp_path)
    assert isinstance(info.value, HarnessError) and info.value.step == 6
    kept = list(read_checkpoints(tmp_path / "ckpt"))
    assert [c.meta["steps"] for c in kept] == [4, 3]
    assert all(torch.isfinite(t).all() for c in kept for t in c.tensors.values()
               if t.is_floating_point())
    assert all(torch.isfinite(p).all() for p in model.parameters())  # caught before the update


def test_wrong_vector_dimension_names_encoder_and_decoder(tmp_path: Path) -> None:
    vocab = make_vocab()
    with pytest.raises(DataError, match=r"encoder 'test'.*dimension 5.*\(4, 6\)"):
        train(make_model(vocab, 5), vocab, np.zeros((4, 6), np.float32), [[3]] * 4, tmp_path)


# --- options: optimiser, schedule, early stopping ----------------------------------------------

def test_decoder_options_are_training_options_and_their_fields_divide() -> None:
    """A decoder's options reach the trainer as they are; every training field is either one
    that changes the weights, one that may grow between runs, or bookkeeping."""
    decoder = MosLstmOptions(epochs=4, batch_size=9)
    assert isinstance(decoder, TrainingOptions)
    assert (decoder.epochs, decoder.batch_size) == (4, 9)
    parts = [set(RESULT_FIELDS), set(EXTENSIBLE_FIELDS), set(BOOKKEEPING_FIELDS)]
    assert set().union(*parts) == set(TrainingOptions.model_fields)
    assert sum(len(part) for part in parts) == len(TrainingOptions.model_fields)
    with pytest.raises(ValueError):
        TrainingOptions(batchsize=3)


def test_early_stopping_and_plateau_schedule(data, tmp_path: Path) -> None:
    """With a learning rate too small to change any weight the validation loss never falls:
    the plateau schedule halves the rate each epoch after the first two, and training stops
    after `patience` epochs without improvement."""
    vocab, vectors, ids = data
    model = make_model(vocab, 16, seed=3, **SMALL)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    summary = train(model, vocab, vectors, ids, tmp_path, epochs=10, optimizer="sgd", lr=1e-30,
                    clip=0.0, schedule="plateau", lr_factor=0.5, lr_patience=0, patience=3)
    assert summary.stopped_early and summary.epochs == 4 and summary.best_epoch == 1
    records = [r for r in map(json.loads, (tmp_path / "train.jsonl").read_text().splitlines())
               if r["event"] == "epoch"]
    assert [r["lr"] for r in records] == pytest.approx([1e-30, 1e-30, 5e-31, 2.5e-31], rel=1e-9)
    assert len({r["val_loss"] for r in records}) == 1
    assert all((before[k] - v).abs().max() < 1e-20 for k, v in model.state_dict().items())
    # A rerun with more epochs does not train past the early stop.
    again = train(model, vocab, vectors, ids, tmp_path, epochs=12, optimizer="sgd", lr=1e-30,
                  clip=0.0, schedule="plateau", lr_factor=0.5, lr_patience=0, patience=3)
    assert again.epochs == 4 and again.steps == summary.steps


@pytest.mark.parametrize(("losses", "min_delta", "expected"), [
    ([3.0, 2.0, 1.0], 0.0, 0),
    ([3.0, 2.0, 2.0, 2.5], 0.0, 2),            # equal is no improvement
    ([3.0, 2.95, 2.92, 2.90], 0.1, 3),         # falls, but never by more than 0.1 at once
    ([3.0, 2.95, 2.85, 2.90], 0.1, 1),         # 2.85 < 3.0 - 0.1 improves; 2.90 does not
    ([3.0, 2.0, 1.95, 1.89], 0.1, 0),          # 1.89 < 2.0 - 0.1: measured from 2.0, not 1.95
])
def test_epochs_without_improvement_by_hand(losses: list[float], min_delta: float,
                                            expected: int) -> None:
    assert epochs_without_improvement(losses, min_delta) == expected


def test_min_delta_stops_a_run_whose_improvements_are_too_small(data, tmp_path: Path) -> None:
    """The same slowly improving run: no stop without `min_delta`; with a `min_delta` larger
    than what epochs 2 and 3 gained together it stops after epoch 3 (`patience` 2), the best
    (last) weights kept; without `min_delta`, a rerun continues from its checkpoint."""
    vocab, vectors, ids = data
    run = {"epochs": 6, "lr": 1e-3, "patience": 2}
    plain = train(make_model(vocab, 16, seed=3, **SMALL), vocab, vectors, ids,
                  tmp_path / "plain", **run)
    losses = [r["val_loss"] for r in map(json.loads,
                                         (tmp_path / "plain" / "train.jsonl").read_text()
                                         .splitlines()) if r["event"] == "epoch"]
    gains = -np.diff(losses)
    assert not plain.stopped_early and plain.epochs == 6 and (gains > 0).all()
    coarse = train(make_model(vocab, 16, seed=3, **SMALL), vocab, vectors, ids,
                   tmp_path / "coarse", **run, min_delta=(losses[0] - losses[2]) * 1.01)
    assert coarse.stopped_early and coarse.epochs == 3 and coarse.best_epoch == 3
    finer = train(make_model(vocab, 16, seed=3, **SMALL), vocab, vectors, ids,
                  tmp_path / "coarse", **run)
    assert not finer.stopped_early and finer.epochs == 6 and finer.val_loss == pytest.approx(
        plain.val_loss)


@pytest.mark.parametrize(("summary", "flag"), [
    ({"epochs": 10, "best_epoch": 10, "stopped_early": False}, True),    # no early stopping
    ({"epochs": 10, "best_epoch": 9, "stopped_early": False}, False),
    ({"epochs": 10, "best_epoch": 9, "stopped_early": False, "patience": 2}, True),  # hit 10
    ({"epochs": 7, "best_epoch": 5, "stopped_early": True, "patience": 2}, False),
])
def test_still_improving_means_the_epoch_limit_was_hit(summary: dict, flag: bool) -> None:
    assert TrainSummary(**summary).still_improving is flag


def test_linear_schedule_decays_to_zero_and_resumes_on_the_same_line(data, tmp_path: Path
                                                                     ) -> None:
    """Step s of S (1-based) trains at lr * (1 - (s - 1) / S); a run killed between
    checkpoints continues the same decay and ends with the same weights."""
    vocab, vectors, ids = data
    options = {"schedule": "linear", "log_every": 1, "lr": 4e-3}
    whole = make_model(vocab, 16, seed=3, **SMALL)
    summary = train(whole, vocab, vectors, ids, tmp_path / "whole", **options)
    steps = [r for r in map(json.loads, (tmp_path / "whole" / "train.jsonl").read_text()
                                              .splitlines()) if r["event"] == "step"]
    total = summary.steps
    assert total == RUN["epochs"] * (total // RUN["epochs"])  # the same batches every epoch
    assert [r["lr"] for r in steps] == pytest.approx(
        [4e-3 * (1 - (s - 1) / total) for s in range(1, total + 1)], rel=1e-12)

    dying = make_model(vocab, 16, seed=3, **SMALL)
    kill_at(dying, 7)
    with pytest.raises(Killed):
        train(dying, vocab, vectors, ids, tmp_path / "killed", **options)
    resumed = make_model(vocab, 16, seed=3, **SMALL)
    train(resumed, vocab, vectors, ids, tmp_path / "killed", **options)
    assert same_weights(whole, resumed)


def test_sgd_step_is_plain_gradient_descent(tmp_path: Path) -> None:
    vocab = make_vocab()
    vectors, ids = copy_task(n=4)
    options = dict(hidden=8, dropout=0.0, dropout_input=0.0, dropout_layers=0.0)
    model = make_model(vocab, 4, seed=1, **options)
    reference = make_model(vocab, 4, seed=1, **options)
    train_decoder(model, vocab, vectors, ids,
                  TrainingOptions(epochs=1, batch_size=4, lr=0.1, clip=0.0, optimizer="sgd",
                                  val_fraction=0.0),
                  seed=1, device="cpu", checkpoint_dir=tmp_path, log_path=tmp_path / "log.jsonl",
                  progress=False)
    # One batch holds every sentence: one step of w -= lr * grad(mean token NLL).
    inputs = torch.full((4, 7), 0)
    targets = torch.full((4, 7), -100)
    for row, sentence in enumerate(ids):
        inputs[row, 0], inputs[row, 1:len(sentence) + 1] = BOS, torch.tensor(sentence)
        targets[row, :len(sentence)], targets[row, len(sentence)] = torch.tensor(sentence), EOS
    width = max(len(s) for s in ids) + 1
    log_probs = reference(inputs[:, :width], torch.from_numpy(vectors))
    loss = torch.nn.functional.nll_loss(log_probs.flatten(0, 1), targets[:, :width].flatten(),
                                        ignore_index=-100)
    loss.backward()
    with torch.no_grad():
        for p in reference.parameters():
            if p.grad is not None:
                p -= 0.1 * p.grad
    for (name, a), b in zip(model.state_dict().items(), reference.state_dict().values(),
                            strict=True):
        torch.testing.assert_close(a, b, msg=name)


def test_a_non_finite_gradient_stops_training_before_the_update(data, tmp_path: Path) -> None:
    """A finite loss whose gradient is not: caught before the optimiser step, so neither the
    weights nor any kept checkpoint hold a NaN."""
    vocab, vectors, ids = data
    model = make_model(vocab, 16, seed=3, **SMALL)
    nan_gradient_at(model, 5)
    with pytest.raises(DivergedError, match=r"gradient norm nan at or before step 5"):
        train(model, vocab, vectors, ids, tmp_path)
    kept = list(read_checkpoints(tmp_path / "ckpt"))
    assert [c.meta["steps"] for c in kept] == [4, 3]
    assert all(torch.isfinite(t).all() for c in kept for t in c.tensors.values()
               if t.is_floating_point())
    assert all(torch.isfinite(p).all() for p in model.parameters())


def test_the_device_side_guard_skips_a_non_finite_update_and_names_its_step(
        data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CUDA's path, run on the CPU (fused optimisers take the same `found_inf` flag there): the
    update of step 5 is skipped on the device, and the read before step 6's checkpoint raises,
    naming step 5. tests/test_gpu.py checks it on a GPU, with the host reads counted."""
    monkeypatch.setattr(faults, "skips_on_device", lambda device: True)
    optimizers = []
    make_optimizer = faults.make_optimizer
    monkeypatch.setattr(faults, "make_optimizer",
                        lambda *args, **kwargs: optimizers.append(make_optimizer(*args, **kwargs))
                        or optimizers[-1])
    vocab, vectors, ids = data
    model = make_model(vocab, 16, seed=3, **SMALL)
    calls = nan_gradient_at(model, 5)
    with pytest.raises(DivergedError, match=r"update skipped\) at step 5, .*step-0000000004"):
        train(model, vocab, vectors, ids, tmp_path)
    assert len(calls) == 6  # step 6 ran before the host read
    (optimizer,) = optimizers
    assert optimizer.param_groups[0]["fused"]
    # Six steps ran, five updates were applied: Adam counted the skipped one out.
    assert {float(state["step"]) for state in optimizer.state.values()} == {5.0}
    assert [c.meta["steps"] for c in read_checkpoints(tmp_path / "ckpt")] == [4, 3]
    assert all(torch.isfinite(p).all() for p in model.parameters())


def test_a_checkpoint_from_the_host_checked_path_resumes_on_the_device_side_path(
        data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkpoint written by a CPU run (its optimiser not fused) resumes where updates are
    checked on the device (CUDA's path, forced here): the restored optimiser takes this
    device's fused implementation, which accepts the skip flag."""
    train_until_killed(data, tmp_path, 8)
    monkeypatch.setattr(faults, "skips_on_device", lambda device: True)
    vocab, vectors, ids = data
    resumed = make_model(vocab, 16, seed=3, **SMALL)
    summary = train(resumed, vocab, vectors, ids, tmp_path)
    assert summary.epochs == RUN["epochs"]
    assert all(torch.isfinite(p).all() for p in resumed.parameters())


def test_starting_over_discards_damaged_checkpoints_of_later_steps(
        uninterrupted, data, tmp_path: Path) -> None:
    """Damaged checkpoints of later steps must not outrank (and so delete) the new ones."""
    whole, _, _ = uninterrupted
    vocab, vectors, ids = data
    train_until_killed(data, tmp_path, 9)
    directory = tmp_path / "ckpt"
    for path in directory.glob("*.safetensors"):
        path.write_bytes(b"garbage")
    restarted = make_model(vocab, 16, seed=3, **SMALL)
    kill_at(restarted, 3)
    with pytest.raises(Killed):
        train(restarted, vocab, vectors, ids, tmp_path)
    assert [c.meta["steps"] for c in read_checkpoints(directory)] == [2]
    resumed = make_model(vocab, 16, seed=3, **SMALL)
    train(resumed, vocab, vectors, ids, tmp_path)
    assert same_weights(whole, resumed)


def test_a_larger_patience_lets_an_early_stopped_run_continue(data, tmp_path: Path) -> None:
    vocab, vectors, ids = data
    stuck = {"optimizer": "sgd", "lr": 1e-30, "clip": 0.0}
    model = make_model(vocab, 16, seed=3, **SMALL)
    first = train(model, vocab, vectors, ids, tmp_path, epochs=10, patience=2, **stuck)
    assert first.stopped_early and first.epochs == 3
    again = train(model, vocab, vectors, ids, tmp_path, epochs=10, patience=4, **stuck)
    assert again.stopped_early and again.epochs == 5


def test_vectors_are_read_one_batch_of_rows_at_a_time(tmp_path: Path) -> None:
    """At the paper's scale the vectors do not fit in memory: the trainer indexes rows."""

    class RowsOnly:
        def __init__(self, array: np.ndarray) -> None:
            self.array, self.shape, self.ndim = array, array.shape, array.ndim
            self.most = 0

        def __len__(self) -> int:
            return len(self.array)

        def __getitem__(self, index: np.ndarray) -> np.ndarray:
            rows = self.array[index]
            self.most = max(self.most, len(rows))
            return rows

        def __array__(self, *args: object, **kwargs: object) -> np.ndarray:
            raise AssertionError("the whole array was read")

    vocab = make_vocab()
    codes, ids = copy_task(n=16)
    vectors = RowsOnly(codes)
    train(make_model(vocab, 16), vocab, vectors, ids, tmp_path, epochs=2, batch_size=4)
    assert vectors.most == 4


def test_checkpoints_keep_tied_weights(tmp_path: Path) -> None:
    """A decoder that shares one tensor between two parameters (tied embeddings) can be
    checkpointed and saved, though safetensors stores no shared memory."""
    from harness.training.checkpoint import (
        load_decoder_state,
        save_decoder,
        write_checkpoint,
    )

    tied = torch.nn.Module()
    tied.embedding = torch.nn.Embedding(5, 3)
    tied.output = torch.nn.Linear(3, 5, bias=False)
    tied.output.weight = tied.embedding.weight
    write_checkpoint(tmp_path / "ckpt", 1, dict(tied.state_dict()), {})
    [checkpoint] = read_checkpoints(tmp_path / "ckpt")
    assert torch.equal(checkpoint.tensors["output.weight"], tied.embedding.weight.detach())
    save_decoder(tied, tmp_path / "model")
    twin = torch.nn.Module()
    twin.embedding = torch.nn.Embedding(5, 3)
    twin.output = torch.nn.Linear(3, 5, bias=False)
    twin.output.weight = twin.embedding.weight
    load_decoder_state(twin, tmp_path / "model")
    assert same_weights(tied, twin) and twin.output.weight is twin.embedding.weight


def test_weights_without_their_checksum_note_are_refused(tmp_path: Path) -> None:
    from harness.training.checkpoint import MODEL_JSON, load_decoder_state, save_decoder

    vocab = make_vocab()
    save_decoder(make_model(vocab, 4), tmp_path)
    (tmp_path / MODEL_JSON).unlink()
    with pytest.raises(DataError, match=r"model\.json: missing or unreadable.*cannot be verified"):
        load_decoder_state(make_model(vocab, 4), tmp_path)


def test_the_documented_names_import_from_the_packages() -> None:
    import harness.generation as generation
    import harness.training as training
    from harness.generation.search import beam_search
    from harness.training.checkpoint import save_decoder

    assert training.train_decoder is train_decoder and training.save_decoder is save_decoder
    assert generation.beam_search is beam_search
    assert set(training.__all__) >= {"train_decoder", "DivergedError", "load_decoder_state"}
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = training.nothing


def test_no_checkpoint_is_written_with_non_finite_weights(data, tmp_path: Path) -> None:
    """The last line of defence: weights that went non-finite in an update (here by a hook
    after the optimiser's second step) are never saved as a "good" checkpoint."""
    from torch.optim.optimizer import register_optimizer_step_post_hook

    vocab, vectors, ids = data
    model = make_model(vocab, 16, seed=3, **SMALL)
    steps = 0

    def poison(optimizer, args, kwargs) -> None:
        nonlocal steps
        steps += 1
        if steps == 2:
            with torch.no_grad():
                model.output_bias[0] = float("nan")

    handle = register_optimizer_step_post_hook(poison)
    try:
        with pytest.raises(DivergedError, match=r"non-finite weights at or before step 2.*no "
                                                r"checkpoint was written yet"):
            train(model, vocab, vectors, ids, tmp_path)
    finally:
        handle.remove()
    assert list(read_checkpoints(tmp_path / "ckpt")) == []
