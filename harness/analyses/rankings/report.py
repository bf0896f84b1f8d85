"""Rank stability: the encoders' rank on each diagnostic with the interval its Holm-corrected
pairwise tests allow, and the differences that are significant after that correction."""

from __future__ import annotations

from harness.analyses.rankings.results import DiagnosticRanking, PairedDifference
from harness.report.elements import (
    ALPHA,
    Section,
    Table,
    digits_for,
    excluded_controls,
    fmt,
    fmt_span,
    higher_is_better,
    join_names,
    plural,
)
from harness.results.model import RunResults


def better(difference: PairedDifference, higher: bool) -> tuple[str, str] | None:
    """(better encoder, worse encoder) of a significant difference; None when it is not
    significant or undefined. `higher`: whether a higher value is better on the diagnostic."""
    if not difference.significant or not difference.difference:
        return None
    a_wins = (difference.difference > 0) == higher
    return (difference.a, difference.b) if a_wins else (difference.b, difference.a)


def significant_pairs(ranking: DiagnosticRanking, higher: bool) -> list[tuple[str, str]]:
    """The (better, worse) pairs whose difference is significant, in the ranking's order."""
    return [pair for d in ranking.differences if (pair := better(d, higher)) is not None]


def wins(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Better encoder -> the encoders it is significantly better than, from `significant_pairs`,
    in their order."""
    found: dict[str, list[str]] = {}
    for winner, loser in pairs:
        found.setdefault(winner, []).append(loser)
    return found


def no_difference_sentence(pairs: list[tuple[str, str]]) -> str:
    """The pairs of encoders whose difference is not significant, as a sentence that cannot be
    read as one group of encoders: "No significant difference between a and b." for one pair,
    "No significant difference within the pairs: a and b; c and d." for several."""
    if len(pairs) == 1:
        return f"No significant difference between {pairs[0][0]} and {pairs[0][1]}."
    return ("No significant difference within the pairs: "
            + "; ".join(f"{a} and {b}" for a, b in pairs) + ".")


TESTS = {"mcnemar-exact": "McNemar's exact test", "sign-flip-exact": "the exact sign-flip test",
         "permutation": "the paired permutation test",
         "sentences+seeds-welch-t": "Welch's t over test sentences and decoder seeds"}
"""The tests of `PairedDifference.test`, in words."""


def ranking_setup(ranking: DiagnosticRanking) -> str:
    """How a ranking's tests were got, in words."""
    tests = sorted({TESTS.get(d.test, d.test) for d in ranking.differences if d.test})
    seeds = ("seed variance included" if ranking.seed_variance else
             "seeds averaged per sentence: these decoders compared, seed variance not included"
             if ranking.seeds else "one decoder seed: seed variance not included")
    tested = " and ".join(tests) if tests else "no pair tested"
    return f"{plural(ranking.sentences, 'test sentence')}; {tested}; {seeds}"


def _ranked(ranking: DiagnosticRanking) -> list[str]:
    return sorted(ranking.encoders, key=lambda e: (ranking.encoders[e].rank or 10**6, e))


def stability_section(results: RunResults) -> Section | None:
    """Per decoder, one table: per diagnostic and encoder its value, rank, the rank's 95%
    interval and the encoders it is significantly better than."""
    if not results.rankings:
        return None
    direction = higher_is_better(results)
    text = ["Rank 1 is best; tied encoders share the best rank. Every pair of encoders is "
            "compared on the same test sentences, the sentence as the unit: McNemar's exact test "
            "on the discordant sentences for a rate with one seed (the exact sign-flip test "
            "over seeds' counts with several), the paired permutation test for other "
            "diagnostics. An encoder is significantly better than another when their test "
            f"survives Holm's correction over all the pairs of the diagnostic (family-wise "
            f"error {ALPHA:g}). The rank interval runs from 1 + the number of encoders "
            "significantly better to the number ranked minus those significantly worse "
            "(Klein, Wright & Wieczorek 2020); only a pair's own test says whether it "
            "differs. Tie groups cut the ranking exactly where every encoder above is "
            "significantly better than every encoder below."]
    controls = excluded_controls(results)
    if controls:
        text.append(f"Control encoders ({join_names(controls)}) are reference points, not "
                    "ranked (comparison.controls: exclude); their values are in the "
                    "diagnostics table and the gain over the floor.")
    tables = []
    for decoder, by_diagnostic in results.rankings.items():
        rows = []
        for diagnostic, ranking in by_diagnostic.items():
            higher = direction.get(diagnostic, True)
            pairs = significant_pairs(ranking, higher)
            beaten = wins(pairs)
            for encoder in _ranked(ranking):
                place = ranking.encoders[encoder]
                rows.append([diagnostic, encoder, fmt(place.value, digits_for(higher)),
                             fmt(place.rank), fmt_span(*place.rank_ci95),
                             fmt(ranking.groups.get(encoder)),
                             ", ".join(beaten.get(encoder, [])) or "–"])
            text.append(f"- {decoder}, {diagnostic}: {len(pairs)} "
                        f"of {plural(len(ranking.differences), 'pair')} differ significantly "
                        f"after Holm's correction ({ranking_setup(ranking)})"
                        + (f"; some encoder's score was undefined in "
                           f"{ranking.undefined_resamples} bootstrap resamples of the "
                           "differences' intervals" if ranking.undefined_resamples else "")
                        + ".")
        tables.append(Table(f"Decoder {decoder}", ["diagnostic", "encoder", "value", "rank",
                                                    "rank interval", "tie group",
                                                    "significantly better than (Holm)"], rows))
    return Section("Rank stability", text, tables=tables)
