"""Which torch device a run uses (`auto` resolved, devices this machine lacks refused) and the
precision decoders train and generate in there."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING

from harness.errors import HarnessError

if TYPE_CHECKING:
    import torch


def resolve_device(requested: str) -> str:
    """Return the torch device for `auto` (the first GPU when there is one) or as requested;
    raise HarnessError, before any work, for a device this machine does not have."""
    import torch  # not at the top: `harness list` imports this package without torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    kind, _, index = requested.partition(":")
    if kind == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0 or (index and int(index) >= count):
            have = f"{count} CUDA device{'s' if count != 1 else ''}"
            raise HarnessError(f"device {requested!r}: this machine has {have} visible to torch "
                               f"{torch.__version__}; use device cpu or auto (`--set device=cpu`)")
    if kind == "mps" and not torch.backends.mps.is_available():
        raise HarnessError(f"device {requested!r}: MPS is not available here; use device cpu or "
                           "auto (`--set device=cpu`)")
    return requested


def mixed_precision(device: torch.device) -> Callable[[], AbstractContextManager[object]]:
    """Return a factory of the precision context decoders run in on `device`.

    On CUDA: bf16 autocast (bf16 has float32's exponent range, so no loss scaling is needed),
    and TF32 for the float32 matrix products left outside it (the LSTM cells of a search step,
    as cuDNN's LSTMs in training already use). Elsewhere none: CPU autocast is slow for LSTMs
    and would change the CPU results. Models keep their own float32 islands inside it (the
    decoders' LSTMs, `full_precision`)."""
    if device.type == "cuda":
        return _cuda_mixed_precision
    return nullcontext


@contextmanager
def _cuda_mixed_precision() -> Iterator[None]:
    import torch

    with tf32_matmuls(), torch.autocast("cuda", dtype=torch.bfloat16):
        yield


@contextmanager
def tf32_matmuls() -> Iterator[None]:
    """Let CUDA's float32 matrix products use TF32 inside the context, and restore the setting
    after, by torch's per-backend precision setting (`torch.backends.cuda.matmul.
    fp32_precision`, torch >= 2.9; the legacy `allow_tf32` flag before it). The setting is the
    process's, not the thread's: do not enter this from threads that run CUDA work at once."""
    import torch

    matmul = torch.backends.cuda.matmul
    name, value = (("fp32_precision", "tf32") if hasattr(matmul, "fp32_precision")
                   else ("allow_tf32", True))
    previous = getattr(matmul, name)
    setattr(matmul, name, value)
    try:
        yield
    finally:
        setattr(matmul, name, previous)
