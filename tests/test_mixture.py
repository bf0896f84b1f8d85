"""The mixture of softmaxes: its compiler-friendly form against the eager one, the fused
form's fallback, and the graphs one decoder's training, validation and search compile."""

from __future__ import annotations

import logging
import shutil

import pytest
import torch

from harness_plugins.decoders import mixture as mixture_module
from harness_plugins.decoders.mixture import FusedMixture, mixture_by_experts, mixture_log_probs


def inputs(shape: tuple[int, ...], seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """bf16 logits (..., K, V) of a realistic spread and log mixture weights (..., K)."""
    generator = torch.Generator().manual_seed(seed)
    logits = (3 * torch.randn(shape, generator=generator)).bfloat16()
    return logits, torch.randn(shape[:-1], generator=generator).log_softmax(-1)


@pytest.mark.parametrize("shape", [(4, 7, 5, 300), (12, 5, 300), (3, 1, 2, 50)])
def test_the_per_expert_form_is_the_eager_function(shape: tuple[int, ...]) -> None:
    logits, prior = inputs(shape)
    expected = mixture_log_probs(logits, prior)
    torch.testing.assert_close(mixture_by_experts(logits, prior), expected, rtol=0, atol=2e-6)
    # a distribution over V for every position, the experts' weights summing to one
    torch.testing.assert_close(expected.exp().sum(-1), torch.ones(shape[:-2]))


def test_cpu_tensors_take_the_eager_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact CPU results stay those of the eager operations."""
    monkeypatch.setattr(mixture_module, "FUSED", None)  # would fail if called
    logits, prior = inputs((2, 3, 4, 20))
    assert torch.equal(mixture_module.mixture(logits, prior), mixture_log_probs(logits, prior))


def test_a_compiler_failure_falls_back_to_the_eager_form(caplog) -> None:
    def broken(fn, **kwargs):
        raise RuntimeError("no compiler here")

    fused = FusedMixture(compile_fn=broken)
    logits, prior = inputs((2, 3, 4, 20))
    with caplog.at_level(logging.WARNING):
        out = fused(logits, prior)
    assert torch.equal(out, mixture_log_probs(logits, prior))
    assert not fused.enabled and "did not compile (RuntimeError: no compiler here)" in caplog.text


def test_running_out_of_memory_is_not_taken_for_a_compiler_failure() -> None:
    def out_of_memory(logits: torch.Tensor, prior: torch.Tensor) -> torch.Tensor:
        raise torch.OutOfMemoryError("out of memory")

    fused = FusedMixture(compile_fn=lambda fn, **kwargs: out_of_memory)
    with pytest.raises(torch.OutOfMemoryError):
        fused(*inputs((2, 3, 4, 20)))
    assert fused.enabled


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None,
                    reason="torch.compile on the CPU needs a C++ compiler")
def test_one_decoder_compiles_a_handful_of_graphs_and_stays_fused() -> None:
    """Training (4-D, with gradients, batches of other sizes and lengths), validation (4-D, no
    gradients) and search (3-D, inference mode, shrinking rows) of one decoder: compiled on
    the CPU here as on CUDA, equal to the eager form, within a few graphs and far from the
    recompilation limit, so the fusion never silently ends in a run."""
    torch._dynamo.reset()
    counters = torch._dynamo.utils.counters
    counters.clear()
    fused = FusedMixture()
    cases = [((8, 7, 5, 200), torch.enable_grad), ((6, 4, 5, 200), torch.enable_grad),
             ((8, 9, 5, 200), torch.no_grad), ((40, 5, 200), torch.inference_mode),
             ((30, 5, 200), torch.inference_mode), ((10, 5, 200), torch.inference_mode)]
    for shape, mode in cases:
        logits, prior = inputs(shape, seed=len(shape))
        with mode():
            leaf = logits.clone().requires_grad_(torch.is_grad_enabled())
            out = fused(leaf, prior)
            if torch.is_grad_enabled():
                out.sum().backward()
        torch.testing.assert_close(out, mixture_log_probs(logits, prior), rtol=0, atol=5e-6)
    assert fused.enabled
    graphs = counters["stats"]["unique_graphs"]
    assert 1 <= graphs <= 4 < torch._dynamo.config.recompile_limit
