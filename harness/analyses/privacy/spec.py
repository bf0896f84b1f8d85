"""The privacy analysis's spec section (`privacy:`): the defences it studies
(`privacy.defences`, each a `harness.spec.DefenceEntry`), the attacker, the attacks, the
canaries and how leakage is compared."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from harness.protocols import Settings, SpecView
from harness.spec import DefenceEntry


class PrivacySection(Settings):
    """The defences the privacy analysis studies, and how the encoders' vectors are attacked
    under each."""

    # The defences, each a registered defence by name with its options and `levels`
    # (`harness.spec.DefenceEntry`; the core resolves them, `AnalysisParts.components`): the
    # encoders' vectors are attacked clean and under each level. None: nothing to study.
    defences: list[Any] = []

    # The decoder family that attacks (default: the spec's first decoder), trained on the
    # defended training vectors: the attacker adapts to the defence.
    attacker: str | None = None
    # The attacks run on every encoder x defence x level, each a registered attack by name
    # with its options (`harness list` shows them; the core resolves them, `AnalysisParts
    # .components`): a defence is judged by the strongest. `prior` (one constant output) puts
    # the floor at least where knowing the kind of text alone puts it.
    attacks: list[Any] = ["decoder", "prior"]
    # The measure every attack yields, which names the strongest: a metric of the spec. The
    # word-leakage verdict.
    compare_on: str = "token-f1:content"
    # The measure the attacks that write sentences are compared on for the text-recovery
    # verdict (exact match beside it): a metric of the spec; by default `bleu` when the spec
    # scores it, else no text verdict.
    text_on: str | None = None
    # The diagnostic on the figure's leakage axis and in the matched-utility table.
    leakage: str = "token-f1"
    # Also decode the defended test vectors with the decoder trained on clean ones (an
    # attacker who does not know the defence).
    non_adaptive: bool = False
    # Canary sentences with names, places, numbers and dates of the corpus' kind, encoded,
    # defended and decoded by each attacker and by the floor encoder's (0: none).
    canaries: int = Field(default=100, ge=0)
    canary_seed: int = Field(default=0, ge=0)
    # Candidates M per canary entity for its exposure: the true value and M-1 others of its
    # type (fewer where the type has fewer values).
    canary_candidates: int = Field(default=32, ge=2)
    # A defence's leakage is compared at the strongest level keeping this share of the clean
    # vectors' utility.
    matched_utility: float = Field(default=0.95, gt=0, le=1)


def privacy_settings(spec: SpecView) -> PrivacySection:
    """The spec's `privacy:` section, typed (defaults where the file gives none)."""
    return spec.section("privacy", PrivacySection)


def text_measure(spec: SpecView) -> str | None:
    """The measure of the text-recovery verdict: `privacy.text_on`, else `bleu` when the spec
    scores it, else None (no text verdict)."""
    section = privacy_settings(spec)
    if section.text_on is not None:
        return section.text_on
    return "bleu" if any(metric.name == "bleu" for metric in spec.components("metric")) else None


def studied_defences(spec: SpecView) -> list[DefenceEntry]:
    """The defences of the spec's `privacy.defences`, resolved (each with its levels)."""
    return list(privacy_settings(spec).defences)
