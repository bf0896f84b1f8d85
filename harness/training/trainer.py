"""Teacher-forced training of any conditional decoder, with per-epoch resumable checkpoints.

The decoder learns to regenerate each training sentence from its vector (Kerscher & Eger 2020,
section 2): the loss is the token-level negative log-likelihood of `ids + [eos]` given
`[bos] + ids` and the sentence vector.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn
from tqdm.auto import tqdm

from harness.errors import DataError

CHECKPOINT_JSON = "checkpoint.json"
MODEL_FILE = "model.safetensors"
MODEL_JSON = "model.json"
_IGNORE = -100  # target id of padding positions, skipped by the loss
_POSTFIX_EVERY = 20  # progress-bar updates read the loss from the device this often


@dataclass(frozen=True)
class TrainingSummary:
    """What a training run did: epochs completed, optimiser steps, last losses, throughput."""

    epochs: int
    steps: int
    val_loss: float | None
    train_loss: float
    tokens_per_s: float


@dataclass(frozen=True)
class _Batch:
    inputs: torch.Tensor   # (B, T) [bos] + ids, padded
    targets: torch.Tensor  # (B, T) ids + [eos], _IGNORE where padded
    vectors: torch.Tensor  # (B, D) float32
    tokens: int            # number of predicted (non-padding) tokens


def train_decoder(model: nn.Module, vocab: Any, train_vectors: np.ndarray,
                  train_ids: Sequence[Sequence[int]], *, epochs: int, batch_size: int, lr: float,
                  clip: float, seed: int, device: str | torch.device, checkpoint_dir: Path,
                  log_path: Path, progress: bool = True) -> TrainingSummary:
    """Return the summary of training `model` to regenerate `train_ids` from `train_vectors`.

    `train_vectors` (N, D) may be a memory map: only one batch of rows is read at a time.
    `train_ids` are subword ids without bos/eos; `vocab` gives `bos_id` and `eos_id`.
    A checkpoint is written to `checkpoint_dir` after every epoch; when one exists, training
    continues after its epoch and the final weights equal those of an uninterrupted run (CPU).
    The caller seeds torch before building the model; `seed` fixes the batch order.
    """
    if len(train_vectors) != len(train_ids):
        raise DataError(f"{len(train_vectors)} training vectors but {len(train_ids)} sentences")
    if len(train_ids) == 0:
        raise DataError("no training sentences")
    if epochs < 1 or batch_size < 1:
        raise DataError(f"epochs and batch_size must be at least 1, got {epochs} and {batch_size}")
    input_dim = getattr(model, "input_dim", None)
    if train_vectors.ndim != 2 or (input_dim is not None and train_vectors.shape[1] != input_dim):
        raise DataError(f"decoder expects sentence vectors of dimension {input_dim}, "
                        f"got training vectors of shape {tuple(train_vectors.shape)}")
    device = torch.device(device)
    checkpoint_dir, log_path = Path(checkpoint_dir), Path(log_path)
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    model.to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=lr)
    config = {"batch_size": batch_size, "lr": lr, "clip": clip, "seed": seed,
              "sentences": len(train_ids)}

    history: list[dict[str, Any]] = []
    steps = 0
    saved = _read_checkpoint_json(checkpoint_dir)
    if saved is not None:
        if saved["config"] != config:
            raise DataError(f"checkpoint in {checkpoint_dir} was written with {saved['config']}, "
                            f"not {config}: delete the directory to start over")
        _load_checkpoint(checkpoint_dir / saved["file"], model, optimizer, saved, device)
        history, steps = saved["history"], saved["steps"]
        # Keep the log equal to the checkpointed epochs (a kill may fall between the two writes).
        _write_atomic(log_path, "".join(json.dumps(h) + "\n" for h in history))

    lengths = np.fromiter((len(s) for s in train_ids), dtype=np.int64, count=len(train_ids))
    model.train()
    for epoch in range(len(history) + 1, epochs + 1):
        order = _bucketed_batches(lengths, batch_size, seed, epoch)
        started, total_tokens = time.perf_counter(), 0
        total_loss = torch.zeros((), device=device)  # summed on the device: no sync per step
        bar = tqdm(order, desc=f"epoch {epoch}/{epochs}", unit="batch", disable=None if progress else True,
                   leave=False)
        for batch in _batches(bar, vocab, train_vectors, train_ids, device):
            total_loss += _train_step(model, optimizer, params, batch, clip, device)
            steps += 1
            total_tokens += batch.tokens
            if progress and steps % _POSTFIX_EVERY == 0:
                elapsed = max(time.perf_counter() - started, 1e-9)
                bar.set_postfix(loss=f"{float(total_loss) / total_tokens:.3f}",
                                tok_s=f"{total_tokens / elapsed:,.0f}", refresh=False)
        bar.close()
        seconds = time.perf_counter() - started
        record = {"epoch": epoch, "train_loss": float(total_loss) / max(total_tokens, 1),
                  "tokens_per_s": total_tokens / max(seconds, 1e-9), "seconds": seconds}
        history.append(record)
        _save_checkpoint(checkpoint_dir, model, optimizer, config, history, steps)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")

    seconds = sum(h["seconds"] for h in history)
    tokens = sum(h["tokens_per_s"] * h["seconds"] for h in history)
    return TrainingSummary(epochs=len(history), steps=steps, val_loss=None,
                           train_loss=history[-1]["train_loss"],
                           tokens_per_s=tokens / max(seconds, 1e-9))


def _train_step(model: nn.Module, optimizer: torch.optim.Optimizer, params: list[nn.Parameter],
                batch: _Batch, clip: float, device: torch.device) -> torch.Tensor:
    """Return the summed NLL of the batch (a detached scalar) after one Adam step on its mean."""
    # bf16 autocast only on CUDA: CPU autocast is slow for LSTMs and would change CPU results.
    autocast = (torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda"
                else nullcontext())
    with autocast:
        log_probs = model(batch.inputs, batch.vectors)
    loss_sum = nn.functional.nll_loss(log_probs.float().flatten(0, 1), batch.targets.flatten(),
                                      ignore_index=_IGNORE, reduction="sum")
    optimizer.zero_grad(set_to_none=True)
    (loss_sum / batch.tokens).backward()
    if clip > 0:
        nn.utils.clip_grad_norm_(params, clip)
    optimizer.step()
    return loss_sum.detach()


def _bucketed_batches(lengths: np.ndarray, batch_size: int, seed: int,
                      epoch: int) -> list[np.ndarray]:
    """Return this epoch's batches of sentence indices: similar lengths together, random order.

    The generator is seeded from (seed, epoch), so a resumed run sees the same batches.
    """
    generator = torch.Generator().manual_seed(seed * 100_003 + epoch)
    shuffled = torch.randperm(len(lengths), generator=generator).numpy()
    # A stable sort of a random permutation: buckets by length, random within a length.
    by_length = shuffled[np.argsort(lengths[shuffled], kind="stable")]
    batches = [by_length[i:i + batch_size] for i in range(0, len(by_length), batch_size)]
    batch_order = torch.randperm(len(batches), generator=generator).tolist()
    return [np.sort(batches[i]) for i in batch_order]


def _batches(order: Iterable[np.ndarray], vocab: Any, vectors: np.ndarray,
             ids: Sequence[Sequence[int]], device: torch.device) -> Iterator[_Batch]:
    """Yield padded (inputs, targets, vectors) batches, reading only the rows each one needs."""
    pin = device.type == "cuda"
    for index in order:
        sentences = [ids[i] for i in index]
        width = max(len(s) for s in sentences) + 1
        inputs = torch.full((len(index), width), int(vocab.pad_id), dtype=torch.long)
        targets = torch.full((len(index), width), _IGNORE, dtype=torch.long)
        for row, sentence in enumerate(sentences):
            tokens = torch.as_tensor(list(sentence), dtype=torch.long)
            inputs[row, 0] = int(vocab.bos_id)
            inputs[row, 1:len(sentence) + 1] = tokens
            targets[row, :len(sentence)] = tokens
            targets[row, len(sentence)] = int(vocab.eos_id)
        rows = torch.from_numpy(np.asarray(vectors[index], dtype=np.float32))
        if pin:
            inputs, targets, rows = inputs.pin_memory(), targets.pin_memory(), rows.pin_memory()
        yield _Batch(inputs.to(device, non_blocking=pin), targets.to(device, non_blocking=pin),
                     rows.to(device, non_blocking=pin), sum(len(s) + 1 for s in sentences))


# --- checkpoints -------------------------------------------------------------------------------

def _save_checkpoint(directory: Path, model: nn.Module, optimizer: torch.optim.Optimizer,
                     config: dict[str, Any], history: list[dict[str, Any]], steps: int) -> None:
    """Write the state after epoch len(history); the JSON, replaced last, commits it."""
    epoch = len(history)
    tensors = {f"model.{k}": v for k, v in model.state_dict().items()}
    optim_tensors, optim_rest = _flatten_optimizer(optimizer.state_dict())
    tensors.update(optim_tensors)
    tensors["rng.cpu"] = torch.get_rng_state()
    if torch.cuda.is_available():
        for i, state in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng.cuda.{i}"] = state
    name = f"epoch-{epoch:04d}.safetensors"
    tmp = directory / (name + ".tmp")
    save_file({k: v.detach().contiguous().cpu() for k, v in tensors.items()}, str(tmp))
    os.replace(tmp, directory / name)
    meta = {"epoch": epoch, "file": name, "steps": steps, "config": config, "history": history,
            "optimizer": optim_rest, "train_loss": history[-1]["train_loss"]}
    _write_atomic(directory / CHECKPOINT_JSON, json.dumps(meta, indent=1))
    for old in directory.glob("epoch-*.safetensors"):
        if old.name != name:
            old.unlink(missing_ok=True)


def _read_checkpoint_json(directory: Path) -> dict[str, Any] | None:
    path = directory / CHECKPOINT_JSON
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _load_checkpoint(path: Path, model: nn.Module, optimizer: torch.optim.Optimizer,
                     meta: dict[str, Any], device: torch.device) -> None:
    tensors = load_file(str(path))
    model.load_state_dict({k[len("model."):]: v for k, v in tensors.items()
                           if k.startswith("model.")})
    optimizer.load_state_dict(_unflatten_optimizer(tensors, meta["optimizer"]))
    torch.set_rng_state(tensors["rng.cpu"])
    cuda_states = [tensors[k] for k in sorted(tensors) if k.startswith("rng.cuda.")]
    if device.type == "cuda" and cuda_states:
        torch.cuda.set_rng_state_all(cuda_states[:torch.cuda.device_count()])


def _flatten_optimizer(state: dict[str, Any]) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Split an optimizer state_dict into tensors (for safetensors) and the JSON-able rest."""
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for param_id, param_state in state["state"].items():
        for key, value in param_state.items():
            if isinstance(value, torch.Tensor):
                tensors[f"optim.{param_id}.{key}"] = value
            else:
                scalars.setdefault(str(param_id), {})[key] = value
    return tensors, {"param_groups": state["param_groups"], "scalars": scalars}


