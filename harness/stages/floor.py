"""Stage 9d: each diagnostic as the gain over the floor.

A decoder trained on vectors that carry no information about the sentence (the control encoder
`random-gaussian`: a fresh Gaussian vector per sentence) still regenerates something: frequent
words, a typical length, the language model it learnt. That is the floor of every diagnostic; an
encoder's gain over it is what its vector, and not the decoder on its own, accounts for.

The gain is the encoder's score minus the floor's, same decoder. Its interval is the paired
bootstrap of the rank-stability stage (`harness.stages.rankings`): both are scored on the same
resampled test sentences, and where decoders were trained with several seeds each resample
draws one seed per encoder, so seed variance is included exactly as in the rankings. The gains
are read off those paired differences, so the two sections of the report always agree.
"""

from __future__ import annotations

from harness.results import DiagnosticRanking, FloorGain, FloorGains, PairedDifference
from harness.spec import Spec

FLOOR_ENCODER = "random-gaussian"
"""The registered name of the control encoder whose diagnostics are the decoder's floor."""


def floor_encoder(spec: Spec) -> str | None:
    """The name in the run of the first encoder registered as `FLOOR_ENCODER`, or None."""
    return next((encoder.name for encoder in spec.components("encoder")
                 if encoder.info.name == FLOOR_ENCODER), None)


def _gain(difference: PairedDifference, floor: str, sentences: int) -> FloorGain:
    """The gain over the floor from the paired difference of an encoder and the floor."""
    if difference.a == floor:  # floor - encoder: negate, and swap the interval's ends
        low, high = difference.ci95
        return FloorGain(gain=None if difference.difference is None else -difference.difference,
                         ci95=(None if high is None else -high, None if low is None else -low),
                         p=difference.p, significant=difference.significant, n=sentences)
    return FloorGain(gain=difference.difference, ci95=difference.ci95, p=difference.p,
                     significant=difference.significant, n=sentences)


def gains_over_floor(floor: str, rankings: dict[str, dict[str, DiagnosticRanking]]
                     ) -> FloorGains | None:
    """Return every encoder's gain over the `floor` encoder per decoder and diagnostic, from
    the rankings' paired differences; None when no ranking holds the floor."""
    gains: dict[str, dict[str, dict[str, FloorGain]]] = {}
    resamples, seeds = 0, False
    for decoder, by_diagnostic in rankings.items():
        for diagnostic, ranking in by_diagnostic.items():
            if floor not in ranking.encoders:
                continue
            resamples, seeds = ranking.resamples, seeds or ranking.seeds
            gains.setdefault(decoder, {})[diagnostic] = {
                (d.b if d.a == floor else d.a): _gain(d, floor, ranking.sentences)
                for d in ranking.differences if floor in (d.a, d.b)}
    if not gains:
        return None
    return FloorGains(encoder=floor, resamples=resamples, seeds=seeds, gains=gains)


def floor_gains(spec: Spec, rankings: dict[str, dict[str, DiagnosticRanking]]
                ) -> FloorGains | None:
    """The run's gains over the floor, or None when it has no `random-gaussian` encoder."""
    floor = floor_encoder(spec)
    return None if floor is None else gains_over_floor(floor, rankings)
