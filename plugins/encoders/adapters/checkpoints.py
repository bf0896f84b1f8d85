"""Reading released checkpoints: safetensors freely, pickles only after the user's opt-in.

A pickle (torch.save, `.pkl`/`.pt`) can run arbitrary code while it is read. The adapters read
one only when the user set `allow_pickle: true`, and even then first with
`torch.load(weights_only=True)`, whose restricted unpickler accepts tensors and plain
containers only; full unpickling is the last resort, with a warning.
"""

from __future__ import annotations

import json
import logging
import pickle
from pathlib import Path
from typing import Any

import torch

from .common import WeightsError, is_pickle, pickle_refusal

log = logging.getLogger(__name__)


def load_checkpoint(path: Path, *, encoder: str, allow_pickle: bool) -> Any:
    """Return what the checkpoint at `path` holds (a state dict, or a dict around one).

    `.safetensors` files give a dict of tensors; with a sidecar `<stem>.json`, that JSON is
    merged in under its own keys (LASER keeps its hyper-parameters and dictionary there).
    """
    path = Path(path)
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        try:
            tensors = load_file(str(path))
        except Exception as exc:
            raise WeightsError(f"{encoder}: {path} is not a readable safetensors file "
                               f"({type(exc).__name__}: {exc})") from None
        sidecar = path.with_suffix(".json")
        if sidecar.exists():
            return {**json.loads(sidecar.read_text(encoding="utf-8")), "model": tensors}
        return tensors
    if not is_pickle(path):
        raise WeightsError(f"{encoder}: {path}: unknown weight format {path.suffix!r}; expected "
                           ".safetensors or the released pickle (.pkl/.pt)")
    if not allow_pickle:
        raise WeightsError(pickle_refusal(encoder, path))
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, AttributeError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        log.warning("%s: %s needs full unpickling (%s); loading it because allow_pickle is set",
                    encoder, path, reason)
    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:
        raise WeightsError(f"{encoder}: cannot read {path} ({type(exc).__name__}: {exc}); "
                           "is it the released file?") from None


def save_safetensors(state: dict[str, torch.Tensor], target: Path,
                     metadata: dict[str, Any] | None = None) -> None:
    """Write a state dict as `target` (.safetensors) and, when given, metadata as `<stem>.json`.

    The conversion that lets later runs read the weights without any pickle.
    """
    from safetensors.torch import save_file

    target = Path(target)
    save_file({k: v.detach().cpu().contiguous() for k, v in state.items()}, str(target))
    if metadata is not None:
        target.with_suffix(".json").write_text(json.dumps(metadata), encoding="utf-8")


def load_strict(module: torch.nn.Module, state: dict[str, Any], *, encoder: str,
                source: Path | str) -> None:
    """Load `state` into `module`, raising one line naming missing and unexpected keys."""
    expected = set(module.state_dict())
    given = set(state)
    missing, unexpected = sorted(expected - given), sorted(given - expected)
    if missing or unexpected:
        raise WeightsError(f"{encoder}: {source} does not match the architecture: missing "
                           f"{missing[:4]}{'...' if len(missing) > 4 else ''}, unexpected "
                           f"{unexpected[:4]}{'...' if len(unexpected) > 4 else ''}")
    try:
        module.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()
        raise WeightsError(f"{encoder}: {source}: {first[-1].strip() if first else exc}") from None
