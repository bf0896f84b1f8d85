"""Hook specifications: what a plugin can register, and the `register` callback it is given.

Each hook receives a `register` callback bound to the calling plugin, so the core knows which
plugin registered which component and refuses a wrong type at once. What the registered
factories return is declared in `harness.protocols`.
"""

from __future__ import annotations

from typing import Protocol

import pluggy

from harness.protocols import Availability, Factory, Options

hookspec = pluggy.HookspecMarker("harness")
hookimpl = pluggy.HookimplMarker("harness")


class Register(Protocol):
    """The callback a `register_*` hook receives, bound to the calling plugin."""

    def __call__(self, name: str, factory: Factory, *, description: str = "",
                 options: type[Options] = Options, availability: Availability | None = None,
                 trainable: bool = False, needs: tuple[str, ...] = (),
                 control: bool = False, pretrained: bool = False) -> None:
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
        and the rankings unless a spec asks otherwise (`correlation.controls: include`);
        `pretrained` marks an encoder whose model was trained elsewhere: downstream tasks hand
        it their text as they give it, where an encoder built from the run's corpus (its
        vocabulary, a fit) gets the text normalised like that corpus (`corpus.normalise`).
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
def register_analyses(register: Register) -> None:
    """Register analyses over a run's results (`harness.protocols.Analysis`)."""


@hookspec
def register_executors(register: Register) -> None:
    """Register executors, which carry out a run's jobs (`harness.executors.Executor`)."""


HOOK_FOR_KIND: dict[str, str] = {
    "encoder": "register_encoders",
    "decoder": "register_decoders",
    "metric": "register_metrics",
    "task": "register_tasks",
    "defence": "register_defences",
    "analysis": "register_analyses",
    "executor": "register_executors",
}
