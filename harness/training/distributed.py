"""Data-parallel training of one decoder by N processes (the decoder option `workers`).

The caller's process launches the N training processes with torch's elastic launcher, the
engine `torchrun` runs (`torch.distributed.launcher.api.elastic_launch`: one node, a c10d
rendezvous on a free local port, no restarts), and waits for them. Each process joins a
process group (NCCL on CUDA, one GPU each, `cuda:<local rank>`; gloo on CPUs), draws the same
batch order as one process would, and trains on its share of every global batch; DDP averages
the gradients, so every process takes the same optimiser step (PyTorch's
DistributedDataParallel, Li et al. 2020, "PyTorch Distributed", VLDB). What a process needs
travels small: the initial model and the options are pickled by the launcher, the vectors
file by its path (`harness.training.rows.FileRows`), the token ids as two `.npy` files it
maps. Rank 0 writes the checkpoints, the log and the final weights, which the caller loads.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import signal
import socket
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

from harness.errors import HarnessError
from harness.protocols import TrainingOptions
from harness.training.batches import Batch, padded_batches, predicted_tokens
from harness.training.checkpoint import load_decoder_state, write_text_atomic
from harness.training.rows import file_rows
from harness.training.run_state import DivergedError
from harness.training.token_ids import TokenIds

WORKDIR = "workers"
"""Folder of the checkpoint directory holding what the processes share: token ids, the final
weights (`result/`), fault records and the launcher's error files (`logs/`)."""

_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT")  # those the launcher takes over


@dataclass(frozen=True)
class Ranks:
    """This process's place among the `world` processes that train one decoder together."""

    rank: int
    world: int

    @property
    def writes(self) -> bool:
        """Whether this process writes checkpoints, the training log and progress (rank 0)."""
        return self.rank == 0

    def share(self, batch: np.ndarray) -> np.ndarray:
        """Return this process's part of a global batch's sentence indices: `np.array_split`'s,
        as even as possible (empty when the batch has fewer sentences than processes)."""
        if self.world == 1:
            return batch
        return np.array_split(batch, self.world)[self.rank]

    def total(self, value: torch.Tensor) -> torch.Tensor:
        """Return the sum of `value` over all processes (`value` itself for one process)."""
        if self.world == 1:
            return value
        summed = value.clone()
        dist.all_reduce(summed)
        return summed

    def agree(self, value: int, device: torch.device) -> bool:
        """Return whether every process holds the same `value` (tensors on `device`)."""
        if self.world == 1:
            return True
        bounds = torch.tensor([value, -value], dtype=torch.int64, device=device)
        dist.all_reduce(bounds, op=dist.ReduceOp.MAX)
        return int(bounds[0]) == -int(bounds[1])

    def barrier(self) -> None:
        """Wait until every process gets here."""
        if self.world > 1:
            dist.barrier()

    def dropout_seed(self, seed: int, steps: int) -> int:
        """Return the seed of this process's random generators from optimiser step `steps`:
        different on every rank (dropout masks differ), a function of (seed, rank, steps), so a
        run resumed at a checkpoint draws what an uninterrupted one draws after it."""
        return int(np.random.SeedSequence([seed, self.rank, steps]).generate_state(1)[0])


ONE = Ranks(0, 1)
"""The single process of a run with `workers: 1` (no process group)."""


@dataclass(frozen=True)
class Specials:
    """The ids the trainer takes from a vocabulary (`SubwordVocabulary`)."""

    pad_id: int
    bos_id: int
    eos_id: int


@dataclass(frozen=True)
class WorkerJob:
    """What every training process gets from the caller (pickled by the launcher)."""

    model: nn.Module             # the initial model, on the CPU
    specials: Specials
    vectors: Any                 # a FileRows (a path), or the caller's in-memory array
    options: TrainingOptions
    seed: int
    device: str                  # "cpu" or "cuda"
    checkpoint_dir: Path
    log_path: Path
    progress: bool
    who: str
    determinism: tuple[bool, bool, bool, bool]  # torch's deterministic algorithms (warn only?),
                                                # cuDNN's deterministic choice, its benchmark
    log_level: int               # of the caller's "harness" logger

    @property
    def workdir(self) -> Path:
        """Return the folder the processes share (`WORKDIR` of the checkpoint directory)."""
        return self.checkpoint_dir / WORKDIR

    @property
    def result_dir(self) -> Path:
        """Return where rank 0 saves the trained weights (`save_decoder`)."""
        return self.workdir / "result"


def check_workers(device: torch.device, workers: int, who: str) -> None:
    """Raise HarnessError, before anything starts, when `workers` processes cannot train on
    `device`: CUDA needs one visible GPU per process; only CPUs and CUDA are supported."""
    if device.type == "cuda":
        count = torch.cuda.device_count()
        if count < workers:
            raise HarnessError(f"{who}: workers: {workers} needs {workers} GPUs, torch sees "
                               f"{count}; lower workers or make more GPUs visible "
                               "(CUDA_VISIBLE_DEVICES)")
    elif device.type != "cpu":
        raise HarnessError(f"{who}: workers: {workers} trains on CUDA or CPUs, not "
                           f"{device.type}; use workers: 1 or another device")


