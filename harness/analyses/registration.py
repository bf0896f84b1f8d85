"""How a first-party analysis folder registers itself (`Registration`): its name, the class its
`analysis` module defines, what it does and needs, its parts, and whether its `commands` module
adds commands. Each folder declares one (`ANALYSIS` in its `__init__`); registering imports
none of the analysis: the factory imports the folder's `analysis` module when a run builds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from importlib import import_module

from harness.protocols import AnalysisParts, BuildContext, Options
from harness.registry.hookspecs import Register, RegisterCommand


@dataclass(frozen=True)
class Registration:
    """A first-party analysis as its folder (`package`) registers it."""

    package: str
    """The folder's module (`__name__` of its `__init__`)."""
    name: str
    """The name specs give it (`analyses: [...]`)."""
    cls: str
    """The class its `analysis` module defines."""
    description: str
    """What `harness list` says it does."""
    needs: tuple[str, ...] = ()
    """The analyses it runs after (their results fields are its inputs)."""
    parts: AnalysisParts | None = None
    """What it brings besides its class (`harness.protocols.AnalysisParts`)."""
    commands: bool = False
    """Whether its `commands` module adds commands to `harness` (`COMMANDS`)."""

    def register(self, register: Register) -> None:
        """Register the analysis."""
        register(self.name, partial(_build, self.package, self.cls),
                 description=self.description, needs=self.needs, parts=self.parts)

    def register_commands(self, register: RegisterCommand) -> None:
        """Register its commands, if it has any."""
        if self.commands:
            for command in import_module(f"{self.package}.commands").COMMANDS:
                register(command)


def _build(package: str, cls: str, options: Options, context: BuildContext) -> object:
    """A new analysis of `package`: its `analysis` module is imported now. A module-level
    function (bound with `partial`), so a spec holding it pickles for executors that run jobs
    in other processes."""
    return getattr(import_module(f"{package}.analysis"), cls)()
