"""Hook specifications: what a plugin can register.

Each hook receives a `register` callback bound to the calling plugin, so the core knows which
plugin registered which component and refuses a wrong type at once.
"""

from __future__ import annotations

from collections.abc import Callable

import pluggy

hookspec = pluggy.HookspecMarker("harness")
hookimpl = pluggy.HookimplMarker("harness")

Register = Callable[..., None]


@hookspec
def register_encoders(register: Register) -> None:
    """Register sentence encoders: register(name, factory, description=..., options=..., ...)."""


@hookspec
def register_decoders(register: Register) -> None:
    """Register decoder families: register(name, factory, description=..., options=..., ...)."""


@hookspec
def register_metrics(register: Register) -> None:
    """Register metrics: register(name, factory, description=..., options=..., ...)."""


@hookspec
def register_tasks(register: Register) -> None:
    """Register downstream tasks: register(name, factory, description=..., options=..., ...)."""


HOOK_FOR_KIND: dict[str, str] = {
    "encoder": "register_encoders",
    "decoder": "register_decoders",
    "metric": "register_metrics",
    "task": "register_tasks",
}
