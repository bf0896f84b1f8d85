"""The decoders on CUDA: exact resumption, bf16 against fp32, search against the CPU reference,
and non-finite updates skipped on the device.

Every test here is marked `gpu` and skipped, with that reason in pytest's summary, where torch
sees no CUDA device (`pytest -m gpu -ra` on a GPU machine runs them all).
"""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest
import torch

from harness.generation.reference import priority_queue_beam_search
from harness.generation.search import beam_search
from harness.training import faults
from harness.training.log import TrainingLog
from harness.training.options import TrainingOptions
from harness.training.trainer import DivergedError, train_decoder
from harness.util import devices
from harness.util.devices import resolve_device
from harness_plugins.decoders import mixture as mixture_module
from tests.decoder_fakes import BOS, EOS, Killed, copy_task, kill_at, make_model, make_vocab

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(),
                                 reason="needs a CUDA device (torch sees none)")]

# Regularised like the CPU resumption tests (dropout, weight drop: the restored CUDA generator
# matters), wider, so that cuDNN runs the LSTMs.
SMALL = {"layers": 2, "hidden": 64, "experts": 2, "dropout": 0.3, "dropout_input": 0.2,
         "dropout_layers": 0.2, "dropout_embedding": 0.1, "dropout_latent": 0.2,
         "weight_drop": 0.3}
RUN = {"epochs": 3, "batch_size": 4, "lr": 5e-3, "clip": 0.5, "val_fraction": 0.25,
       "checkpoint_every": 2, "log_every": 3}

BF16_TOLERANCE = 0.05
"""Largest gap allowed between the bf16-autocast and the fp32 training loss at each logged
step (each a mean over 10 steps) of 200, as a fraction of the initial loss; their means over
all 200 steps may differ by 2/5 of that, relatively. Two runs drift apart as training goes on
(rounding changes the trajectory, not the level): with bf16 autocast on the CPU, the same test
gave gaps of at most 1.9% of the initial loss and means 0.4% apart."""


@pytest.fixture
def deterministic() -> Iterator[list[warnings.WarningMessage]]:
    """torch's deterministic algorithms (cuBLAS's workspace setting comes from conftest.py,
    before CUDA starts) and cuDNN's deterministic choice, undone afterwards. An operation torch
    has no deterministic version of warns rather than fails: the test then names it."""
    was = torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.deterministic
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.deterministic = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught
    torch.use_deterministic_algorithms(was[0])
    torch.backends.cudnn.deterministic = was[1]


@pytest.fixture
def fp32(monkeypatch: pytest.MonkeyPatch) -> None:
    """Training and search in float32 on CUDA: no autocast, no TF32 in cuDNN's LSTMs (cuBLAS
    uses none unless asked to)."""
    monkeypatch.setattr(devices, "mixed_precision", lambda device: nullcontext)
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)


def train(model: torch.nn.Module, vocab: object, vectors: np.ndarray, ids: list[list[int]],
          work: Path, **overrides: object):
    return train_decoder(model, vocab, vectors, ids, TrainingOptions(**{**RUN, **overrides}),
                         seed=7, device="cuda", checkpoint_dir=work / "ckpt",
                         log_path=work / "train.jsonl", progress=False, label="gpu test")


def cpu_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu() for k, v in model.state_dict().items()}


def test_auto_picks_the_gpu() -> None:
    assert resolve_device("auto") == "cuda"


@pytest.mark.parametrize("call", [5, 8])
def test_killed_and_resumed_on_cuda_gives_identical_weights(deterministic, tmp_path: Path,
                                                            call: int) -> None:
    """Killed right after a step checkpoint (5) or between checkpoints (8), then rerun: the
    same weights, bit for bit, as a run never killed (same GPU, same seed)."""
    vocab, (vectors, ids) = make_vocab(), copy_task(n=16)
    whole = make_model(vocab, 16, seed=3, **SMALL)
    train(whole, vocab, vectors, ids, tmp_path / "whole")

    dying = make_model(vocab, 16, seed=3, **SMALL)
    kill_at(dying, call)
    with pytest.raises(Killed):
        train(dying, vocab, vectors, ids, tmp_path / "killed")
    resumed = make_model(vocab, 16, seed=99, **SMALL)  # other initial weights: all must load
    train(resumed, vocab, vectors, ids, tmp_path / "killed")
    assert next(resumed.parameters()).is_cuda
    a, b = cpu_state(whole), cpu_state(resumed)
    assert a.keys() == b.keys()
    nondeterministic = {str(w.message) for w in deterministic if "deterministic" in str(w.message)}
    assert all(torch.equal(a[k], b[k]) for k in a), (
        [k for k in a if not torch.equal(a[k], b[k])], nondeterministic)


