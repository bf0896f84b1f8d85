"""Checks of the spec's `privacy:` section beyond its schema (`harness.analyses.privacy.spec`):
the attacker must be one of the spec's decoders and the leakage diagnostic one of its metrics,
found when the spec is read, not after every encoder's decoders have trained."""

from __future__ import annotations

from harness.errors import SpecError
from harness.spec.positions import Loc, Positions, dotted
from harness.spec.schema import Spec


def runs_privacy(spec: Spec) -> bool:
    """True when the spec's privacy analysis has something to study: defences, and the
    privacy analysis among the spec's analyses."""
    return bool(spec.defences) and (spec.analyses == "all" or any(
        analysis.name == "privacy" for analysis in spec.analyses))


def check_privacy(spec: Spec, positions: Positions) -> None:
    """Raise, when the privacy analysis will run, for a spec without decoders, an attacker
    (`privacy.attacker`) that is not one of the spec's decoders, or a leakage diagnostic
    (`privacy.leakage`, `token-f1` unless set) that is not one of its metrics."""
    if not runs_privacy(spec):
        return
    decoders = [decoder.name for decoder in spec.decoders]
    if not decoders:
        raise positions.error("the privacy analysis attacks the defended vectors with a decoder "
                              "and the spec has none: add `decoders:` (and `metrics:`), or "
                              "remove `defences:`", ("defences",))
    section = spec.privacy
    if section.attacker is not None and section.attacker not in decoders:
        raise positions.error(f"{section.attacker!r} is not among the spec's decoders "
                              f"({', '.join(decoders)}): name one of them, or remove "
                              "`attacker` to attack with the first", ("privacy", "attacker"))
    metrics = [metric.name for metric in spec.metrics]
    if section.leakage not in metrics:
        default = "" if "leakage" in section.model_fields_set else " (the default)"
        raise _error(positions, f"{section.leakage!r}{default} is not among the spec's metrics "
                                f"({', '.join(metrics)}): add {section.leakage} to `metrics:`, "
                                "or set `privacy.leakage` to one of them",
                     ("privacy", "leakage"))


def _error(positions: Positions, message: str, loc: Loc) -> SpecError:
    """An error about the field at `loc`; one the spec does not write (its default) is
    located at the `defences:` that make the privacy analysis read it."""
    if loc in positions.lines or positions.from_set(loc):
        return positions.error(message, loc)
    return SpecError(message, file=positions.file, line=positions.line(("defences",)),
                     field=dotted(loc))
