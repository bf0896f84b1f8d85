"""Encoders compared on the same test sentences: pairwise differences with exact or permutation
tests corrected by Holm, and rank intervals consistent with those tests.

Every encoder of a run is scored on the same test sentences, and the sentence is the unit
(`harness.stats.units`): a sentence brings all its decoder seeds wherever it goes.

- Each pair's difference gets a test (`harness.stats.significance.paired_test`: McNemar's exact
  test for Id and PERM with one seed, the exact sign-flip test with several, the paired
  permutation test otherwise), and the p-values of all the pairs compared on a diagnostic are
  adjusted by Holm's (1979) step-down procedure: `significant` means significant after that
  correction, at family-wise error 0.05.
- Each difference also gets a descriptive 95% interval, the percentile interval of the paired
  bootstrap (Koehn 2004): every resample draws one multiset of sentences shared by all
  encoders. Where that collapses to a point (two rates that agree on every sentence), the
  MOVER interval from the two rates' exact intervals (`mover_difference`) is used instead.
  The interval is not corrected for the number of pairs; the test and its correction decide
  significance.
- Tie groups (`tie_groups`): the encoders in rank order, cut exactly where every encoder above
  is significantly better than every encoder below (after the correction).
- An encoder's rank interval follows from the corrected tests: from 1 + the number of encoders
  significantly better than it to the number of ranked encoders minus the number significantly
  worse (the construction of rank confidence intervals from simultaneous pairwise comparisons
  of Klein, Wright & Wieczorek 2020). It always holds the observed rank. Only a pair's own test
  says whether the pair differs: intervals that do not overlap do not (A significantly above C
  and D, both significantly above B, separates A's and B's intervals whatever A against B
  gives).

With one or two decoder seeds, tests and intervals are conditional on the decoders trained (a
sentence's statistics averaged over its seeds): seed-to-seed variance is not part of the
comparison. With at least `MIN_SEEDS` seeds per encoder it is: the test is then
`seeds_t_pvalue` (the sentences' paired bootstrap standard error and each encoder's variance
over its seeds, Welch's t), so a rank interval holds for the encoders, not only for the
decoders that happened to be trained.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from harness.analyses.rankings.results import DiagnosticRanking, PairedDifference, RankInterval
from harness.results.records import defined as finite
from harness.stats.intervals import (
    MIN_SEEDS,
    check_arguments,
    mover_difference,
    percentile_interval,
    rate_interval,
    resample_counts,
)
from harness.stats.multiple import ALPHA, holm_adjusted
from harness.stats.ranks import rank
from harness.stats.significance import SEEDS_T, PairedTest, paired_test, seeds_t_pvalue
from harness.stats.units import SentenceTable, check_comparable, sentence_table

if TYPE_CHECKING:
    from harness.protocols import Metric

PERMUTATIONS = 9999
"""Random swaps behind a paired permutation test: p can reach 1e-4, below Holm's threshold
0.05 / m for up to 500 pairs (32 encoders)."""


def sentence_tables(metric: Metric, statistics: Mapping[str, Sequence[np.ndarray]]
                    ) -> dict[str, SentenceTable]:
    """Encoder -> its `SentenceTable` (one (n, k) array per decoder seed), checked comparable:
    the same test sentences, and the same seeds where the rows hold each seed's columns."""
    if not statistics:
        raise ValueError("need the statistics of at least one encoder")
    tables = {name: sentence_table(metric, stats) for name, stats in statistics.items()}
    check_comparable(list(tables.values()), list(tables))
    return tables


def resampled_scores(tables: Mapping[str, SentenceTable], *, resamples: int, seed: int
                     ) -> np.ndarray:
    """Scores (resamples, encoders) of every encoder on the same bootstrap resamples of the test
    sentences, drawn from `numpy.random.default_rng(seed)` (`resample_counts`), NaN where
    undefined."""
    names = list(tables)
    n = tables[names[0]].sentences
    rng = np.random.default_rng(seed)
    out = np.empty((resamples, len(names)))
    row = 0
    for counts in resample_counts(n, resamples, rng):
        for e, name in enumerate(names):
            out[row:row + len(counts), e] = tables[name].score(counts @ tables[name].rows)
        row += len(counts)
    return out


