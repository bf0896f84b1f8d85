"""Hook specifications: what a plugin can register, and the `register` callback it is given.

Each hook receives a `register` callback bound to the calling plugin, so the core knows which
plugin registered which component and refuses a wrong type at once. What the registered
factories return is declared in `harness.protocols`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import pluggy

from harness.protocols import AnalysisParts, Availability, Factory, Options

if TYPE_CHECKING:
    import click

hookspec = pluggy.HookspecMarker("harness")
hookimpl = pluggy.HookimplMarker("harness")


class Register(Protocol):
    """The callback a `register_*` hook receives, bound to the calling plugin."""

    def __call__(self, name: str, factory: Factory, *, description: str = "",
                 options: type[Options] = Options, availability: Availability | None = None,
                 trainable: bool = False, needs: tuple[str, ...] = (),
                 control: bool = False, pretrained: bool = False,
                 parts: AnalysisParts | None = None) -> None:
        """Register component `name` of the hook's kind.

        `name`: lower case letters, digits and hyphens, optionally a `:view` suffix.
        `factory(options, context)` builds it when a run needs it; `options` validates what a
        spec gives it; `availability` says whether it can run here
        (`harness.protocols.Availability`); `trainable` marks an encoder that fits on the run's
        text (`harness.protocols.TrainableEncoder`); `needs`, its one declaration, names what a metric
        needs beyond the samples, e.g. `("encoder",)` (`harness.protocols.EncoderAwareMetric`),
        or the analyses whose results an analysis reads;
        `control` marks an encoder that is a reference point rather than a model under study
        (a random or untrained baseline): it is kept out of the correlations across encoders
        and the rankings unless a spec asks otherwise (`comparison.controls: include`);
        `pretrained` marks an encoder whose model was trained elsewhere: downstream tasks hand
        it their text as they give it, where an encoder built from the run's corpus (its
        vocabulary, a fit) gets the text normalised like that corpus (`corpus.normalise`);
        `parts`, an analysis's spec section, results fields and checks
        (`harness.protocols.AnalysisParts`).
        """


class RegisterCommand(Protocol):
    """The callback the `register_commands` hook receives, bound to the calling plugin."""

    def __call__(self, command: click.Command, *, group: str | None = None) -> None:
        """Add `command`, a `click.Command` or `click.Group`, to the `harness` CLI under its
        own name (`command.name`: lower case letters, digits and hyphens).

        `group=None` makes it `harness NAME`; `group="data"` makes it a subcommand of one of
        the core's groups (`COMMAND_GROUPS`), `harness data NAME`. A name the core's own
        commands have (`CORE_COMMANDS`) or another plugin registered is refused, and the
        message names both plugins.
        """


@hookspec
def register_encoders(register: Register) -> None:
    """Register sentence encoders (`harness.protocols.Encoder`)."""


@hookspec
def register_decoders(register: Register) -> None:
    """Register decoder families (`harness.protocols.ConditionalLanguageModel`)."""


@hookspec
def register_metrics(register: Register) -> None:
    """Register metrics (`harness.protocols.Metric`)."""


@hookspec
def register_tasks(register: Register) -> None:
    """Register downstream tasks (`harness.protocols.DownstreamTask`)."""


@hookspec
def register_defences(register: Register) -> None:
    """Register defences: transforms of an encoder's vectors (`harness.protocols.Defence`)."""


@hookspec
def register_attacks(register: Register) -> None:
    """Register attacks: what reads text back from an encoder's vectors, each with its threat
    model (`harness.protocols.Attack`), which the privacy analysis runs (`privacy.attacks`)."""


@hookspec
def register_analyses(register: Register) -> None:
    """Register analyses over a run's results (`harness.protocols.Analysis`)."""


@hookspec
def register_executors(register: Register) -> None:
    """Register executors, which carry out a run's jobs (`harness.executors.Executor`)."""


@hookspec
def register_commands(register: RegisterCommand) -> None:
    """Register commands of the `harness` CLI: click commands or groups (`RegisterCommand`;
    `harness.registry.commands.command` gives them `-v`/`--debug` and one-line errors).
    Registration imports the module defining them, so import anything heavy inside the
    command's body."""


COMMAND_GROUPS: tuple[str, ...] = ("data",)
"""The core's command groups a plugin may add a command to (`register(command, group=...)`)."""

CORE_COMMANDS: frozenset[str] = frozenset(
    {"list", "validate", "run", "report", "bundle", "data", "data newscrawl"})
"""The commands of the core itself (`harness.cli`), by path: no plugin can register these."""

COMMAND_HOOK = "register_commands"
"""The hook that registers commands rather than components (not in `HOOK_FOR_KIND`)."""


HOOK_FOR_KIND: dict[str, str] = {
    "encoder": "register_encoders",
    "decoder": "register_decoders",
    "metric": "register_metrics",
    "task": "register_tasks",
    "defence": "register_defences",
    "attack": "register_attacks",
    "analysis": "register_analyses",
    "executor": "register_executors",
}
