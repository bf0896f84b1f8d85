"""Data-parallel training of one decoder (`workers: N`): N processes (gloo on the CPU) train as
one process does on the same global batches, resume from rank 0's checkpoints, and a failing
process is named in one line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from harness.errors import HarnessError
from harness.protocols import TrainingOptions
from harness.training.checkpoint import read_checkpoints
from harness.training.distributed import Ranks, check_workers
from harness.training.options import keyed_options, weight_settings
from harness.training.trainer import DivergedError, train_decoder
from tests.decoder_fakes import make_model, make_vocab

pytestmark = pytest.mark.usefixtures("one_thread")

LABEL = "decoder 'mos-lstm' for encoder 'test'"
# No dropout: the processes' masks differ from one process's, so only then are losses equal.
PLAIN = {"layers": 1, "hidden": 32, "experts": 2, "dropout": 0.0, "dropout_input": 0.0,
         "dropout_layers": 0.0}
# 321 sentences, 32 held out: 289 = 9 x 32 + 1, so each epoch's 10 batches end with one that
# has a single sentence, and rank 1's share of it is empty (it trains on a stand-in weighed 0).
RUN = {"epochs": 3, "batch_size": 32, "lr": 5e-3, "clip": 0.5, "val_fraction": 0.1,
       "checkpoint_every": 4, "log_every": 5}


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory):
    """321 random sentences with random 16-d vectors, memory-mapped (they travel as a path)."""
    rng = np.random.default_rng(0)
    ids = [rng.integers(3, 24, size=rng.integers(2, 9)).tolist() for _ in range(321)]
    path = tmp_path_factory.mktemp("data") / "vectors.npy"
    np.save(path, rng.normal(size=(len(ids), 16)).astype(np.float32))
    return make_vocab(), np.load(path, mmap_mode="r"), ids


def train(model: torch.nn.Module, data: tuple, work: Path, device: str = "cpu", **overrides):
    vocab, vectors, ids = data
    return train_decoder(model, vocab, vectors, ids, TrainingOptions(**{**RUN, **overrides}),
                         seed=7, device=device, checkpoint_dir=work / "ckpt",
                         log_path=work / "train.jsonl", progress=False, label=LABEL)


def epochs(work: Path) -> list[dict]:
    records = map(json.loads, (work / "train.jsonl").read_text().splitlines())
    return [r for r in records if r["event"] == "epoch"]


def records(work: Path) -> list[tuple[str, int]]:
    return [(r["event"], r["step"]) for r in
            map(json.loads, (work / "train.jsonl").read_text().splitlines())]


def largest_difference(a: torch.nn.Module, b: torch.nn.Module) -> float:
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    return max(float((sa[k].float() - sb[k].float()).abs().max()) for k in sa)


class Faulty(torch.nn.Module):
    """A decoder whose training forward passes on rank `rank` fail from the `call`-th on: they
    raise (`fault="raise"`) or return NaN log-probabilities (`fault="nan"`). A module-level
    class, so the launcher can pickle it to the processes."""

    def __init__(self, inner: torch.nn.Module, rank: int, call: int, fault: str) -> None:
        super().__init__()
        self.inner, self.input_dim = inner, inner.input_dim
        self.rank, self.call, self.fault, self.calls = rank, call, fault, 0

    def forward(self, inputs: torch.Tensor, vectors: torch.Tensor) -> torch.Tensor:
        out = self.inner(inputs, vectors)
        if self.training and int(os.environ.get("RANK", "0")) == self.rank:
            self.calls += 1
            if self.calls >= self.call:
                if self.fault == "raise":
                    raise RuntimeError(f"rank {self.rank} broke\nsecond line of the error")
                return out * float("nan")
        return out


# --- what stays the same -----------------------------------------------------------------------

def test_two_workers_train_as_one_does(data, tmp_path: Path) -> None:
    """The same global batches, split over two processes: the same losses every epoch and the
    same weights, up to float rounding (the shares' sums are added in another order)."""
    vocab = data[0]
    one = make_model(vocab, 16, seed=3, **PLAIN)
    two = make_model(vocab, 16, seed=3, **PLAIN)
    summary_one = train(one, data, tmp_path / "one")
    summary_two = train(two, data, tmp_path / "two", workers=2)
    assert (summary_two.epochs, summary_two.steps, summary_two.best_epoch) == \
        (summary_one.epochs, summary_one.steps, summary_one.best_epoch) == (3, 30, 3)
    log_one, log_two = epochs(tmp_path / "one"), epochs(tmp_path / "two")
    assert [r["step"] for r in log_two] == [r["step"] for r in log_one] == [10, 20, 30]
    for a, b in zip(log_one, log_two, strict=True):
        assert b["train_loss"] == pytest.approx(a["train_loss"], rel=1e-4, abs=0)
        assert b["val_loss"] == pytest.approx(a["val_loss"], rel=1e-4, abs=0)
    assert summary_two.val_loss == pytest.approx(summary_one.val_loss, rel=1e-4, abs=0)
    assert largest_difference(one, two) < 1e-4
    # Rank 0 alone wrote the log (no record twice) and the checkpoints.
    assert records(tmp_path / "two") == records(tmp_path / "one")
    assert [c.meta["steps"] for c in read_checkpoints(tmp_path / "two" / "ckpt")] == [30, 28]
    assert all(torch.isfinite(p).all() for p in two.parameters())


def test_a_two_worker_run_resumes_from_its_checkpoints_as_if_uninterrupted(
        data, tmp_path: Path) -> None:
    """With dropout on (each process draws its own masks, from (seed, rank, step) after every
    checkpoint): a run of one epoch continued to two ends with exactly the weights and log
    of a run of two epochs."""
    vocab = data[0]
    options = {**PLAIN, "dropout": 0.3, "dropout_input": 0.2}
    whole = make_model(vocab, 16, seed=3, **options)
    train(whole, data, tmp_path / "whole", workers=2, epochs=2)
    first = make_model(vocab, 16, seed=3, **options)
    train(first, data, tmp_path / "parts", workers=2, epochs=1)
    assert largest_difference(first, whole) > 0  # one epoch short
    resumed = make_model(vocab, 16, seed=3, **options)
    summary = train(resumed, data, tmp_path / "parts", workers=2, epochs=2)
    assert summary.epochs == 2 and summary.steps == 20
    assert largest_difference(resumed, whole) == 0.0
    stable = ("epoch", "step", "train_loss", "val_loss", "lr")
    assert [[r[k] for k in stable] for r in epochs(tmp_path / "parts")] == \
        [[r[k] for k in stable] for r in epochs(tmp_path / "whole")]


@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_two_gpus_train_as_one_does(data, tmp_path: Path) -> None:
    """NCCL, `cuda:0` and `cuda:1`. The output layer runs in bf16 there (autocast), whose
    rounding moves two runs apart more than float32's does: the losses are compared to 2%, as
    tests/test_gpu.py compares bf16 with fp32 training."""
    vocab = data[0]
    one = make_model(vocab, 16, seed=3, **PLAIN)
    two = make_model(vocab, 16, seed=3, **PLAIN)
    train(one, data, tmp_path / "one", device="cuda")
    summary = train(two, data, tmp_path / "two", workers=2, device="cuda")
    assert summary.steps == 30 and records(tmp_path / "two") == records(tmp_path / "one")
    for a, b in zip(epochs(tmp_path / "one"), epochs(tmp_path / "two"), strict=True):
        assert b["train_loss"] == pytest.approx(a["train_loss"], rel=0.02)
        assert b["val_loss"] == pytest.approx(a["val_loss"], rel=0.02)
    assert next(two.parameters()).device.type == "cuda"


# --- faults ------------------------------------------------------------------------------------

def test_a_failing_worker_is_named_in_one_line(data, tmp_path: Path) -> None:
    model = Faulty(make_model(data[0], 16, seed=3, **PLAIN), rank=1, call=3, fault="raise")
    with pytest.raises(HarnessError) as caught:
        train(model, data, tmp_path, workers=2)
    message = str(caught.value)
    assert "\n" not in message and not isinstance(caught.value, DivergedError)
    assert message.startswith(f"{LABEL}: training process 1 of 2 failed: RuntimeError: rank 1 "
                              "broke (traceback: ")
    traceback = Path(message.split("(traceback: ")[1].rstrip(")"))
    assert "second line of the error" in traceback.read_text()


def test_divergence_on_one_worker_stops_all_and_surfaces_as_diverged_error(
        data, tmp_path: Path) -> None:
    """A NaN loss on rank 1 makes the summed loss NaN on every process: all stop before the
    update, and the caller gets DivergedError with the step and rank 0's last checkpoint."""
    model = Faulty(make_model(data[0], 16, seed=3, **PLAIN), rank=1, call=6, fault="nan")
    with pytest.raises(DivergedError, match=r"loss nan at or before step 6, epoch 1\); the last "
                                            r"good checkpoint \(.*step-0000000004\.json\)") as caught:
        train(model, data, tmp_path, workers=2, checkpoint_every=4)
    assert caught.value.step == 6 and caught.value.checkpoint.name == "step-0000000004.json"
    assert LABEL in str(caught.value)
    assert [c.meta["steps"] for c in read_checkpoints(tmp_path / "ckpt")] == [4]


# --- the option --------------------------------------------------------------------------------

def test_workers_is_validated_and_keys_the_weights_except_at_one() -> None:
    """`workers` changes the weights (float rounding): part of the cache key and of a
    checkpoint's settings, except at 1, so what was cached before the option existed stays
    valid."""
    with pytest.raises(ValueError):
        TrainingOptions(workers=0)
    one, two = TrainingOptions(), TrainingOptions(workers=2)
    assert "workers" not in weight_settings(one) and weight_settings(two)["workers"] == 2
    assert weight_settings(one) == {k: v for k, v in weight_settings(two).items()
                                    if k not in ("workers", "checkpoint_every")}
    dumped = two.model_dump(mode="json")
    assert keyed_options(dumped)["workers"] == 2 and "log_every" not in keyed_options(dumped)
    assert "workers" not in keyed_options(one.model_dump(mode="json"))


def test_workers_the_device_cannot_hold_are_refused_before_anything_starts() -> None:
    with pytest.raises(HarnessError, match=f"^{LABEL}: workers: 9 needs 9 GPUs, torch sees "):
        check_workers(torch.device("cuda"), 9, LABEL)
    with pytest.raises(HarnessError, match="trains on CUDA or CPUs, not mps"):
        check_workers(torch.device("mps"), 2, LABEL)
    check_workers(torch.device("cpu"), 4, LABEL)


def test_a_global_batch_is_split_as_evenly_as_possible() -> None:
    batch = np.arange(7)
    parts = [Ranks(rank, 3).share(batch) for rank in range(3)]
    assert [p.tolist() for p in parts] == [[0, 1, 2], [3, 4], [5, 6]]
    assert [len(Ranks(rank, 2).share(np.arange(1))) for rank in range(2)] == [1, 0]
    assert Ranks(0, 1).share(batch) is batch


def test_with_several_workers_how_often_they_checkpoint_keys_the_weights() -> None:
    """Several processes reseed their dropout at every checkpoint: `checkpoint_every` changes
    their weights, so it keys them and a checkpoint written with another value is refused;
    with one process it is bookkeeping, as before."""
    from harness.training.options import keyed_options, weight_settings

    one = TrainingOptions(checkpoint_every=50, log_every=10)
    two = TrainingOptions(checkpoint_every=50, log_every=10, workers=2)
    assert "checkpoint_every" not in keyed_options(one.model_dump())
    assert "checkpoint_every" not in weight_settings(one)
    assert keyed_options(two.model_dump())["checkpoint_every"] == 50
    assert weight_settings(two)["checkpoint_every"] == 50
    assert "log_every" not in keyed_options(two.model_dump())
