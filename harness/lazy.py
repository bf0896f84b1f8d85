"""Package-level names that load their module on first use (PEP 562 module `__getattr__`)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_exports(package: str, names: dict[str, str]) -> tuple[Callable[[str], Any], list[str]]:
    """Return (`__getattr__`, `__all__`) for `package`, whose public `names` map to the
    submodule defining each (`{"beam_search": "search"}`)."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{names[name]}"), name)

    return __getattr__, sorted(names)
