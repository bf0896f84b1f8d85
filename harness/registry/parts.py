"""The parts the registered analyses declare (`harness.protocols.AnalysisParts`), gathered: the
spec sections they read and the results.json fields they fill, with their types.

The spec and the results model read them here, so neither names an analysis. The installed
plugins are read once per process and plugin selection (`HARNESS_PLUGINS`,
`HARNESS_DISABLE_PLUGINS`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from harness.errors import PluginError
from harness.protocols import AnalysisParts, ComponentInfo
from harness.registry.components import Registry
from harness.registry.loader import ALLOW_ENV, DISABLE_ENV, load_registry


@dataclass(frozen=True)
class GatheredParts:
    """What the analyses of one registry declare."""

    parts: tuple[tuple[ComponentInfo, AnalysisParts], ...]
    """Each analysis with parts, in registration order."""
    sections: dict[str, tuple[ComponentInfo, Any]]
    """Spec section key -> the analysis reading it and the settings class validating it."""
    results: dict[str, tuple[ComponentInfo, Any]]
    """results.json field -> the analysis filling it and the type it holds."""
    defaults: dict[str, Any]
    """results.json field -> the value it takes where a run's results lack it (models made
    anew on each call of `result_defaults`)."""

    def result_defaults(self) -> dict[str, Any]:
        """The declared defaults, made anew (`AnalysisParts.defaults`)."""
        return {key: value.model_copy() if hasattr(value, "model_copy") else value
                for key, value in self.defaults.items()}

    def validated(self, key: str, value: Any) -> Any:
        """`value` read as the type declared for results field `key`; a `ValueError` naming
        the field, where in it, and the analysis that declares it when it does not fit."""
        from pydantic import ValidationError

        info, kind = self.results[key]
        try:
            return _adapter(kind).validate_python(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = "".join(f"[{part!r}]" if isinstance(part, int) else f".{part}"
                            for part in first["loc"])
            raise ValueError(f"{key}{where}: {first['msg']} (the type analysis {info.name!r} "
                             f"of plugin {info.plugin!r} declares)") from None


def gathered_parts(registry: Registry) -> GatheredParts:
    """What the analyses of `registry` declare. Raises `PluginError` when two analyses claim
    one spec section or one results field, or a part cannot be imported."""
    parts = tuple((info, info.parts) for info in registry.in_order("analysis"))
    sections: dict[str, tuple[ComponentInfo, Any]] = {}
    results: dict[str, tuple[ComponentInfo, Any]] = {}
    defaults: dict[str, Any] = {}
    for info, part in parts:
        try:
            if part.section:
                _claim(sections, part.section, info, part.settings_class(), "spec section")
            for key, kind in part.result_types().items():
                _claim(results, key, info, kind, "results field")
            defaults.update(part.result_defaults())
        except (ImportError, AttributeError, ValueError) as exc:
            raise PluginError(info.plugin, f"analysis {info.name!r}: a part it declares "
                                           f"cannot be loaded: {exc}") from None
    return GatheredParts(parts, sections, results, defaults)


def _claim(claimed: dict[str, tuple[ComponentInfo, Any]], key: str, info: ComponentInfo,
           value: Any, what: str) -> None:
    """Record that analysis `info` declares `key`; refuse a key another analysis declared."""
    if key in claimed:
        owner = claimed[key][0]
        raise PluginError(info.plugin, f"analysis {info.name!r} declares the {what} {key!r}, "
                                       f"which analysis {owner.name!r} (plugin "
                                       f"{owner.plugin!r}) declares already: rename it")
    claimed[key] = (info, value)


def installed_parts() -> GatheredParts:
    """What the installed analyses declare (read once per plugin selection)."""
    return _installed(os.environ.get(ALLOW_ENV), os.environ.get(DISABLE_ENV))


@lru_cache(maxsize=8)
def _installed(allowed: str | None, disabled: str | None) -> GatheredParts:
    return gathered_parts(load_registry())




@lru_cache(maxsize=64)
def _adapter(kind: Any) -> Any:
    """A pydantic `TypeAdapter` for a declared type, made once."""
    from pydantic import TypeAdapter

    return TypeAdapter(kind)