def paired_comparisons(metric: Metric, statistics: Mapping[str, Sequence[np.ndarray]],
                       pairs: Sequence[tuple[str, str]], *, resamples: int, seed: int,
                       permutations: int = PERMUTATIONS, level: float = 0.95,
                       alpha: float = ALPHA) -> list[PairedDifference]:
    """Return a - b for each (a, b) of `pairs`, tested and Holm-corrected over `pairs`.

    `statistics` maps encoder -> one (n, k) array per decoder seed. `difference` is the
    observed difference of the encoders' values; `ci95` its paired-bootstrap interval
    (`resamples` shared resamples from `seed`; the MOVER interval of the two exact rate
    intervals where the bootstrap collapses to a point); `p` and `test` from `paired_test`
    (the permutation test's swaps drawn from `default_rng([seed, pair index])`); `p_holm` the
    Holm-adjusted p over the pairs with a p-value; `significant` when `p_holm` <= `alpha`.
    """
    check_arguments(resamples, level)
    tables = sentence_tables(metric, {name: statistics[name]
                                      for name in dict.fromkeys(x for pair in pairs
                                                                for x in pair)})
    scores = resampled_scores(tables, resamples=resamples, seed=seed)
    return _compare(tables, scores, pairs, seed=seed, permutations=permutations, level=level,
                    alpha=alpha)


def _compare(tables: Mapping[str, SentenceTable], scores: np.ndarray,
             pairs: Sequence[tuple[str, str]], *, seed: int, permutations: int, level: float,
             alpha: float) -> list[PairedDifference]:
    names = list(tables)
    raw = []
    for index, (a, b) in enumerate(pairs):
        observed = tables[a].value - tables[b].value
        resampled = scores[:, names.index(a)] - scores[:, names.index(b)]
        ci = _difference_interval(tables[a], tables[b], resampled, level)
        if min(tables[a].seeds, tables[b].seeds) >= MIN_SEEDS:
            # Training variance joins the sentences' (`seeds_t_pvalue`): a claim about the
            # encoders, not about these decoders.
            spread = resampled[np.isfinite(resampled)]
            se = float(spread.std(ddof=1)) if len(spread) > 1 else math.nan
            test = PairedTest(seeds_t_pvalue(observed, se, tables[a].seed_values,
                                             tables[b].seed_values, tables[a].sentences),
                              SEEDS_T)
        else:
            test = paired_test(tables[a], tables[b], permutations=permutations,
                               rng=np.random.default_rng([seed, index]))
        raw.append((a, b, observed, ci, test))
    tested = [i for i, item in enumerate(raw) if math.isfinite(item[4].p)]
    adjusted = dict(zip(tested, holm_adjusted([raw[i][4].p for i in tested])))
    return [PairedDifference(a=a, b=b, difference=finite(observed), ci95=ci,
                             p=finite(test.p), test=test.test if i in adjusted else None,
                             p_holm=adjusted.get(i),
                             significant=adjusted.get(i, 1.0) <= alpha)
            for i, (a, b, observed, ci, test) in enumerate(raw)]


def _difference_interval(a: SentenceTable, b: SentenceTable, resampled: np.ndarray,
                         level: float) -> tuple[float | None, float | None]:
    interval = percentile_interval(resampled, level)
    low, high = interval.low, interval.high
    if low == high and a.is_proportion and b.is_proportion:
        # Rates that agree on every sentence (both 0 in 500, say): every resample gives the
        # same difference. The rates' exact intervals still bound what such counts allow.
        first, second = rate_interval(a, level), rate_interval(b, level)
        low, high = mover_difference(first[:3], second[:3])
    return finite(low), finite(high)


