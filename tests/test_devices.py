"""The precision contexts decoders run in: none on the CPU; on CUDA bf16 autocast and TF32
matrix products, the latter restored afterwards whatever happens inside."""

from __future__ import annotations

from contextlib import nullcontext

import pytest
import torch

from harness.util.devices import mixed_precision, tf32_matmuls


def test_cpus_get_no_precision_context() -> None:
    assert mixed_precision(torch.device("cpu")) is nullcontext


def test_tf32_is_allowed_inside_and_restored_after_even_on_an_error() -> None:
    matmul = torch.backends.cuda.matmul
    before = matmul.fp32_precision
    assert before != "tf32"
    with pytest.raises(KeyError), tf32_matmuls():
        assert matmul.fp32_precision == "tf32"
        with tf32_matmuls():  # nested: the inner exit restores the outer's setting
            pass
        assert matmul.fp32_precision == "tf32"
        raise KeyError("inside")
    assert matmul.fp32_precision == before
