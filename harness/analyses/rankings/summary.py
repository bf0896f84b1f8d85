"""The rankings' sentences for the report's "What this run shows": which encoders differ
significantly on the ranking diagnostic after Holm's correction over its pairs, and which do
not."""

from __future__ import annotations

from harness.analyses.correlation.results import ranked_by
from harness.analyses.rankings.report import (
    no_difference_sentence,
    ranking_setup,
    significant_pairs,
    wins,
)
from harness.analyses.rankings.results import DiagnosticRanking
from harness.report.elements import higher_is_better, join_names, plural
from harness.results.model import RunResults

LISTED_PAIRS = 6
"""Pairs without a significant difference are named up to this many, else counted."""


def _ranking(results: RunResults) -> tuple[str, str, DiagnosticRanking] | None:
    """(decoder, diagnostic, ranking) of the ranking diagnostic on the correlated decoder."""
    decoder = results.primary_decoder()
    by_diagnostic = (results.rankings or {}).get(decoder or "", {})
    if not by_diagnostic:
        return None
    wanted = ranked_by(results)
    diagnostic = wanted if wanted in by_diagnostic else next(iter(by_diagnostic))
    return decoder or "", diagnostic, by_diagnostic[diagnostic]


def ranking_claims(results: RunResults) -> list[str]:
    """Which encoders differ significantly on the ranking diagnostic, and which do not."""
    found = _ranking(results)
    if found is None:
        return []
    decoder, diagnostic, ranking = found
    higher = higher_is_better(results).get(diagnostic, True)
    pairs = significant_pairs(ranking, higher)
    total = len(ranking.differences)
    where = f"On {diagnostic} (decoder {decoder}; {ranking_setup(ranking)})"
    if not total:
        return [f"{where}, no pairwise differences were recorded."]
    if not pairs:
        return [f"{where}, no two encoders differ significantly after Holm's correction: the "
                f"test set does not establish their order on {diagnostic}."]
    direction = "higher" if higher else "lower, which is better,"
    claims = "; ".join(f"{winner} scores significantly {direction} than {join_names(losers)}"
                       for winner, losers in wins(pairs).items())
    sentence = (f"{where}, {len(pairs)} of {plural(total, 'encoder pair')} differ "
                f"significantly after Holm's correction: {claims}.")
    won = set(pairs)
    level = [(d.a, d.b) for d in ranking.differences
             if (d.a, d.b) not in won and (d.b, d.a) not in won]
    if level and len(level) <= LISTED_PAIRS:
        sentence += f" {no_difference_sentence(level)}"
    elif level:
        sentence += f" The other {len(level)} pairs do not differ significantly."
    return [sentence]
