"""What registering a component records: the kinds, the factory and availability signatures, a
component's metadata (`ComponentInfo`) and a plugin that failed to load (`PluginFailure`).
Imports nothing from the rest of the harness but its sibling contracts."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from harness.protocols.components import Options
from harness.protocols.parts import AnalysisParts

KINDS: tuple[str, ...] = ("encoder", "decoder", "metric", "task", "defence", "attack",
                          "analysis", "executor")
"""Component kinds, in listing order. A new kind needs a hookspec and an entry here."""


def plural(kind: str) -> str:
    """A kind's plural, as `harness list` heads its table: "encoders", ..., "analyses"."""
    return {"analysis": "analyses", "defence": "defences"}.get(kind, f"{kind}s")


Factory = Callable[..., object]
"""`factory(options, context)`: builds a component when a run needs it, from its validated
options (an instance of the options class it registered, each factory its own) and the run's
`BuildContext`."""

Availability = Callable[..., "str | None"]
"""`availability()` or `availability(options=...)`: None when the component can run here, else
what the user must do. With a parameter named `options` it receives the component's validated
options from a spec (a weights path, say), and None from `harness list`."""


# ------------------------------------------------------------------------------- registration


@dataclass(frozen=True)
class ComponentInfo:
    """A registered component: cheap metadata plus a factory that builds it on demand.

    `factory(options, context)` is called only when a run needs the component, so registering
    imports no model code. `availability` follows `Availability`. `needs` is what a metric
    needs beyond the samples (`harness.protocols.EncoderAwareMetric`), shown by
    `harness list`; the metric declares the same in its own `needs`. `control`: a control
    encoder, a reference point kept out of correlations and rankings by default.
    `pretrained`: an encoder whose model was trained elsewhere, which reads text as a task
    gives it (not normalised like the run's corpus). `parts`: an analysis's spec section,
    results fields and checks (`harness.protocols.AnalysisParts`)."""

    kind: str
    name: str
    factory: Factory
    description: str = ""
    options: type[Options] = Options
    availability: Availability | None = None
    trainable: bool = False
    needs: tuple[str, ...] = ()
    control: bool = False
    pretrained: bool = False
    parts: AnalysisParts = AnalysisParts()
    plugin: str = ""
    distribution: str = ""
    version: str = ""

    def unavailable_reason(self, options: Options | None = None) -> str | None:
        """What `availability` says for these options: None when the component can run.

        An `availability` callable with a parameter named `options` is given the component's
        validated options (None from `harness list`); one without is called with no argument.
        Whatever it raises propagates (`status` turns it into a message).
        """
        if self.availability is None:
            return None
        if _takes_options(self.availability):
            return self.availability(options=options)
        return self.availability()

    def status(self, options: Options | None = None) -> str:
        """"ok", or "unavailable: <what to do>"."""
        try:
            reason = self.unavailable_reason(options)
        except Exception as exc:  # a broken availability check must not break `harness list`
            reason = f"availability check failed: {exc}"
        return "ok" if reason is None else f"unavailable: {reason}"


def _takes_options(function: Callable[..., object]) -> bool:
    try:
        return "options" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class PluginFailure:
    """A plugin that could not be loaded or registered, kept for `harness list`."""

    name: str
    distribution: str
    version: str
    error: str
