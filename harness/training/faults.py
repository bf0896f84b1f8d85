"""Faults in training: a non-finite loss or gradient never reaches the weights.

On a CPU each step is checked before its update. On CUDA a per-step check would stall the GPU
on a host read every step, so the check stays on the device: a fused optimiser skips the
update when the step's loss or gradient norm is not finite (the `found_inf` mechanism of AMP's
GradScaler), the first such step is noted on the device, and the host reads it every
`SYNC_EVERY` steps and before every checkpoint. Other accelerators (MPS) are checked on the
host every step, as CPUs are. Whichever path finds the fault, training stops with a
`DivergedError` that names the step and the last good checkpoint, which stays on disk.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

from harness.protocols import TrainingOptions
from harness.training.run_state import DivergedError

SYNC_EVERY = 20  # on CUDA, read the loss and the skip flag back (progress, faults) this often


def skips_on_device(device: torch.device) -> bool:
    """Whether training on `device` skips non-finite updates on the device (CUDA) rather than
    checking every step on the host (elsewhere)."""
    return device.type == "cuda"


def make_optimizer(opts: TrainingOptions, params: list[nn.Parameter],
                   fused: bool) -> torch.optim.Optimizer:
    """Adam or SGD; `fused` ones take a `found_inf` flag and skip their update on the device."""
    kind = torch.optim.SGD if opts.optimizer == "sgd" else torch.optim.Adam
    return kind(params, lr=opts.lr, weight_decay=opts.weight_decay, fused=fused or None)


class Guard:
    """One training run's checks on `device`, on the device or on the host (`on_device`),
    read back every `every` steps; `who` names the pair in errors and `last_checkpoint` is the
    newest checkpoint known to be good."""

    def __init__(self, device: torch.device, who: str) -> None:
        self.on_device = skips_on_device(device)
        self.every = SYNC_EVERY if self.on_device else 1
        self.who = who
        self.last_checkpoint: Path | None = None
        # The first step (1-based) whose update was skipped as non-finite, 0 while none was.
        self.skipped = torch.zeros((), dtype=torch.long, device=device)

    def optimizer(self, opts: TrainingOptions, params: list[nn.Parameter]
                  ) -> torch.optim.Optimizer:
        """The run's optimiser, fused where the checks stay on the device."""
        return make_optimizer(opts, params, fused=self.on_device)

    def before_update(self, total: torch.Tensor, step: int, epoch: int) -> None:
        """On the host path, raise for a non-finite loss before its update, so the weights in
        memory stay finite too."""
        if not self.on_device and not torch.isfinite(total):
            self.diverged(f"loss {total.item()}", step, epoch)

    def update(self, optimizer: torch.optim.Optimizer, total: torch.Tensor,
               grad_norm: torch.Tensor, step: int, epoch: int) -> None:
        """Apply the step's update unless its loss `total` or gradient norm is not finite: on
        the host path by raising, on the device path by the fused optimiser's skip, the step
        noted for the next read (`check`)."""
        if not self.on_device:
            if not torch.isfinite(grad_norm):
                self.diverged(f"gradient norm {grad_norm.item()}", step, epoch)
            optimizer.step()
            return
        bad = ~(torch.isfinite(total) & torch.isfinite(grad_norm))
        optimizer.found_inf = bad.float()  # type: ignore[attr-defined]
        try:
            optimizer.step()
        finally:
            del optimizer.found_inf  # type: ignore[attr-defined]
        self.skipped = torch.where(bad & (self.skipped == 0), step, self.skipped)

    def check(self, loss: torch.Tensor, grad_norms: torch.Tensor, steps: int,
              epoch: int) -> None:
        """Raise if an update was skipped as non-finite, or the loss or a gradient norm summed
        in `grad_norms` is not finite (one host read for all three)."""
        skipped, loss_finite, norms_finite = torch.stack([
            self.skipped, torch.isfinite(loss).long(), torch.isfinite(grad_norms).long()]).tolist()
        if skipped:
            self.diverged("non-finite loss or gradient norm (its update skipped)", skipped,
                          epoch, at="at")
        if not loss_finite:
            self.diverged(f"loss {float(loss)}", steps, epoch)
        if not norms_finite:
            self.diverged("non-finite gradient norm", steps, epoch)

    def check_value(self, what: str, value: float, steps: int, epoch: int) -> None:
        """Raise if `value` (a validation loss) is not finite."""
        if not math.isfinite(value):
            self.diverged(f"{what} {value}", steps, epoch)

    def check_weights(self, model: nn.Module, steps: int, epoch: int) -> None:
        """Raise unless every weight is finite: a checkpoint is only good with finite
        weights, the last line of defence."""
        weights = [p.detach() for p in model.parameters()]
        if not bool(torch.stack([torch.isfinite(w).all() for w in weights]).all()):
            self.diverged("non-finite weights", steps, epoch)

    def diverged(self, what: str, step: int, epoch: int, at: str = "at or before") -> None:
        """Raise the `DivergedError` for `what` at (or before) `step`."""
        kept = (f"the last good checkpoint ({self.last_checkpoint}) is kept"
                if self.last_checkpoint else "no checkpoint was written yet")
        raise DivergedError(
            f"{self.who}: training diverged ({what} {at} step {step}, epoch {epoch}); {kept}; "
            "lower lr or clip and rerun", step=step, checkpoint=self.last_checkpoint)
