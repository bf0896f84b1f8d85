"""Name -> component registry: cheap metadata and factories, lookups with "did you mean"; and
the commands plugins add to the `harness` CLI."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from harness.errors import (
    UnavailableComponentError,
    UnknownComponentError,
    close_names,
    plugin_call,
)
from harness.protocols import (
    KINDS,
    METRIC_NEEDS,
    AnalysisParts,
    BuildContext,
    ComponentInfo,
    Options,
    PluginFailure,
    checked_needs,
)

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]*(:[a-z0-9-]+)?$")
"""Component names: lower case, hyphenated; a view of a component may add a `:suffix`."""
COMMAND_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]*$")
"""Command names: lower case, hyphenated."""


class RegistrationError(Exception):
    """A plugin tried to register something invalid; the plugin manager records it as a failure."""


@dataclass(frozen=True)
class CommandInfo:
    """A command a plugin added to the `harness` CLI (`register_commands`)."""

    name: str
    group: str | None
    command: Any  # a click.Command (or click.Group)
    plugin: str = ""
    distribution: str = ""
    version: str = ""

    @property
    def path(self) -> str:
        """How it is invoked after `harness`: "generate", "data senteval"."""
        return f"{self.group} {self.name}" if self.group else self.name


@dataclass
class Registry:
    """All registered components by kind and the commands plugins add (by path), plus the
    plugins that failed to load or register."""

    components: dict[str, dict[str, ComponentInfo]] = field(
        default_factory=lambda: {kind: {} for kind in KINDS})
    failures: list[PluginFailure] = field(default_factory=list)
    commands: dict[str, CommandInfo] = field(default_factory=dict)

    def add_command(self, info: CommandInfo) -> None:
        """Add a command; refuses a path another plugin registered, naming both plugins."""
        existing = self.commands.get(info.path)
        if existing is not None:
            raise RegistrationError(
                f"command `harness {info.path}` is already registered by plugin "
                f"{existing.plugin!r}; plugin {info.plugin!r} cannot register it again "
                "(disable one with HARNESS_DISABLE_PLUGINS)")
        self.commands[info.path] = info

    def add(self, info: ComponentInfo) -> None:
        """Add a component; refuses a duplicate name, naming both plugins."""
        existing = self.components[info.kind].get(info.name)
        if existing is not None:
            raise RegistrationError(
                f"{info.kind} {info.name!r} is already registered by plugin {existing.plugin!r}; "
                f"plugin {info.plugin!r} cannot register it again (disable one with "
                "HARNESS_DISABLE_PLUGINS)")
        self.components[info.kind][info.name] = info

    def names(self, kind: str) -> list[str]:
        """Return the registered names of a kind, sorted."""
        return sorted(self.components[kind])

    def in_order(self, kind: str) -> list[ComponentInfo]:
        """The components of a kind in the order they were registered (first-party plugins
        first, then the others by distribution and entry-point name)."""
        return list(self.components[kind].values())

    def __iter__(self) -> Iterator[ComponentInfo]:
        for kind in KINDS:
            yield from (self.components[kind][name] for name in self.names(kind))

    def get(self, kind: str, name: str) -> ComponentInfo:
        """Return the component `name` of `kind`, or raise with close-name suggestions."""
        try:
            return self.components[kind][name]
        except KeyError:
            known = self.names(kind)
            close = close_names(name, known)
            failed = [f"plugin {f.name!r} ({f.distribution} {f.version}): {f.error}"
                      for f in self.failures]
            raise UnknownComponentError(kind, name, close, known, failed) from None

    def create(self, kind: str, name: str, options: Options, context: BuildContext) -> Any:
        """Build a component by name outside a spec (a script, a notebook); refuses an
        unavailable one. Runs build the components their spec resolved instead."""
        info = self.get(kind, name)
        status = info.status(options)
        if status != "ok":
            raise UnavailableComponentError(kind, name, status.removeprefix("unavailable: "))
        return build(info, options, context)


def build(info: ComponentInfo, options: Options, context: BuildContext, purpose: str = "") -> Any:
    """A new instance of the component; an exception its factory raises becomes a
    `PluginError` naming the plugin (and the `purpose`, e.g. "for encoder 'avg' (dim 300)")."""
    what = f"building {info.kind} {info.name!r} {purpose}".rstrip()
    with plugin_call(info.plugin, what):
        return info.factory(options, context)


def make_info(kind: str, name: Any, factory: Any, *, description: str = "",
              options: Any = Options, availability: Callable[[], str | None] | None = None,
              trainable: bool = False, needs: Any = (), control: bool = False,
              pretrained: bool = False, parts: Any = None, plugin: str = "",
              distribution: str = "", version: str = "") -> ComponentInfo:
    """Validate what a plugin passed to `register` and return the component's metadata."""
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise RegistrationError(
            f"invalid {kind} name {name!r}: use lower case letters, digits and hyphens")
    if not callable(factory):
        raise RegistrationError(
            f"{kind} {name!r}: factory must be callable, got {type(factory).__name__}")
    if not (isinstance(options, type) and issubclass(options, Options)):
        raise RegistrationError(
            f"{kind} {name!r}: options must be a subclass of harness.protocols.Options")
    if not isinstance(description, str):
        raise RegistrationError(f"{kind} {name!r}: description must be a string")
    if availability is not None and not callable(availability):
        raise RegistrationError(f"{kind} {name!r}: availability must be callable or None")
    if needs and kind not in ("metric", "analysis"):
        raise RegistrationError(f"{kind} {name!r}: only metrics and analyses declare `needs`")
    for flag, value in (("control", control), ("pretrained", pretrained)):
        if value and kind != "encoder":
            raise RegistrationError(f"{kind} {name!r}: only encoders are declared `{flag}`")
    if parts is not None and kind != "analysis":
        raise RegistrationError(f"{kind} {name!r}: only analyses declare `parts`")
    if parts is not None and not isinstance(parts, AnalysisParts):
        raise RegistrationError(f"{kind} {name!r}: parts must be a "
                                f"harness.protocols.AnalysisParts, got {type(parts).__name__}")
    try:  # an analysis's needs name analyses, checked when a spec resolves them
        needs = checked_needs(needs, METRIC_NEEDS if kind == "metric" else None)
    except ValueError as exc:
        raise RegistrationError(f"{kind} {name!r}: {exc}") from None
    return ComponentInfo(kind=kind, name=name, factory=factory, description=description,
                         options=options, availability=availability, trainable=bool(trainable),
                         needs=needs, control=bool(control), pretrained=bool(pretrained),
                         parts=parts or AnalysisParts(), plugin=plugin,
                         distribution=distribution, version=version)


