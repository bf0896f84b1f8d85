"""Checks of the spec's `privacy:` section beyond its schema (`harness.analyses.privacy.spec`):
the attacker must be one of the spec's decoders and the leakage diagnostic one of its metrics,
and the canaries need their floor and room in `generation.max_len`, found when the spec is
read, not after every encoder's decoders have trained."""

from __future__ import annotations

from harness.analyses.privacy.entities import fewest_words
from harness.analyses.privacy.spec import privacy_settings, studied_defences
from harness.errors import SpecError
from harness.protocols import BuildContext
from harness.spec.positions import Loc, Positions, dotted
from harness.spec.schema import Spec

DEFENCES: Loc = ("privacy", "defences")
"""Where the spec lists the defences the analysis studies."""

FLOOR_ENCODER = "random-gaussian"
"""The control whose attacker is the canaries' floor (`harness.analyses.floor.gains`'s)."""


def runs_privacy(spec: Spec) -> bool:
    """True when the spec's privacy analysis has something to study: defences, and the
    privacy analysis among the spec's analyses."""
    return bool(studied_defences(spec)) and (spec.analyses == "all" or any(
        analysis.name == "privacy" for analysis in spec.analyses))


def check_privacy(spec: Spec, positions: Positions) -> None:
    """Raise, when the privacy analysis will run, for a spec without decoders, an attacker
    (`privacy.attacker`) that is not one of the spec's decoders, a leakage diagnostic
    (`privacy.leakage`, `token-f1` unless set) or the measure attacks are compared on
    (`privacy.compare_on`, `token-f1:content` unless set) that is not one of its metrics, or
    two attacks with one label (`check_attack_labels`)."""
    if not runs_privacy(spec):
        return
    if spec.reference is not None:
        raise positions.error("a reference bundle holds no vectors for the privacy analysis to "
                              "attack: run the defences without `reference:`, or drop "
                              "`privacy.defences`", DEFENCES)
    decoders = [decoder.name for decoder in spec.decoders]
    if not decoders:
        raise positions.error("the privacy analysis attacks the defended vectors with a decoder "
                              "and the spec has none: add `decoders:` (and `metrics:`), or "
                              "remove `privacy.defences`", DEFENCES)
    section = privacy_settings(spec)
    if section.attacker is not None and section.attacker not in decoders:
        raise positions.error(f"{section.attacker!r} is not among the spec's decoders "
                              f"({', '.join(decoders)}): name one of them, or remove "
                              "`attacker` to attack with the first", ("privacy", "attacker"))
    metrics = [metric.name for metric in spec.metrics]
    for key in ("leakage", "compare_on", "text_on"):
        name = getattr(section, key)
        if name is not None and name not in metrics:
            default = "" if key in section.model_fields_set else " (the default)"
            raise _error(positions, f"{name!r}{default} is not among the spec's metrics "
                                    f"({', '.join(metrics)}): add {name} to `metrics:`, or set "
                                    f"`privacy.{key}` to one of them", ("privacy", key))
    check_attack_labels(spec, positions)
    check_canaries(spec, positions)


def check_attack_labels(spec: Spec, positions: Positions) -> None:
    """Raise for two entries of `privacy.attacks` with one label (an attack's registered name,
    or the label it gives itself, as `align-10`): results.json keeps each point's attacks by
    label. Each attack is built to read its label (cheap: an attack works in `fit`)."""
    context = BuildContext(seed=spec.seed)
    seen: dict[str, int] = {}
    for index, entry in enumerate(privacy_settings(spec).attacks):
        label = str(getattr(entry.build(context), "label", entry.name))
        if label in seen:
            raise _error(positions, f"the attacks {seen[label]} and {index} are both labelled "
                                    f"{label!r} (results.json keeps each point's attacks by "
                                    "label): give them different options, or drop one",
                         ("privacy", "attacks", index))
        seen[label] = index


def check_canaries(spec: Spec, positions: Positions) -> None:
    """Raise, when the privacy analysis runs canaries (`privacy.canaries` above 0), for a spec
    without the random-gaussian control, whose attacker is their floor, or with a
    `generation.max_len` that would cut them: every word of a canary is one subword piece at
    least (`harness.analyses.privacy.entities.fewest_words`), and max_len counts the end of
    sentence. The run measures them in pieces once it has the vocabulary
    (`harness.analyses.privacy.canaries.check_canaries`)."""
    count = privacy_settings(spec).canaries
    if not count:
        return
    if not any(encoder.info.name == FLOOR_ENCODER for encoder in spec.components("encoder")):
        raise _error(positions, "the canaries are read against their floor, the attacker of "
                                f"the {FLOOR_ENCODER} control, and the spec has no such encoder: "
                                f"add `{{name: {FLOOR_ENCODER}}}` to `encoders:` (a control is "
                                "not studied unless `comparison.controls: include`), or set "
                                "`privacy.canaries: 0`", ("privacy", "canaries"))
    words, max_len = fewest_words(count), spec.generation.max_len
    if words + 1 > max_len:
        raise _error(positions, f"the canaries (privacy.canaries) have up to {words} words, one "
                                f"subword piece each at least, and max_len {max_len} counts the "
                                f"end of sentence: raise `generation.max_len` to at least "
                                f"{words + 1} (more where words split into pieces), or set "
                                "`privacy.canaries: 0`", ("generation", "max_len"))


def _error(positions: Positions, message: str, loc: Loc) -> SpecError:
    """An error about the field at `loc`; one the spec does not write (its default) is
    located at the `privacy.defences` that make the privacy analysis read it."""
    if loc in positions.lines or positions.from_set(loc):
        return positions.error(message, loc)
    return SpecError(message, file=positions.file, line=positions.line(DEFENCES),
                     field=dotted(loc))
