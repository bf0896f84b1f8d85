"""What an analysis brings besides its class: its spec section, its results.json fields, its
checks of a spec, and its results from published tables alone (`AnalysisParts`).

An analysis registers them with itself (`register(name, factory, parts=AnalysisParts(...))`),
so the core reads a first-party analysis's parts exactly as a third party's and names none.
Each part is the object itself or a `"module:attribute"` reference, imported only when a spec
or a results.json needs it: registering imports nothing. Imports nothing from the rest of the
harness: the parts are typed against the views (`SpecView`, `PositionsView`), which the
spec's `Spec` and `Positions` meet.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, TypeVar

if TYPE_CHECKING:
    from harness.protocols.components import Settings
    from harness.protocols.views import PositionsView, SpecView

T = TypeVar("T")

Ref: TypeAlias = T | str
"""A part: the object itself, or `"module:attribute"` naming it (imported on first use)."""

Resolve = Callable[["SpecView", "PositionsView", Path], "SpecView"]
"""`resolve(spec, positions, folder) -> spec`: the analysis's section made whole on load."""
Check = Callable[["SpecView", "PositionsView"], None]
"""`check(spec, positions)`: what the section says about the rest of the spec, checked."""
Preflight = Callable[["SpecView"], Sequence[Exception]]
"""`preflight(spec) -> errors`: what a run would find missing, found before it starts."""
Tables = Callable[["SpecView"], Mapping[str, object]]
"""`tables(spec) -> results fields`: the analysis's results from published tables alone."""


def resolve_ref(ref: Ref[T]) -> T:
    """The object `ref` names: itself, or the attribute a `"module:attribute"` string names."""
    if not isinstance(ref, str):
        return ref
    module, _, attribute = ref.partition(":")
    if not module or not attribute:
        raise ValueError(f"{ref!r}: expected the object itself or 'module:attribute'")
    found: T = getattr(import_module(module), attribute)
    return found


def _resolved(ref: Ref[T] | None) -> T | None:
    return None if ref is None else resolve_ref(ref)


@dataclass(frozen=True)
class AnalysisParts:
    """An analysis's parts beyond its class, each optional.

    - `section`, `settings`: the spec's top-level key the analysis reads its settings from
      (`privacy:`) and the `harness.protocols.Settings` class validating it, at
      `harness validate` with file:line errors like every section of the core. A spec reads
      it typed, `spec.section("privacy", PrivacySection)`, its defaults where the file gives
      none.
    - `results`: the results.json top-level fields the analysis fills -> the type each holds
      (a pydantic model, or any type pydantic validates): typed when results.json is written
      and read, and refused at once when `run` returns a value of another type. Fields it
      does not declare are kept under `analyses.<name>`, as JSON.
    - `components`: fields of its section that name registered components, field -> kind
      (`{"attacks": "attack"}`): each a list of entries (a bare name, or a mapping with
      `name:` and options), resolved by the core against the registry like the spec's own
      components (unknown names and bad options refused at their file:line), so the section
      holds resolved entries (`harness.spec.Entry`: `name`, `settings`, `build(...)`).
    - `defaults`: for a declared field, what makes the value it takes where a run's results
      lack it (a model class, called with no argument); without one the field is left out.
    - `resolve(spec, positions, folder) -> spec`: run on every load, after validation: paths
      of its section made absolute against `folder`, its files read and checked.
    - `check(spec, positions) -> None`: run once the spec's components are resolved: what
      its section says about the rest of the spec (a decoder it names exists, ...). Both
      raise `harness.errors.SpecError` naming file:line (`positions.line(("privacy", key))`).
    - `preflight(spec) -> list[SpecError]`: problems found just before a run (files missing,
      a machine that lacks what the section asks for), each located like a spec error
      (`spec.positions.error(message, loc)`), listed by `harness validate`.
    - `tables(spec) -> results fields`: the analysis's results from published tables alone,
      for a spec that correlates a published diagnostics table (`TableSpec`).
    """

    section: str = ""
    settings: Ref[type[Settings]] | None = None
    results: Mapping[str, Ref[object]] = field(default_factory=dict)
    defaults: Mapping[str, Ref[Callable[[], object]]] = field(default_factory=dict)
    components: Mapping[str, str] = field(default_factory=dict)
    resolve: Ref[Resolve] | None = None
    check: Ref[Check] | None = None
    preflight: Ref[Preflight] | None = None
    tables: Ref[Tables] | None = None

    def __post_init__(self) -> None:
        if bool(self.section) != (self.settings is not None):
            raise ValueError("give both `section` and `settings`, or neither")
        unknown = sorted(set(self.defaults) - set(self.results))
        if unknown:
            raise ValueError(f"`defaults` names fields `results` does not declare: {unknown}")

    def settings_class(self) -> type[Settings] | None:
        """The class validating the section, imported now; None without a section."""
        return _resolved(self.settings)

    def resolve_part(self) -> Resolve | None:
        """The `resolve` part, imported now; None where not given."""
        return _resolved(self.resolve)

    def check_part(self) -> Check | None:
        """The `check` part, imported now; None where not given."""
        return _resolved(self.check)

    def preflight_part(self) -> Preflight | None:
        """The `preflight` part, imported now; None where not given."""
        return _resolved(self.preflight)

    def tables_part(self) -> Tables | None:
        """The `tables` part, imported now; None where not given."""
        return _resolved(self.tables)

    def result_types(self) -> dict[str, object]:
        """Each declared results field -> its type, resolved."""
        return {key: resolve_ref(ref) for key, ref in self.results.items()}

    def result_defaults(self) -> dict[str, object]:
        """Each declared results field with a default -> that default, made now."""
        return {key: resolve_ref(ref)() for key, ref in self.defaults.items()}
