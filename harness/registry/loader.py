"""The plugin manager: loads each entry point of group "harness" on its own and records failures.

A plugin that fails to import, raises while registering, registers something invalid or
implements a hook that does not exist is recorded in `Registry.failures` and leaves every other
plugin, and every command, working.

Environment variables:
  HARNESS_DISABLE_PLUGINS   comma-separated entry-point names never loaded
  HARNESS_PLUGINS           comma-separated entry-point names; when set, only these are loaded
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import logging
import os
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

import pluggy

from harness.protocols import PluginFailure
from harness.registry import hookspecs
from harness.registry.components import (
    CommandInfo,
    RegistrationError,
    Registry,
    make_command,
    make_info,
)

ENTRY_POINT_GROUP = "harness"
DISABLE_ENV = "HARNESS_DISABLE_PLUGINS"
ALLOW_ENV = "HARNESS_PLUGINS"
FIRST_PARTY_PACKAGE = "harness_plugins"
FIRST_PARTY_ROOTS = (FIRST_PARTY_PACKAGE, "harness")  # the core registers analyses, executors

log = logging.getLogger(__name__)


def _names_from_env(variable: str) -> set[str] | None:
    value = os.environ.get(variable)
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


def _selected(entry_points: Iterable[md.EntryPoint]) -> list[md.EntryPoint]:
    entry_points = list(entry_points)
    disabled = _names_from_env(DISABLE_ENV) or set()
    allowed = _names_from_env(ALLOW_ENV)
    known = {ep.name for ep in entry_points}
    for variable, names in ((DISABLE_ENV, disabled), (ALLOW_ENV, allowed or set())):
        for unknown in sorted(names - known):
            log.warning("%s names %r, which is no installed plugin (installed: %s)", variable,
                        unknown, ", ".join(sorted(known)))
    chosen = [ep for ep in entry_points
              if ep.name not in disabled and (allowed is None or ep.name in allowed)]
    # First-party plugins load first, so a third-party plugin cannot take a first-party name
    # (and with it, all-or-nothing, the whole first-party plugin); a stable order after that
    # makes "already registered by" messages reproducible.
    return sorted(chosen, key=lambda ep: (ep.module.split(".")[0] not in FIRST_PARTY_ROOTS,
                                          ep.dist.name if ep.dist else "", ep.name))


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def load_registry(entry_points: Iterable[md.EntryPoint] | None = None) -> Registry:
    """Load every selected plugin and return the registry of what they registered."""
    if entry_points is None:
        entry_points = md.entry_points(group=ENTRY_POINT_GROUP)
    registry = Registry()
    manager = pluggy.PluginManager("harness")
    manager.add_hookspecs(hookspecs)
    for ep in _selected(entry_points):
        distribution = ep.dist.name if ep.dist else ""
        version = ep.dist.version if ep.dist else ""
        failure = partial(PluginFailure, ep.name, distribution, version)
        try:
            module = ep.load()
        except BaseException as exc:  # noqa: BLE001 - a broken plugin must not break the host
            if isinstance(exc, KeyboardInterrupt):
                raise
            registry.failures.append(failure(f"import failed: {_describe(exc)}"))
            continue
        if ep.dist is not None and ep.module.split(".")[0] not in FIRST_PARTY_ROOTS:
            version = source_version(ep.dist, module, version)
        error = register_plugin(manager, registry, module, ep.name, distribution, version)
        if error:
            registry.failures.append(failure(error))
    return registry


def source_version(dist: md.Distribution, module: Any, version: str) -> str:
    """`version`, and for a distribution installed in editable mode (`pip install -e`: its
    source is read where it is edited, PEP 660's `direct_url.json`), "+source." and a digest
    of the plugin's Python source (every .py file of its package, or its module): the version
    is part of every cache key of its components (`Entry.identity`), so an edited plugin's
    artifacts are built again instead of read back."""
    try:
        editable = json.loads(dist.read_text("direct_url.json") or "{}").get(
            "dir_info", {}).get("editable", False)
    except (OSError, ValueError, AttributeError):
        editable = False
    where = getattr(module, "__file__", None)
    if not editable or not where:
        return version
    path = Path(where)
    files = sorted(path.parent.rglob("*.py")) if path.name == "__init__.py" else [path]
    digest = hashlib.blake2b(digest_size=6)
    for file in files:
        digest.update(str(file.relative_to(path.parent)).encode("utf-8"))
        digest.update(file.read_bytes())
    return f"{version}+source.{digest.hexdigest()}"


def register_plugin(manager: pluggy.PluginManager, registry: Registry, module: Any, name: str,
                    distribution: str = "", version: str = "") -> str | None:
    """Register one plugin's components and commands; return an error message instead of
    raising."""
    try:
        manager.register(module, name=name)
        manager.check_pending()
    except Exception as exc:  # unknown hook names, bad hookimpl signatures
        if manager.is_registered(module):
            manager.unregister(module)
        return f"invalid hooks: {_describe(exc)}"
    staged: list[Any] = []
    commands: list[CommandInfo] = []
    calls = [(hook_name, partial(_stage_component, staged, kind, name, distribution, version))
             for kind, hook_name in hookspecs.HOOK_FOR_KIND.items()]
    calls.append((hookspecs.COMMAND_HOOK,
                  partial(_stage_command, commands, name, distribution, version)))
    for hook_name, register in calls:
        for impl in getattr(manager.hook, hook_name).get_hookimpls():
            if impl.plugin_name != name:
                continue
            try:
                # pluggy lets a hook take fewer arguments than its spec
                impl.function(**{arg: register for arg in impl.argnames})
            except RegistrationError as exc:
                return str(exc)
            except BaseException as exc:  # noqa: BLE001
                if isinstance(exc, KeyboardInterrupt):
                    raise
                return f"{hook_name} raised {_describe(exc)}"
    # A plugin's registrations land together or not at all.
    keys = [(info.kind, info.name) for info in staged]
    if len(keys) != len(set(keys)):
        return f"registers the same name twice: {sorted(k[1] for k in keys)}"
    paths = [info.path for info in commands]
    if len(paths) != len(set(paths)):
        return f"registers the same command twice: {sorted(paths)}"
    try:
        for info in staged:
            if info.name in registry.components[info.kind]:
                registry.add(info)  # raises, naming both plugins
        for command in commands:
            if command.path in registry.commands:
                registry.add_command(command)  # raises, naming both plugins
    except RegistrationError as exc:
        return str(exc)
    for info in staged:
        registry.add(info)
    for command in commands:
        registry.add_command(command)
    return None


def _stage_component(staged: list[Any], kind: str, plugin: str, distribution: str, version: str,
                     component_name: Any, factory: Any, **metadata: Any) -> None:
    """The `register` callback of a component hook (`harness.registry.hookspecs.Register`)."""
    staged.append(make_info(kind, component_name, factory, plugin=plugin,
                            distribution=distribution, version=version, **metadata))


def _stage_command(staged: list[CommandInfo], plugin: str, distribution: str, version: str,
                   command: Any, *, group: Any = None) -> None:
    """The `register` callback of `register_commands` (`harness.registry.hookspecs.RegisterCommand`)."""
    staged.append(make_command(command, group, plugin=plugin, distribution=distribution,
                               version=version, core=hookspecs.CORE_COMMANDS,
                               groups=hookspecs.COMMAND_GROUPS))