def prepare(model: nn.Module, vocab: Any, vectors: Any, ids: Any, options: TrainingOptions, *,
            seed: int, device: torch.device, checkpoint_dir: Path, log_path: Path,
            progress: bool, who: str) -> WorkerJob:
    """Return the job every process gets, after writing the token ids to its work folder.

    A memory-mapped vectors file travels as its path; other vectors are pickled whole.
    """
    job = WorkerJob(
        model=copy.deepcopy(model).cpu(),
        specials=Specials(int(vocab.pad_id), int(vocab.bos_id), int(vocab.eos_id)),
        vectors=file_rows(vectors), options=options, seed=seed, device=device.type,
        checkpoint_dir=Path(checkpoint_dir), log_path=Path(log_path), progress=progress,
        who=who, determinism=(torch.are_deterministic_algorithms_enabled(),
                              torch.is_deterministic_algorithms_warn_only_enabled(),
                              torch.backends.cudnn.deterministic,
                              torch.backends.cudnn.benchmark),
        log_level=logging.getLogger("harness").getEffectiveLevel())
    job.workdir.mkdir(parents=True, exist_ok=True)
    token_ids = ids if isinstance(ids, TokenIds) else TokenIds.from_sequences(ids)
    np.save(job.workdir / "values.npy", token_ids.values)
    np.save(job.workdir / "offsets.npy", token_ids.offsets)
    for stale in job.workdir.glob("failure-*.*"):
        stale.unlink()
    return job


def train_in_workers(entry: Callable[[WorkerJob], Any], model: nn.Module, vocab: Any,
                     vectors: Any, ids: Any, options: TrainingOptions, *, seed: int,
                     device: torch.device, checkpoint_dir: Path, log_path: Path,
                     progress: bool, who: str) -> Any:
    """Return what rank 0's `entry` returns (the trainer's summary) after training `model` in
    `options.workers` processes, data-parallel, and loading the weights they trained into
    `model` (on `device`). `entry` runs one process's part (`trainer._train_rank`)."""
    check_workers(device, options.workers, who)
    job = prepare(model, vocab, vectors, ids, options, seed=seed, device=device,
                  checkpoint_dir=checkpoint_dir, log_path=log_path, progress=progress, who=who)
    summary = launch(entry, job)
    model.to(device)
    load_decoder_state(model, job.result_dir)
    return summary


def shares(ranks: Ranks, order: Sequence[np.ndarray], lengths: np.ndarray, vocab: Any,
           vectors: Any, ids: Any, device: torch.device) -> Iterator[tuple[Batch, int, bool]]:
    """Yield, for each global batch of `order` (arrays of sentence indices): this process's
    padded share of it, the global batch's number of predicted tokens, and whether the share
    counts.

    With one process the share is the batch. With several, a process whose share of a small
    batch is empty gets the batch's first sentence, which does not count (the trainer weighs
    its loss 0): DDP needs every process in every step."""
    if ranks.world == 1:
        for batch in padded_batches(order, vocab, vectors, ids, device):
            yield batch, batch.tokens, True
        return
    parts = [ranks.share(indices) for indices in order]
    stand_ins = (part if len(part) else indices[:1]
                 for part, indices in zip(parts, order, strict=True))
    padded = padded_batches(stand_ins, vocab, vectors, ids, device)
    for indices, part, batch in zip(order, parts, padded, strict=True):
        yield batch, predicted_tokens(lengths[indices]), len(part) > 0


def token_ids(job: WorkerJob) -> TokenIds:
    """Return the training sentences' ids, memory-mapped from the job's work folder."""
    return TokenIds(np.load(job.workdir / "values.npy", mmap_mode="r"),
                    np.load(job.workdir / "offsets.npy", mmap_mode="r"))


def launch(entry: Callable[[WorkerJob], Any], job: WorkerJob) -> Any:
    """Return what rank 0's `entry(job)` returns, after running it in `job.options.workers`
    processes; raise DivergedError when training diverged, else HarnessError naming the
    first process that failed and its error's first line."""
    from torch.distributed.elastic.multiprocessing import DefaultLogsSpecs
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    workers = job.options.workers
    config = LaunchConfig(
        min_nodes=1, max_nodes=1, nproc_per_node=workers, run_id=uuid.uuid4().hex[:12],
        rdzv_backend="c10d", rdzv_endpoint=f"127.0.0.1:{_free_port()}",
        local_addr="127.0.0.1", max_restarts=0, start_method="spawn",
        logs_specs=DefaultLogsSpecs(log_dir=str(job.workdir / "logs")))
    try:
        with _signal_handlers_kept():
            results = elastic_launch(config, entry)(job)
    except ChildFailedError as failed:
        recorded = _first_recorded_failure(job)
        if recorded is not None:
            raise recorded from None
        rank, failure = failed.get_first_failure()  # a process that died without raising
        where = f" (traceback: {failure.error_file})" if failure.error_file and Path(
            failure.error_file).exists() else ""
        raise HarnessError(f"{job.who}: training process {rank} of {workers} failed: "
                           f"{_first_line(failure.message, failure.exitcode)}{where}") from None
    return results[0]


