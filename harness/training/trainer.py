"""Teacher-forced training of any conditional decoder, resumable at any step.

The decoder learns to regenerate each training sentence from its vector (Kerscher & Eger 2020,
section 2): the loss is the token-level negative log-likelihood of `ids + [eos]` given
`[bos] + ids` and the sentence vector. Checkpoints hold the weights, the optimiser, the random
generators and the position in the epoch's batch order, so a run killed at any moment and rerun
ends with the same weights as an uninterrupted one. On a GPU that takes deterministic kernels,
which the caller sets: `torch.use_deterministic_algorithms(True)`,
`torch.backends.cudnn.deterministic = True` and `CUBLAS_WORKSPACE_CONFIG=:4096:8` before CUDA
starts (tests/test_gpu.py).

A non-finite loss or gradient never reaches the weights (`harness.training.faults`: checked
on the host before each update, or on CUDA skipped on the device and read back every few steps).

With the option `workers` > 1 this loop runs in that many processes, one decoder data-parallel
(`harness.training.distributed`): each trains on its share of every global batch, the losses
are summed over the processes and DDP averages the gradients, so every check and every step
above acts on what one process would compute, up to float rounding.
"""

from __future__ import annotations

import gc
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from torch import nn
from tqdm.auto import tqdm

from harness.errors import DataError
from harness.protocols import TrainingOptions, wants_vector_statistics
from harness.training import distributed, faults, state
from harness.training.batches import (
    IGNORE,
    Batch,
    bucketed_batches,
    check_training_data,
    padded_batches,
    sorted_batches,
    split_validation,
    vector_statistics,
)
from harness.training.checkpoint import (  # noqa: F401 - re-exported for the train stage
    MODEL_FILE,
    MODEL_JSON,
    checkpoint_json,
    discard_newer,
    load_decoder_state,
    read_checkpoints,
    save_decoder,
    write_checkpoint,
)
from harness.training.distributed import ONE, Ranks, WorkerJob
from harness.training.log import DiscardedLog, TrainingLog
from harness.training.options import weight_settings
from harness.training.rows import file_rows
from harness.training.run_state import (  # noqa: F401 - re-exported: the public names
    DivergedError,
    Position,
    TrainingSummary,
    epochs_without_improvement,
    monitored_losses,
)
from harness.training.token_ids import TokenIds, sentence_lengths
from harness.util import devices
from harness.util.devices import resolve_device

log = logging.getLogger(__name__)


def train_decoder(model: nn.Module, vocab: Any, train_vectors: Any,
                  train_ids: Sequence[Sequence[int]] | TokenIds, options: TrainingOptions, *,
                  seed: int, device: str | torch.device, checkpoint_dir: Path, log_path: Path,
                  progress: bool = True, label: str | None = None,
                  redraw: Callable[[int], Any] | None = None) -> TrainingSummary:
    """Return the summary of training `model` to regenerate `train_ids` from `train_vectors`.

    `options` are read as given: a decoder's `DecoderOptions` is a `TrainingOptions`.
    `train_vectors` (N, D) may be a memory map: only one batch of rows is read at a time, with
    file reads (`harness.training.rows`), so the process never holds more of the file than that.
    `train_ids` are subword ids without bos/eos, a sequence of sequences or, at the paper's size,
    a compact `TokenIds`; `vocab` gives `pad_id`, `bos_id` and `eos_id`.
    `label` names the encoder/decoder pair in messages. When `checkpoint_dir` holds a checkpoint,
    training continues from the newest intact one. The caller seeds torch before building the
    model; `seed` fixes the validation split and the batch order.
    With `options.workers` > 1, `workers` processes train the model together
    (`harness.training.distributed`); with 1, this process alone. With `redraw` (one process),
    epoch e > 1 trains on `redraw(e)`, a fresh draw of all N rows (a randomised defence's
    noise); epoch 1, the vector statistics and validation read `train_vectors`."""
    who = label or "decoder"
    check_training_data(model, train_vectors, train_ids, who)
    resolved = torch.device(resolve_device(str(device)))
    if options.workers > 1:
        assert redraw is None, f"{who}: fresh vectors every epoch train in one process"
        return distributed.train_in_workers(
            _train_rank, model, vocab, train_vectors, train_ids, options, seed=seed,
            device=resolved, checkpoint_dir=Path(checkpoint_dir), log_path=Path(log_path),
            progress=progress, who=who)
    trainer = _Trainer(model, vocab, file_rows(train_vectors), train_ids, options, seed=seed,
                       device=resolved, directory=Path(checkpoint_dir),
                       training_log=TrainingLog(log_path), progress=progress,
                       who=who, redraw=redraw)
    return trainer.run()


