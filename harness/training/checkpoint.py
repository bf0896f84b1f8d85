"""Training checkpoints and trained decoders on disk: safetensors + JSON, atomic, checksummed.

A checkpoint is a pair `step-<n>.safetensors` + `step-<n>.json`; the JSON, written last, holds
the sha256 of the tensors file and commits the pair. Reading verifies the checksum: a truncated
or corrupted checkpoint is reported and skipped for the previous good one, never used.
No pickles: tensors go to safetensors, everything else to JSON.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors
from torch import nn

from harness.errors import DataError

log = logging.getLogger(__name__)

FORMAT = 1
KEEP = 2  # checkpoints kept: the newest and one to fall back on when it is damaged
MODEL_FILE = "model.safetensors"
MODEL_JSON = "model.json"
_NAME = re.compile(r"^step-(\d+)\.json$")


@dataclass(frozen=True)
class Checkpoint:
    """A verified checkpoint: its JSON record and its tensors (on the CPU)."""

    path: Path
    meta: dict[str, Any]
    tensors: dict[str, torch.Tensor]


def write_checkpoint(directory: Path, steps: int, tensors: dict[str, torch.Tensor],
                     meta: dict[str, Any]) -> Path:
    """Return the JSON path of the checkpoint written for optimiser step `steps`.

    Once the new one is committed, checkpoints of later steps (left by a run that resumed from
    an earlier one) and those beyond the newest `KEEP` are deleted.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    name = checkpoint_json(directory, steps).stem
    data = save_tensors(_host_copies(tensors))
    _write_bytes_atomic(directory / f"{name}.safetensors", data)
    record = {**meta, "format": FORMAT, "steps": steps, "file": f"{name}.safetensors",
              "sha256": hashlib.sha256(data).hexdigest()}
    path = directory / f"{name}.json"
    _write_bytes_atomic(path, json.dumps(record, indent=1).encode("utf-8"))
    discard_newer(directory, steps)
    kept = _checkpoint_jsons(directory)
    for old in kept[KEEP:]:
        (directory / f"{old.stem}.safetensors").unlink(missing_ok=True)
        old.unlink(missing_ok=True)
    # Leftovers of a run killed while writing: tensors never committed, temporary files.
    committed = {f"{p.stem}.safetensors" for p in kept[:KEEP]}
    for leftover in directory.glob("step-*"):
        if leftover.suffix == ".tmp" or (leftover.suffix == ".safetensors"
                                         and leftover.name not in committed):
            leftover.unlink(missing_ok=True)
    return path


def checkpoint_json(directory: Path, steps: int) -> Path:
    """Return the JSON path of the checkpoint for optimiser step `steps` in `directory`."""
    return Path(directory) / f"step-{steps:010d}.json"


def read_checkpoints(directory: Path) -> Iterator[Checkpoint]:
    """Yield the verified checkpoints in `directory`, newest first; warn about damaged ones."""
    for path in _checkpoint_jsons(Path(directory)):
        checkpoint = _read_checkpoint(path)
        if checkpoint is not None:
            yield checkpoint


def discard_newer(directory: Path, steps: int) -> None:
    """Delete the checkpoints past step `steps` (damaged ones a resumed run replaces)."""
    for path in _checkpoint_jsons(Path(directory)):
        match = _NAME.match(path.name)
        if match and int(match.group(1)) > steps:
            path.with_suffix(".safetensors").unlink(missing_ok=True)
            path.unlink(missing_ok=True)


def _host_copies(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """CPU tensors to save; tensors sharing memory (tied weights) get copies of their own, as
    safetensors stores no aliases."""
    out: dict[str, torch.Tensor] = {}
    seen: set[int] = set()
    for key, value in tensors.items():
        tensor = value.detach().contiguous().cpu()
        pointer = tensor.untyped_storage().data_ptr()
        if pointer in seen and tensor.numel():
            tensor = tensor.clone()
        seen.add(pointer)
        out[key] = tensor
    return out


def _read_checkpoint(path: Path) -> Checkpoint | None:
    """The checkpoint recorded in `path`, or None (with a warning) when it is damaged."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
        tensors_path = path.with_name(meta["file"])
        expected = meta["sha256"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("ignoring damaged checkpoint %s (unreadable record: %s)", path, exc)
        return None
    try:
        data = tensors_path.read_bytes()
    except OSError as exc:
        log.warning("ignoring checkpoint %s: cannot read %s (%s)", path, tensors_path.name, exc)
        return None
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        log.warning("ignoring corrupted checkpoint %s: sha256 of %s is %s, the record says %s",
                    path, tensors_path.name, actual[:12], str(expected)[:12])
        return None
    return Checkpoint(path, meta, load_tensors(data))


def _checkpoint_jsons(directory: Path) -> list[Path]:
    """The checkpoint records in `directory`, newest (most steps) first."""
    if not directory.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in directory.iterdir() if (m := _NAME.match(p.name))]
    return [p for _, p in sorted(found, reverse=True)]


def _write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a synced temporary file and a rename."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_bytes_atomic(path, text.encode("utf-8"))


# --- trained decoders -------------------------------------------------------------------------

def save_decoder(model: nn.Module, directory: Path, info: dict[str, Any] | None = None) -> Path:
    """Return the weights file written for `model` in `directory` (safetensors + a JSON note).

    The note records the file's sha256, which `load_decoder_state` verifies.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    state = _host_copies(model.state_dict())
    data = save_tensors(state)
    _write_bytes_atomic(directory / MODEL_FILE, data)
    note = {"class": type(model).__qualname__, "module": type(model).__module__,
            "parameters": sum(v.numel() for v in state.values()),
            "sha256": hashlib.sha256(data).hexdigest(), **(info or {})}
    write_text_atomic(directory / MODEL_JSON, json.dumps(note, indent=1))
    return directory / MODEL_FILE


def load_decoder_state(model: nn.Module, directory: Path) -> dict[str, Any]:
    """Return the JSON note saved with the weights, after loading the verified weights."""
    directory = Path(directory)
    path = directory / MODEL_FILE
    if not path.exists():
        raise DataError(f"no trained decoder in {directory} (missing {MODEL_FILE})")
    note_path = directory / MODEL_JSON
    try:
        note = json.loads(note_path.read_text(encoding="utf-8"))
        expected = note["sha256"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{note_path}: missing or unreadable, so the weights in {MODEL_FILE} "
                        f"cannot be verified ({exc}); delete {directory} and rerun to train "
                        "again") from exc
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != expected:
        raise DataError(f"{path}: the weights do not match the sha256 in {MODEL_JSON} (truncated "
                        f"or corrupted); delete {directory} and rerun to train again")
    device = next(iter(model.state_dict().values())).device
    model.load_state_dict({k: v.to(device) for k, v in load_tensors(data).items()})
    return note
