"""The privacy analysis's spec section (`privacy:`); the defences themselves are the spec's
`defences:` entries (`harness.spec.DefenceEntry`)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from harness.protocols import Settings, SpecView


class PrivacySection(Settings):
    """How the encoders' vectors are attacked under each defence of the spec's `defences:`."""

    # The decoder family that attacks (default: the spec's first decoder), trained on the
    # defended training vectors: the attacker adapts to the defence.
    attacker: str | None = None
    # The attacks run on every encoder x defence x level, each a registered attack by name
    # with its options (`harness list` shows them; the core resolves them, `AnalysisParts
    # .components`): a defence is judged by the strongest.
    attacks: list[Any] = ["decoder"]
    # The measure every attack yields, which names the strongest: a metric of the spec.
    compare_on: str = "token-f1:content"
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