def _unflatten_optimizer(tensors: dict[str, torch.Tensor], rest: dict[str, Any]) -> dict[str, Any]:
    state: dict[int, dict[str, Any]] = {}
    for name, value in tensors.items():
        if name.startswith("optim."):
            _, param_id, key = name.split(".", 2)
            state.setdefault(int(param_id), {})[key] = value
    for param_id, values in rest["scalars"].items():
        state.setdefault(int(param_id), {}).update(values)
    return {"state": state, "param_groups": rest["param_groups"]}


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# --- final model -------------------------------------------------------------------------------

def save_decoder(model: nn.Module, directory: Path, info: dict[str, Any] | None = None) -> Path:
    """Return the weights file written for `model` in `directory` (safetensors + a JSON note)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    tmp = directory / (MODEL_FILE + ".tmp")
    save_file(state, str(tmp))
    os.replace(tmp, directory / MODEL_FILE)
    note = {"class": type(model).__qualname__, "module": type(model).__module__,
            "parameters": sum(v.numel() for v in state.values()), **(info or {})}
    _write_atomic(directory / MODEL_JSON, json.dumps(note, indent=1))
    return directory / MODEL_FILE


def load_decoder_state(model: nn.Module, directory: Path) -> dict[str, Any]:
    """Return the JSON note saved with the weights, after loading the weights into `model`."""
    directory = Path(directory)
    path = directory / MODEL_FILE
    if not path.exists():
        raise DataError(f"no trained decoder in {directory} (missing {MODEL_FILE})")
    device = next(iter(model.state_dict().values())).device
    model.load_state_dict(load_file(str(path), device=str(device)))
    note = directory / MODEL_JSON
    return json.loads(note.read_text(encoding="utf-8")) if note.exists() else {}