def start(job: WorkerJob) -> tuple[Ranks, torch.device, nn.Module]:
    """Return this process's ranks, device and private copy of the model, after joining the
    process group (in a process the launcher started: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_*
    set)."""
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    # The caller's messages (a resume, a damaged checkpoint) as the command line shows them,
    # once: rank 0 says what all find.
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("harness").setLevel(
        job.log_level if rank == 0 else max(job.log_level, logging.WARNING))
    # The caller's settings (tests/test_gpu.py): spawned processes start with torch's defaults.
    torch.use_deterministic_algorithms(job.determinism[0], warn_only=job.determinism[1])
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = job.determinism[2:]
    if job.device == "cuda":
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", device_id=device)
    else:
        device = torch.device("cpu")
        if "OMP_NUM_THREADS" not in os.environ:  # the processes share the machine's cores
            torch.set_num_threads(max(1, (os.cpu_count() or 1) // world))
        dist.init_process_group("gloo")
    # The pickled model's tensors may sit in memory the launcher shares between the
    # processes: each trains a copy of its own.
    return Ranks(rank, world), device, copy.deepcopy(job.model)


def record_failure(job: WorkerJob, rank: int, error: BaseException) -> None:
    """Write what `error`, raised on process `rank`, says to the work folder, with the time it
    was raised and its traceback, for the caller to name the process that failed first.

    The launcher names whichever failed process it polls first, which is often a process
    whose collective broke because another had already failed; the record written before a
    process exits, and so before its peers can see it gone, names the cause."""
    stem = job.workdir / f"failure-{rank}"
    write_text_atomic(stem.with_suffix(".txt"), "".join(
        traceback.format_exception(type(error), error, error.__traceback__)))
    record: dict[str, Any] = {"time_ns": time.time_ns(), "rank": rank,
                              "line": f"{type(error).__name__}: {_first_line(str(error), 1)}"}
    if isinstance(error, DivergedError):
        record["diverged"] = {
            "message": str(error), "step": error.step,
            "checkpoint": None if error.checkpoint is None else str(error.checkpoint)}
    write_text_atomic(stem.with_suffix(".json"), json.dumps(record))


def _first_recorded_failure(job: WorkerJob) -> HarnessError | None:
    """Return the caller's error for the process whose recorded failure came first (None when
    none recorded one): DivergedError when training diverged, else HarnessError naming the
    process, its error's first line and its traceback file."""
    records = [json.loads(path.read_text(encoding="utf-8"))
               for path in job.workdir.glob("failure-*.json")]
    if not records:
        return None
    first = min(records, key=lambda record: (record["time_ns"], record["rank"]))
    if "diverged" in first:
        saved = first["diverged"]
        checkpoint = saved["checkpoint"]
        return DivergedError(saved["message"], step=saved["step"],
                             checkpoint=None if checkpoint is None else Path(checkpoint))
    where = job.workdir / f"failure-{first['rank']}.txt"
    return HarnessError(f"{job.who}: training process {first['rank']} of "
                        f"{job.options.workers} failed: {first['line']} (traceback: {where})")


def _first_line(message: Any, exitcode: int) -> str:
    """Return the first line of a failed process's error (the launcher's record of it)."""
    if isinstance(message, dict):
        message = message.get("message", "")
    lines = str(message or "").strip().splitlines()
    return lines[0] if lines else f"exit code {exitcode}"


def _free_port() -> int:
    """Return a local TCP port free now (for the rendezvous)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def _signal_handlers_kept() -> Iterator[None]:
    """Restore the caller's signal handlers (and the environment variable naming them) after
    the launcher, which installs its own in the main thread and leaves them there."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handlers = {name: signal.getsignal(getattr(signal, name)) for name in _SIGNALS
                if hasattr(signal, name)}
    variable = os.environ.get("TORCHELASTIC_SIGNALS_TO_HANDLE")
    try:
        yield
    finally:
        for name, handler in handlers.items():
            if handler is not None:
                signal.signal(getattr(signal, name), handler)
        if variable is None:
            os.environ.pop("TORCHELASTIC_SIGNALS_TO_HANDLE", None)
        else:
            os.environ["TORCHELASTIC_SIGNALS_TO_HANDLE"] = variable
