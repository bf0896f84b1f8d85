"""The floor analysis's records in results.json (`floor`): what each encoder adds to its floor."""

from __future__ import annotations

from pydantic import Field

from harness.results.records import MetricScore, Record, is_none


class FloorGain(Record):
    """An encoder's score minus its floor on the same `n` test sentences: `floor` is the
    floor's value and `basis` what it is (the floor encoder's name, or "chance": the encoder's
    own chance level). `ci95` is the paired-bootstrap interval of the gain (uncorrected), `p`
    the p-value of `test`, `p_holm` that p adjusted by Holm over the encoders compared on the
    same decoder and diagnostic, `significant` true when `p_holm` <= 0.05."""

    gain: float | None
    ci95: tuple[float | None, float | None] = (None, None)
    p: float | None = None
    test: str | None = Field(None, exclude_if=is_none)
    p_holm: float | None = Field(None, exclude_if=is_none)
    significant: bool = False
    n: int = 0
    floor: float | None = None
    basis: str | None = Field(None, exclude_if=is_none)


class FloorGains(Record):
    """What each encoder adds to its floor: decoder -> diagnostic -> encoder -> gain. The floor
    is what the decoder manages from a vector carrying no information (`encoder`, a
    `random-gaussian`), or, for a diagnostic measured in the encoder's own space (cosine), the
    encoder's chance level: `chance` holds those (metric -> encoder -> score with interval)."""

    encoder: str | None = None
    resamples: int = 0
    permutations: int | None = Field(None, exclude_if=is_none)
    seeds: bool = False
    gains: dict[str, dict[str, dict[str, FloorGain]]] = {}
    chance: dict[str, dict[str, MetricScore]] | None = Field(None, exclude_if=is_none)