def copy_losses(work: Path) -> np.ndarray:
    """Mean training loss of each logged 10-step window of a copy-task run on CUDA."""
    vocab, (vectors, ids) = make_vocab(size=64, dim=32), copy_task(n=64, vocab_size=64)
    model = make_model(vocab, 64, seed=5, layers=2, hidden=128, experts=3, dropout=0.0,
                       dropout_input=0.0, dropout_layers=0.0, freeze_embeddings=False)
    train(model, vocab, vectors, ids, work, epochs=25, batch_size=8, lr=3e-3, clip=1.0,
          val_fraction=0.0, checkpoint_every=0, log_every=10)
    records = [r for r in TrainingLog(work / "train.jsonl").records() if r["event"] == "step"]
    assert len(records) == 20  # 25 epochs x 8 batches = 200 steps
    return np.array([r["loss"] for r in records])


def test_bf16_training_follows_fp32(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """200 steps of the copy task from the same weights and batches: the bf16-autocast loss
    curve stays within BF16_TOLERANCE of the float32 one."""
    mixed = copy_losses(tmp_path / "bf16")
    request.getfixturevalue("fp32")
    full = copy_losses(tmp_path / "fp32")
    assert full[-1] < 0.5 * full[0]  # it learned: the comparison is not between two flat lines
    gap = np.abs(mixed - full) / full[0]
    assert gap.max() <= BF16_TOLERANCE, (gap.max(), mixed.tolist(), full.tolist())
    assert abs(mixed.mean() - full.mean()) <= 0.4 * BF16_TOLERANCE * full.mean()


@pytest.fixture(scope="module")
def trained() -> tuple[torch.nn.Module, np.ndarray]:
    """A decoder trained on the CPU to regenerate 32 random subword sequences from one-hot
    codes, and noisy codes that make its search less certain than on the training vectors."""
    vocab, (vectors, ids) = make_vocab(), copy_task(n=32)
    model = make_model(vocab, 32, seed=0, hidden=64, experts=2, dropout=0.0, dropout_input=0.0,
                       dropout_layers=0.0, freeze_embeddings=False)
    with tempfile.TemporaryDirectory() as work:
        train_decoder(model, vocab, vectors, ids,
                      TrainingOptions(epochs=30, batch_size=8, lr=1e-2, clip=1.0,
                                      val_fraction=0.0),
                      seed=1, device="cpu", checkpoint_dir=Path(work) / "ckpt",
                      log_path=Path(work) / "train.jsonl", progress=False)
    noisy = vectors + np.random.default_rng(3).normal(0, 0.5, vectors.shape).astype(np.float32)
    return model.eval(), noisy


SEARCH = {"beam": 5, "bos_id": BOS, "eos_id": EOS, "max_len": 8}


def cpu_reference(model: torch.nn.Module, vectors: np.ndarray) -> list:
    model.to("cpu")
    return [priority_queue_beam_search(model, v, device="cpu", **SEARCH) for v in vectors]


def test_batched_beam_on_cuda_equals_the_cpu_reference_in_fp32(trained, fp32) -> None:
    model, noisy = trained
    reference = cpu_reference(model, noisy)
    ours = beam_search(model, noisy, batch_size=32, device="cuda", **SEARCH)
    mismatched = [(a, b) for a, b in zip(ours, reference, strict=True) if a.ids != b.ids]
    assert all(abs(a.score - b.score) <= 1e-4 for a, b in mismatched), mismatched  # ties only
    np.testing.assert_allclose([h.score for h in ours], [h.score for h in reference], atol=1e-4)


def test_batched_beam_on_cuda_in_bf16_finds_the_reference_hypotheses(trained) -> None:
    """The default CUDA search (bf16 output layer) against the float32 CPU reference: the same
    best hypothesis for every sentence but near-ties, whose float32 scores (CPU, rescored)
    differ by under 0.05 nats, and scores within bf16's rounding."""
    model, noisy = trained
    reference = cpu_reference(model, noisy)
    ours = beam_search(model, noisy, batch_size=32, device="cuda", **SEARCH)
    model.to("cpu")
    for a, b, vector in zip(ours, reference, noisy, strict=True):
        if a.ids != b.ids:
            rescored = _log_prob(model, vector, a.ids)
            assert abs(rescored - b.score) <= 0.05, (a, b, rescored)
    np.testing.assert_allclose([h.score for h in ours], [h.score for h in reference], atol=0.1)
    assert sum(a.ids == b.ids for a, b in zip(ours, reference, strict=True)) >= 0.9 * len(ours)


def _log_prob(model: torch.nn.Module, vector: np.ndarray, ids: tuple[int, ...]) -> float:
    """The float32 summed log-probability of `ids` + eos from the forward pass, on the CPU."""
    with torch.no_grad():
        log_probs = model(torch.tensor([[BOS, *ids]]), torch.from_numpy(vector[None]))[0]
    return float(sum(log_probs[t, token] for t, token in enumerate([*ids, EOS])))


def test_a_non_finite_gradient_is_skipped_on_the_device_without_a_sync_per_step(
        tmp_path: Path) -> None:
    """A NaN gradient at step 45 never reaches the weights: the fused optimiser skips that
    update on the GPU, and the error, raised at the next host read (step 60), names step 45.
    Between the reads, no step waits for the GPU: torch's sync debug mode warns at every host
    synchronisation, and after the first step (optimiser state set up) only the reads at
    steps 20 and 40 do."""
    vocab, (vectors, ids) = make_vocab(), copy_task(n=400)
    model = make_model(vocab, 400, seed=3, **SMALL).to("cuda")
    every = faults.SYNC_EVERY
    syncs_before_step: list[int] = []  # warnings so far when each step's backward ran

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        def poison(grad: torch.Tensor) -> torch.Tensor:
            syncs_before_step.append(sum("synchroniz" in str(w.message) for w in caught))
            return grad * float("nan") if len(syncs_before_step) == 45 else grad

        model.output_bias.register_hook(poison)
        torch.cuda.set_sync_debug_mode("warn")
        try:
            with pytest.raises(DivergedError, match=r"update skipped\) at step 45,") as info:
                train(model, vocab, vectors, ids, tmp_path, epochs=1, val_fraction=0.0,
                      checkpoint_every=0, log_every=0)
        finally:
            torch.cuda.set_sync_debug_mode(0)
    assert info.value.step == 45
    assert len(syncs_before_step) == 3 * every  # steps 46 to 60 ran on before the read
    counts = np.diff(syncs_before_step)  # counts[i]: syncs between steps i + 1 and i + 2
    syncing = {i + 2 for i in np.flatnonzero(counts) if i + 2 > 2}
    # Exactly the two reads: the detector fires, and nothing else waits for the GPU.
    assert syncing == {every + 1, 2 * every + 1}, (
        syncing, [f"{w.filename}:{w.lineno}" for w in caught if "synchroniz" in str(w.message)])
    assert all(torch.isfinite(p).all() for p in model.parameters())


@pytest.mark.parametrize("shape", [(16, 9, 5, 10_000), (40, 5, 10_000), (3, 5, 50_000)])
def test_the_fused_mixture_computes_the_eager_one(shape: tuple[int, ...]) -> None:
    """The compiled mixture of softmaxes against the eager operations on the same bf16 logits:
    log-probabilities and their gradients agree to float32 rounding, at training (B, T, K, V)
    and search (rows, K, V) shapes, and the compiled form ran (a graph was compiled, no
    fallback)."""
    torch._dynamo.reset()  # a fresh compilation: earlier tests' models had other shapes
    counters = torch._dynamo.utils.counters
    counters.clear()
    fused = mixture_module.FusedMixture()
    generator = torch.Generator(device="cuda").manual_seed(sum(shape))
    logits = (3 * torch.randn(shape, device="cuda", generator=generator)).bfloat16()
    prior = torch.randn(shape[:-1], device="cuda", generator=generator).log_softmax(-1)
    weights = torch.randn(shape[:-2] + shape[-1:], device="cuda", generator=generator)
    results = []
    for fn in (fused, mixture_module.mixture_log_probs):
        leaf = logits.clone().requires_grad_()
        out = fn(leaf, prior)
        (grad,) = torch.autograd.grad((out * weights).sum(), leaf)
        results.append((out, grad.float()))
    (fused_out, fused_grad), (eager, eager_grad) = results
    assert fused.enabled and counters["stats"]["unique_graphs"] >= 1
    assert fused_out.dtype == torch.float32 and torch.isfinite(fused_out).all()
    torch.testing.assert_close(fused_out, eager, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(fused_grad, eager_grad, rtol=2e-2, atol=1e-3)  # bf16 gradients