def _train_rank(job: WorkerJob) -> TrainingSummary | None:
    """Return the summary on rank 0 (None elsewhere) of one process's part in training a
    decoder data-parallel; rank 0 saves the trained weights in `job.result_dir`. The entry
    point every process the launcher starts runs."""
    ranks, device, model = distributed.start(job)
    try:
        summary = _rank_run(job, ranks, device, model)
    except Exception as error:
        distributed.record_failure(job, ranks.rank, error)
        raise
    finally:
        # The trainer's DDP wrapper goes before the process group it uses: a gloo group torn
        # down under a live wrapper can hang the process as it exits.
        gc.collect()
        torch.distributed.destroy_process_group()
    if not ranks.writes:
        return None
    save_decoder(model, job.result_dir)
    return summary


def _rank_run(job: WorkerJob, ranks: Ranks, device: torch.device,
              model: nn.Module) -> TrainingSummary:
    """Return the summary of this process's training; its trainer is freed on return."""
    trainer = _Trainer(
        model, job.specials, job.vectors, distributed.token_ids(job), job.options,
        seed=job.seed, device=device, directory=job.checkpoint_dir,
        training_log=(TrainingLog if ranks.writes else DiscardedLog)(job.log_path),
        progress=job.progress and ranks.writes, who=job.who, ranks=ranks)
    return trainer.run()