def make_command(command: Any, group: Any = None, *, plugin: str = "", distribution: str = "",
                 version: str = "", core: frozenset[str] = frozenset(),
                 groups: tuple[str, ...] = ()) -> CommandInfo:
    """Validate what a plugin passed to the `register` of `register_commands` and return the
    command's metadata. `core` holds the paths of the core's own commands, which no plugin can
    take; `groups`, the core's groups a command may join."""
    import click

    if not isinstance(command, click.Command):
        raise RegistrationError(f"command {getattr(command, '__name__', command)!r}: expected "
                                f"a click.Command or click.Group, got {type(command).__name__}")
    name = command.name
    if not isinstance(name, str) or not COMMAND_PATTERN.match(name):
        raise RegistrationError(
            f"invalid command name {name!r}: use lower case letters, digits and hyphens")
    if group is not None and group not in groups:
        raise RegistrationError(f"command {name!r}: group must be None or one of the core's "
                                f"groups ({', '.join(groups)}), got {group!r}")
    info = CommandInfo(name=name, group=group, command=command, plugin=plugin,
                       distribution=distribution, version=version)
    if info.path in core:
        raise RegistrationError(
            f"command `harness {info.path}` is the core's own; plugin {plugin!r} cannot "
            "register it (give the command another name)")
    return info