def significance_ranks(values: Mapping[str, float], differences: Sequence[PairedDifference],
                       higher_is_better: bool) -> dict[str, RankInterval]:
    """Encoder -> its value, observed rank (1 best, ties share the best) and rank interval from
    the significant differences: [1 + #significantly better, #ranked - #significantly worse]
    (Klein, Wright & Wieczorek 2020). An encoder whose value is undefined is not ranked."""
    points = rank(dict(values), higher_is_better)
    better = dict.fromkeys(points, 0)
    worse = dict.fromkeys(points, 0)
    for d in differences:
        if not d.significant or d.difference is None or d.a not in points or d.b not in points:
            continue
        winner, loser = (d.a, d.b) if (d.difference > 0) == higher_is_better else (d.b, d.a)
        better[loser] += 1
        worse[winner] += 1
    ranked = len(points)
    return {name: RankInterval(value=finite(value), rank=points.get(name),
                               rank_ci95=(1 + better[name], ranked - worse[name])
                               if name in points else (None, None))
            for name, value in values.items()}


def tie_groups(order: Sequence[str], significant: set[tuple[str, str]]) -> dict[str, int]:
    """Encoder -> its tie group (1 first) over `order` (best first): a cut between two
    neighbours wherever every encoder above is significantly better than every encoder below
    (`significant` holds (better, worse) pairs after the correction); the finest such
    partition. An encoder of one group is significantly better than every encoder of every
    later group; inside a group some pairs may differ, but no clean cut separates them."""
    groups, group = {}, 1
    for i, name in enumerate(order):
        if i and all((a, b) in significant for a in order[:i] for b in order[i:]):
            group += 1
        groups[name] = group
    return groups


def ranking_groups(ranks: Mapping[str, RankInterval], differences: Sequence[PairedDifference],
                   higher_is_better: bool) -> dict[str, int]:
    """The tie groups (`tie_groups`) of the ranked encoders, in the order of their ranks."""
    significant = set()
    for d in differences:
        if d.significant and d.difference:
            a_wins = (d.difference > 0) == higher_is_better
            significant.add((d.a, d.b) if a_wins else (d.b, d.a))
    order = sorted((name for name, place in ranks.items() if place.rank is not None),
                   key=lambda name: (ranks[name].rank, name))
    return tie_groups(order, significant)


def paired_ranking(metric: Metric, statistics: Mapping[str, Sequence[np.ndarray]], *,
                   higher_is_better: bool, resamples: int, seed: int,
                   permutations: int = PERMUTATIONS, level: float = 0.95,
                   alpha: float = ALPHA) -> DiagnosticRanking:
    """Return the encoders' rank intervals and every pairwise difference on one diagnostic.

    Every pair a before b in the given order is compared (`paired_comparisons`, Holm over all
    the pairs); ranks and rank intervals follow from the observed values and the significant
    differences (`significance_ranks`). `undefined_resamples` counts the bootstrap resamples in
    which some encoder's score was undefined.
    """
    check_arguments(resamples, level)
    tables = sentence_tables(metric, statistics)
    names = list(tables)
    pairs = [(names[a], names[b]) for a in range(len(names)) for b in range(a + 1, len(names))]
    scores = resampled_scores(tables, resamples=resamples, seed=seed)
    differences = _compare(tables, scores, pairs, seed=seed, permutations=permutations,
                           level=level, alpha=alpha)
    values = {name: table.value for name, table in tables.items()}
    ranks = significance_ranks(values, differences, higher_is_better)
    return DiagnosticRanking(
        encoders=ranks, groups=ranking_groups(ranks, differences, higher_is_better),
        differences=differences, resamples=resamples, permutations=permutations,
        sentences=tables[names[0]].sentences,
        seeds=max(table.seeds for table in tables.values()) > 1,
        seed_variance=min(table.seeds for table in tables.values()) >= MIN_SEEDS,
        undefined_resamples=int((~np.isfinite(scores)).any(axis=1).sum()))
