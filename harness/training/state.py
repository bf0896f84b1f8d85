"""What a checkpoint must hold to resume training exactly: weights, optimiser, random generators.

Everything is split into tensors (for safetensors) and JSON-able values, never pickled.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


def capture(model: nn.Module, optimizer: torch.optim.Optimizer,
            best: dict[str, torch.Tensor] | None,
            device: torch.device) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Return (tensors, JSON-able rest) of the model, optimiser, best weights and the random
    generators training draws from: the CPU's, and `device`'s when it is a GPU."""
    tensors = {f"model.{k}": v for k, v in model.state_dict().items()}
    optimizer_tensors, optimizer_rest = _flatten_optimizer(optimizer.state_dict())
    tensors.update(optimizer_tensors)
    if best is not None:
        tensors.update({f"best.{k}": v for k, v in best.items()})
    tensors["rng.cpu"] = torch.get_rng_state()
    if device.type == "cuda":
        tensors["rng.cuda"] = torch.cuda.get_rng_state(device)
    return tensors, {"optimizer": optimizer_rest}


def restore(tensors: dict[str, torch.Tensor], rest: dict[str, Any], model: nn.Module,
            optimizer: torch.optim.Optimizer,
            device: torch.device) -> dict[str, torch.Tensor] | None:
    """Load a captured state into `model`, `optimizer` and the RNGs; return the best weights."""
    model.load_state_dict(_prefixed(tensors, "model."))
    optimizer.load_state_dict(_unflatten_optimizer(tensors, rest["optimizer"]))
    torch.set_rng_state(tensors["rng.cpu"])
    if device.type == "cuda" and "rng.cuda" in tensors:
        torch.cuda.set_rng_state(tensors["rng.cuda"], device)
    best = _prefixed(tensors, "best.")
    return best or None


def copy_weights(model: nn.Module) -> dict[str, torch.Tensor]:
    """Return a CPU copy of the model's state (e.g. the best weights so far)."""
    return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}


def _prefixed(tensors: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    return {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}


def _flatten_optimizer(state: dict[str, Any]) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Split an optimizer state_dict into tensors and the JSON-able rest."""
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
