"""How firmly the test set orders the encoders on each diagnostic.

The diagnostics of every encoder are scored on the same test sentences, so encoders are compared
paired, with the sentence as the unit (`harness.analyses.rankings.paired`): each pair's difference gets an
exact (McNemar, sign-flip) or paired permutation test, Holm-corrected over the pairs of the
diagnostic, and each encoder a rank interval consistent with those tests. The encoders compared
are the ones under study: control encoders are reference points unless the spec includes them
(`comparison.controls`).
"""

from __future__ import annotations

import time

from harness.analyses.rankings.results import DiagnosticRanking
from harness.analyses.run import Statistics
from harness.stages.base import RunContext

MIN_RANKED = 2
"""Encoders needed for a ranking: with one there is nothing to compare."""


def rank_stability(ctx: RunContext, statistics: Statistics
                   ) -> dict[str, dict[str, DiagnosticRanking]]:
    """Decoder -> diagnostic -> the studied encoders' rank intervals and paired differences:
    tests with `comparison.permutations` swaps where no exact one applies, intervals from
    `comparison.resamples` paired bootstrap resamples, Holm over each diagnostic's pairs."""
    from harness.analyses.rankings.paired import paired_ranking
    from harness.protocols import higher_is_better

    started = time.perf_counter()
    section = ctx.spec.comparison
    rankings: dict[str, dict[str, DiagnosticRanking]] = {}
    for decoder in ctx.spec.decoders:
        for component in ctx.spec.metrics:
            scored = statistics.get((decoder.name, component.name), {})
            studied = {name: scored[name] for name in ctx.spec.studied(list(scored))}
            if len(studied) < MIN_RANKED:
                continue
            metric = ctx.build_once(component)
            rankings.setdefault(decoder.name, {})[component.name] = paired_ranking(
                metric, studied, higher_is_better=higher_is_better(metric),
                resamples=section.resamples, permutations=section.permutations,
                seed=ctx.spec.seed)
    ctx.add_time("rankings", time.perf_counter() - started)
    return rankings