class _Trainer:
    """One training run: the loop, validation, schedule, early stopping and checkpoints."""

    def __init__(self, model: nn.Module, vocab: Any, vectors: Any,
                 ids: Sequence[Sequence[int]] | TokenIds, opts: TrainingOptions, *, seed: int,
                 device: torch.device, directory: Path, training_log: TrainingLog,
                 progress: bool, who: str, ranks: Ranks = ONE,
                 redraw: Callable[[int], Any] | None = None) -> None:
        self.model, self.vocab, self.vectors, self.ids = model, vocab, vectors, ids
        self.redraw = redraw
        self.opts, self.seed, self.device, self.directory = opts, seed, device, directory
        self.log, self.progress, self.who, self.ranks = training_log, progress, who, ranks
        model.to(device)
        # What a training step calls: the model, or (several processes) its DDP wrapper.
        self.forward: nn.Module = model
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.guard = faults.Guard(device, who)
        self.optimizer = self.guard.optimizer(opts, self.params)
        self.lengths = sentence_lengths(ids)
        self.train_index, self.val_index = split_validation(len(ids), opts.val_fraction, seed)
        self.config = {**weight_settings(opts), "seed": seed, "sentences": len(ids)}
        self.position = Position()
        self.best: dict[str, torch.Tensor] | None = None
        self.autocast = devices.mixed_precision(device)

    # --- the run --------------------------------------------------------------------------

    def run(self) -> TrainingSummary:
        if self.ranks.world == 1:
            self._resume()
        else:
            self._resume_together()
        if self.position.steps == 0 and self.position.epoch == 1:
            self._set_vector_statistics()
        self.log.path.parent.mkdir(parents=True, exist_ok=True)
        self.log.rewind(self.position.steps)
        if self.ranks.world > 1:
            # Averages the processes' gradients during the backward pass.
            self.forward = nn.parallel.DistributedDataParallel(
                self.model, device_ids=[self.device] if self.device.type == "cuda" else None)
        p = self.position
        while p.epoch <= self.opts.epochs and not p.stopped_early:
            self._train_epoch()
            self._end_epoch()
        if self.best is not None and self.val_index.size:
            self.model.load_state_dict({k: v.to(self.device) for k, v in self.best.items()})
        return self._summary()

    def _set_vector_statistics(self) -> None:
        """Give a decoder that standardises its inputs the training vectors' statistics
        (`harness.protocols.StandardisedInputs`)."""
        if not wants_vector_statistics(self.model):
            return
        mean, var = vector_statistics(self.vectors, self.train_index)
        self.model.set_vector_statistics(torch.from_numpy(mean).float().to(self.device),
                                          torch.from_numpy(var).float().to(self.device))

    def _train_epoch(self) -> None:
        p, opts = self.position, self.opts
        order = bucketed_batches(self.train_index, self.lengths, opts.batch_size, self.seed,
                                 p.epoch)
        epoch_loss = torch.tensor(p.epoch_loss, dtype=torch.float32, device=self.device)
        log_loss = torch.tensor(p.log_loss, dtype=torch.float32, device=self.device)
        # Sum of the gradient norms since the last check: non-finite once any of them is.
        grad_norms = torch.zeros((), dtype=torch.float32, device=self.device)
        bar = tqdm(total=len(order), initial=p.batch, desc=f"{self.who} epoch {p.epoch}",
                   unit="batch", disable=None if self.progress else True, leave=False)
        self.model.train()
        vectors = self.vectors if self.redraw is None or p.epoch == 1 else self.redraw(p.epoch)
        since = time.perf_counter()
        batches = distributed.shares(self.ranks, order[p.batch:], self.lengths, self.vocab,
                                     vectors, self.ids, self.device)
        for batch, tokens, counted in batches:
            if opts.schedule == "linear":
                self._set_lr(opts.lr * (1.0 - p.steps / (opts.epochs * len(order))))
            loss, grad_norm = self._step(batch, tokens, counted)
            grad_norms += grad_norm
            epoch_loss += loss
            log_loss += loss
            p.steps += 1
            p.batch += 1
            p.epoch_tokens += tokens
            p.log_tokens += tokens
            bar.update()
            now = time.perf_counter()
            p.epoch_seconds += now - since
            p.log_seconds += now - since
            since = now
            if p.steps % self.guard.every == 0:
                self._check_finite(epoch_loss, grad_norms)
                grad_norms.zero_()
                if self.progress:
                    bar.set_postfix(loss=f"{float(epoch_loss) / p.epoch_tokens:.3f}",
                                    tok_s=f"{p.epoch_tokens / max(p.epoch_seconds, 1e-9):,.0f}",
                                    refresh=False)
            if opts.log_every and p.steps % opts.log_every == 0:
                self._check_finite(epoch_loss, grad_norms)
                self.log.write({"event": "step", "epoch": p.epoch, "step": p.steps,
                                "loss": float(log_loss) / max(p.log_tokens, 1),
                                "tokens_per_s": p.log_tokens / max(p.log_seconds, 1e-9),
                                "lr": self._lr()})
                log_loss.zero_()
                p.log_tokens, p.log_seconds = 0, 0.0
            if (opts.checkpoint_every and p.steps % opts.checkpoint_every == 0
                    and p.batch < len(order)):
                self._check_finite(epoch_loss, grad_norms)
                p.epoch_loss, p.log_loss = float(epoch_loss), float(log_loss)
                self._checkpoint()
        bar.close()
        self._check_finite(epoch_loss, grad_norms)
        # That read waited for the GPU's last steps: their time belongs to the epoch.
        waited = time.perf_counter() - since
        p.epoch_seconds += waited
        p.log_seconds += waited
        p.epoch_loss, p.log_loss = float(epoch_loss), float(log_loss)

    def _step(self, batch: Batch, tokens: int,
              counted: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
        """Return the global batch's summed NLL and the gradient norm (detached scalars) after
        one step on its mean NLL over its `tokens`; `batch` is this process's share."""
        with self.autocast():
            log_probs = self.forward(batch.inputs, batch.vectors)
        loss_sum = nn.functional.nll_loss(log_probs.float().flatten(0, 1),
                                          batch.targets.flatten(), ignore_index=IGNORE,
                                          reduction="sum")
        if not counted:
            loss_sum = loss_sum * 0.0
        total = self.ranks.total(loss_sum.detach())  # the same on every process
        step, epoch = self.position.steps + 1, self.position.epoch
        self.guard.before_update(total, step, epoch)
        self.optimizer.zero_grad(set_to_none=True)
        if self.ranks.world == 1:
            (loss_sum / tokens).backward()
        else:
            # DDP averages the processes' gradients: scaled by world / tokens, their average
            # is the gradient of the global batch's mean NLL, as one process computes it.
            (loss_sum * (self.ranks.world / tokens)).backward()
        # The norm before clipping (clip 0: an infinite threshold, no clipping); a non-finite
        # one may leave non-finite gradients, which the update below never applies.
        grad_norm = nn.utils.clip_grad_norm_(self.params,
                                             self.opts.clip if self.opts.clip > 0 else math.inf)
        self.guard.update(self.optimizer, total, grad_norm, step, epoch)
        return total, grad_norm.detach()

    def _end_epoch(self) -> None:
        """Validate, adjust the learning rate, decide on early stopping, log and checkpoint."""
        p, opts = self.position, self.opts
        train_loss = p.epoch_loss / max(p.epoch_tokens, 1)
        val_loss = self._validation_loss() if self.val_index.size else None
        monitored = train_loss if val_loss is None else val_loss
        record = {"event": "epoch", "epoch": p.epoch, "step": p.steps, "train_loss": train_loss,
                  "val_loss": val_loss, "lr": self._lr(),
                  "tokens_per_s": p.epoch_tokens / max(p.epoch_seconds, 1e-9),
                  "seconds": p.epoch_seconds}
        if p.best_loss is None or monitored < p.best_loss:
            p.best_loss, p.best_epoch = monitored, p.epoch
            if val_loss is not None:
                self.best = state.copy_weights(self.model)
        if opts.schedule == "plateau":
            if p.plateau_loss is None or monitored < p.plateau_loss:
                p.plateau_loss, p.plateau_epochs = monitored, 0
            else:
                p.plateau_epochs += 1
                if p.plateau_epochs > opts.lr_patience:
                    self._set_lr(self._lr() * opts.lr_factor)
                    p.plateau_epochs = 0
        p.history.append(record)
        p.bad_epochs = epochs_without_improvement(monitored_losses(p.history), opts.min_delta)
        p.stopped_early = bool(opts.patience) and p.bad_epochs >= opts.patience
        self.log.write(record)
        p.epoch, p.batch = p.epoch + 1, 0
        p.epoch_loss, p.epoch_tokens, p.epoch_seconds = 0.0, 0, 0.0
        self._checkpoint()

    def _validation_loss(self) -> float:
        """Return the mean NLL per token (nats) of the held-out sentences (no RNG drawn); with
        several processes, each sums its shares of the batches and the sums are added."""
        order = sorted_batches(self.val_index, self.lengths, self.opts.batch_size)
        if self.ranks.world > 1:
            order = [share for share in map(self.ranks.share, order) if len(share)]
        # float64 where the device has it: millions of tokens are summed.
        dtype = torch.float32 if self.device.type == "mps" else torch.float64
        total = torch.zeros((), dtype=dtype, device=self.device)
        tokens = 0
        self.model.eval()
        try:
            with torch.no_grad():
                for batch in padded_batches(order, self.vocab, self.vectors, self.ids,
                                            self.device):
                    with self.autocast():
                        log_probs = self.model(batch.inputs, batch.vectors)
                    total += nn.functional.nll_loss(
                        log_probs.float().flatten(0, 1), batch.targets.flatten(),
                        ignore_index=IGNORE, reduction="sum").to(dtype)
                    tokens += batch.tokens
        finally:
            self.model.train()
        if self.ranks.world > 1:
            sums = self.ranks.total(torch.stack([total, torch.full_like(total, tokens)]))
            total, tokens = sums[0], int(sums[1])
        value = float(total) / max(tokens, 1)
        self.guard.check_value("validation loss", value, self.position.steps, self.position.epoch)
        return value

    def _lr(self) -> float:
        return float(self.optimizer.param_groups[0]["lr"])

    def _set_lr(self, lr: float) -> None:
        """Set the rate of every parameter group: the plateau schedule's factor, or the linear
        schedule's lr * (1 - steps / (epochs * batches per epoch)) before each step (a
        function of the step count alone, so a resumed run continues the same decay)."""
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    def _check_finite(self, loss: torch.Tensor, grad_norms: torch.Tensor) -> None:
        self.guard.check(loss, grad_norms, self.position.steps, self.position.epoch)

    # --- checkpoints ------------------------------------------------------------------------

    def _checkpoint(self) -> None:
        self.guard.check_weights(self.model, self.position.steps, self.position.epoch)
        if not self.ranks.writes:  # the weights are rank 0's, which writes them
            self.guard.last_checkpoint = checkpoint_json(self.directory, self.position.steps)
            self._reseed()
            return
        tensors, rest = state.capture(self.model, self.optimizer, self.best, self.device)
        meta = {"config": self.config, "position": asdict(self.position), "who": self.who,
                **rest}
        self.guard.last_checkpoint = write_checkpoint(self.directory, self.position.steps,
                                                      tensors, meta)
        self._reseed()

    def _reseed(self) -> None:
        """With several processes, seed this one's random generators (dropout) from (seed,
        rank, steps) after every checkpoint and resume: rank 0's checkpoint cannot hold the
        others' generators, and a resumed run must draw what an uninterrupted one draws."""
        if self.ranks.world > 1:
            torch.manual_seed(self.ranks.dropout_seed(self.seed, self.position.steps))

    def _resume_together(self) -> None:
        """Resume every process from the same checkpoint: rank 0 first (it deletes damaged
        ones), then the others read the checkpoint it took."""
        if self.ranks.writes:
            self._resume()
        self.ranks.barrier()
        if not self.ranks.writes:
            self._resume()
        if not self.ranks.agree(self.position.steps, self.device):
            raise DataError(f"{self.who}: the training processes found different checkpoints "
                            f"in {self.directory}: delete it to start over")
        self._reseed()

    def _resume(self) -> None:
        """Continue from the newest intact checkpoint, if any."""
        for checkpoint in read_checkpoints(self.directory):
            saved = checkpoint.meta.get("config")
            if saved != self.config:
                raise DataError(f"{self.who}: checkpoint {checkpoint.path} was written with "
                                f"{saved}, not {self.config}: delete {self.directory} to start "
                                "over")
            self.best = state.restore(checkpoint.tensors, checkpoint.meta, self.model,
                                      self.optimizer, self.device)
            # The saved groups carry the implementation of the device they were written on (a
            # fused one on CUDA); this device's is the one that can take its `found_inf`.
            for group in self.optimizer.param_groups:
                group.update(fused=self.guard.on_device or None, foreach=None)
            self.position = Position(**checkpoint.meta["position"])
            # `patience` and `min_delta` may have changed since: a larger patience or a smaller
            # minimum improvement lets a stopped run continue.
            p = self.position
            p.bad_epochs = epochs_without_improvement(monitored_losses(p.history),
                                                      self.opts.min_delta)
            p.stopped_early = bool(self.opts.patience) and p.bad_epochs >= self.opts.patience
            self.guard.last_checkpoint = checkpoint.path
            discard_newer(self.directory, self.position.steps)
            log.info("%s: resuming from %s (step %d)", self.who, checkpoint.path,
                     self.position.steps)
            return
        if any(self.directory.glob("step-*.json")):
            log.warning("%s: no intact checkpoint in %s; training starts over", self.who,
                        self.directory)
            discard_newer(self.directory, -1)  # damaged ones, which would outrank new ones
        self.directory.mkdir(parents=True, exist_ok=True)

    def _summary(self) -> TrainingSummary:
        history = self.position.history
        seconds = sum(h["seconds"] for h in history)
        tokens = sum(h["tokens_per_s"] * h["seconds"] for h in history)
        best = self.position.best_epoch
        val_loss = None
        if self.val_index.size and best is not None:
            val_loss = history[best - 1]["val_loss"]
        return TrainingSummary(
            epochs=len(history), steps=self.position.steps, val_loss=val_loss,
            train_loss=history[-1]["train_loss"] if history else float("nan"),
            tokens_per_s=tokens / max(seconds, 1e-9),
            best_epoch=best, stopped_early=self.position.stopped_early)
