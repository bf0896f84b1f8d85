"""Each diagnostic as the gain over its floor.

A decoder trained on vectors that carry no information about the sentence (the control encoder
`random-gaussian`: a fresh Gaussian vector per sentence) still regenerates something: frequent
words, a typical length, the language model it learnt. That is the floor of every diagnostic
that compares the output's text with the input's; an encoder's gain over it is what its
vector, and not the decoder on its own, accounts for.

For a diagnostic measured in the encoder's own space, the random vector is the wrong floor:
the `cosine` of a re-encoded output is compared with a vector the encoder made, and any
pooling encoder gives unrelated sentences a high cosine (the floor's own output is re-encoded
against a fresh random vector, cosine about 0, so every encoder would gain by construction).
Such a metric declares its chance level (`harness.protocols.ChanceLevelMetric`): for
cosine, the encoder's cosine between each test sentence's vector and an unrelated test
sentence's. Its gain is measured against the encoder's own chance level.

Each gain is a paired comparison on the same test sentences (the rankings' test,
`harness.analyses.rankings.paired.paired_comparisons`: exact or permutation test, the bootstrap
interval), Holm-corrected over the encoders compared on that decoder and diagnostic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from harness.analyses.floor.results import FloorGain, FloorGains
from harness.analyses.rankings.results import PairedDifference
from harness.analyses.run import Chance, Statistics
from harness.protocols import SpecView
from harness.results.model import defined
from harness.stages.base import RunContext

if TYPE_CHECKING:
    from harness.protocols import Metric

FLOOR_ENCODER = "random-gaussian"
"""The registered name of the control encoder whose diagnostics are the decoder's floor."""

CHANCE = "chance"
"""`FloorGain.basis` of a gain over the encoder's own chance level."""


def floor_encoder(spec: SpecView) -> str | None:
    """The name in the run of the first encoder registered as `FLOOR_ENCODER` (a joined
    reference's first, `Spec.encoder_names`), or None."""
    return next((name for name, registered in spec.encoder_names()
                 if registered == FLOOR_ENCODER), None)


def _gain(difference: PairedDifference, floor_value: float | None, basis: str,
          sentences: int) -> FloorGain:
    return FloorGain(gain=difference.difference, ci95=difference.ci95, p=difference.p,
                     test=difference.test, p_holm=difference.p_holm,
                     significant=difference.significant, n=sentences, floor=floor_value,
                     basis=basis)


def gains_over_floor(metrics: Mapping[str, Metric], statistics: Statistics, chance: Chance,
                     floor: str | None, *, resamples: int, permutations: int, seed: int
                     ) -> FloorGains | None:
    """Return every encoder's gain over its floor per decoder and diagnostic; None when there
    is none.

    `metrics` maps each diagnostic's name to its metric; `statistics` and `chance` are as
    `harness.analyses.run.AnalysisRun.statistics` reads them. A diagnostic with chance-level
    statistics compares each encoder with its own chance level (`basis` "chance"); any other
    compares each encoder with the `floor` encoder, when the run has one. Each group of
    comparisons (one decoder and diagnostic) is Holm-corrected on its own.
    """
    from harness.analyses.rankings.paired import paired_comparisons
    from harness.stats import metric_score, sentence_table

    gains: dict[str, dict[str, dict[str, FloorGain]]] = {}
    for (decoder, name), scored in statistics.items():
        metric, levels = metrics[name], chance.get(name, {})
        compared: dict[str, Sequence[np.ndarray]] = dict(scored)
        if levels:
            basis = CHANCE
            pairs = [(encoder, f"{encoder} ({CHANCE})") for encoder in scored
                     if encoder in levels]
            for encoder, level in pairs:
                compared[level] = [levels[encoder]] * len(scored[encoder])
        elif floor is not None and floor in scored:
            basis = floor
            pairs = [(encoder, floor) for encoder in scored if encoder != floor]
        else:
            continue
        if not pairs:
            continue
        differences = paired_comparisons(metric, compared, pairs, resamples=resamples,
                                         seed=seed, permutations=permutations)
        floors = {b: sentence_table(metric, compared[b]) for _, b in pairs}
        gains.setdefault(decoder, {})[name] = {
            d.a: _gain(d, defined(floors[d.b].value), basis, floors[d.b].sentences)
            for d in differences}
    if not gains:
        return None
    at_chance = {name: {encoder: metric_score(metrics[name], [stats], seed=seed,
                                              resamples=resamples)
                        for encoder, stats in by_encoder.items()}
                 for name, by_encoder in chance.items() if name in metrics}
    return FloorGains(encoder=floor, resamples=resamples, permutations=permutations,
                      seeds=any(len(s) > 1 for by in statistics.values() for s in by.values()),
                      gains=gains, chance=at_chance or None)


def floor_gains(ctx: RunContext, statistics: Statistics, chance: Chance) -> FloorGains | None:
    """The run's gains over the floor (`gains_over_floor`, with the spec's metrics, floor
    encoder, resamples, permutations and seed)."""
    spec = ctx.spec
    return gains_over_floor({c.name: ctx.build_once(c) for c in spec.metrics}, statistics,
                            chance, floor_encoder(spec),
                            resamples=spec.comparison.resamples,
                            permutations=spec.comparison.permutations, seed=spec.seed)
