"""Which torch device a run uses (`auto` resolved, devices this machine lacks refused) and the
precision decoders train and generate in there."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
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
    """Return a factory of the autocast context decoders run in on `device`: bf16 autocast on
    CUDA (bf16 has float32's exponent range, so no loss scaling is needed), none elsewhere
    (CPU autocast is slow for LSTMs and would change the CPU results).

    Models keep their own float32 islands inside it (the decoders' LSTMs, `full_precision`)."""
    import torch

    if device.type == "cuda":
        return lambda: torch.autocast("cuda", dtype=torch.bfloat16)
    return nullcontext
