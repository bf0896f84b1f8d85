"""Tests of harness.analyses.rankings.paired and harness.stats.significance: paired tests between encoders
with the sentence as the unit, Holm's correction, rank intervals consistent with the tests, and
Fisher-z intervals of correlations across encoders.

Expected values are computed independently: scipy's binomtest (McNemar's exact test is the
binomial test of the discordant sentences at 1/2), enumeration of every sign pattern, Holm's
adjustment by hand, and simulations with a fixed seed.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binomtest, norm
from scipy.stats import t as t_dist

from harness.analyses.rankings.paired import paired_comparisons, paired_ranking
from harness.stats import (
    fisher_interval,
    holm,
    holm_adjusted,
    mcnemar_exact,
    paired_test,
    sentence_table,
    sign_flip_pvalue,
)
from harness_plugins.metrics.bleu import BleuMetric
from harness_plugins.metrics.overlap import IdentityMetric, IdentityPerPermutationMetric


def ones(indices: range | list[int], n: int = 500) -> np.ndarray:
    column = np.zeros((n, 1))
    column[list(indices)] = 1.0
    return column


def discordant(b: int, c: int, n: int = 200, both: int = 10) -> dict[str, list[np.ndarray]]:
    """Id statistics of two encoders: both regenerate `both` sentences, only a regenerates b
    more, only the second c more."""
    a = list(range(both)) + list(range(both, both + b))
    second = list(range(both)) + list(range(both + b, both + b + c))
    return {"a": [ones(a, n)], "b": [ones(second, n)]}


def enumerated_sign_flip(d: list[int]) -> float:
    """P(|sum eps d| >= |sum d|) over all 2^m sign patterns, by brute force."""
    observed = abs(sum(d))
    patterns = list(itertools.product((1, -1), repeat=len(d)))
    return sum(abs(sum(e * x for e, x in zip(signs, d))) >= observed
               for signs in patterns) / len(patterns)


# --- exact tests --------------------------------------------------------------------------------

@pytest.mark.parametrize("b, c", [(4, 0), (9, 0), (7, 3), (0, 0), (12, 5), (1, 1), (20, 8)])
def test_mcnemar_is_the_binomial_test_of_the_discordant_sentences(b, c):
    expected = binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-12)
    if b + c <= 16:  # 2^16 sign patterns at most
        assert mcnemar_exact(b, c) == pytest.approx(enumerated_sign_flip([1] * b + [-1] * c))


def test_four_to_nothing_is_not_significant_and_nine_to_nothing_is():
    four = paired_comparisons(IdentityMetric(), discordant(4, 0), [("a", "b")], resamples=200,
                              seed=1)[0]
    assert four.test == "mcnemar-exact"
    assert four.p == pytest.approx(0.125)
    assert not four.significant
    nine = paired_comparisons(IdentityMetric(), discordant(9, 0), [("a", "b")], resamples=200,
                              seed=1)[0]
    assert nine.p == pytest.approx(2 * 0.5 ** 9)
    assert nine.significant


@pytest.mark.parametrize("m", [4, 8])
def test_the_exact_test_keeps_its_level_under_the_null(m):
    """2,000 simulated pairs of exchangeable encoders with m discordant sentences each (a fair
    coin decides which encoder got each): the test rejects at most 5% (the paired bootstrap
    rejected 12.5% at 4 and 7% at 8)."""
    rng = np.random.default_rng(m)
    rejected = 0
    for _ in range(2000):
        b = int(rng.binomial(m, 0.5))
        statistics = discordant(b, m - b, n=60)
        tables = [sentence_table(IdentityMetric(), statistics[k]) for k in ("a", "b")]
        rejected += paired_test(*tables, permutations=99, rng=rng).p <= 0.05
    assert rejected / 2000 <= 0.05


def test_the_sign_flip_test_over_seeds_is_exact():
    """Three seeds: per sentence, a's successes minus b's are whole numbers in -3..3."""
    a = [ones([0, 1, 2, 3], 40), ones([0, 1, 2], 40), ones([0, 1, 5], 40)]
    b = [ones([1], 40), ones([4], 40), ones([], 40)]
    # per sentence: s0 3-0, s1 3-1, s2 2-0, s3 1-0, s4 0-1, s5 1-0
    d = [3, 2, 2, 1, -1, 1]
    result = paired_test(sentence_table(IdentityMetric(), a), sentence_table(IdentityMetric(), b),
                         permutations=99, rng=np.random.default_rng(0))
    assert result.test == "sign-flip-exact"
    assert result.p == pytest.approx(enumerated_sign_flip(d))
    assert sign_flip_pvalue(np.array(d)) == pytest.approx(enumerated_sign_flip(d))


def test_the_permutation_test_agrees_with_the_exact_test_and_is_never_zero():
    statistics = discordant(12, 2)
    tables = [sentence_table(IdentityPerPermutationMetric(), [np.hstack([s[0], s[0]])])
              for s in statistics.values()]
    # Id/PERM here: the ratio of identical to permutations, no exact test
    result = paired_test(*tables, permutations=20000, rng=np.random.default_rng(3))
    assert result.test == "permutation"
    # every sentence is a permutation where it is identical: ratio 100 for both, no difference
    assert result.p == 1.0
    id_tables = [sentence_table(IdentityMetric(), s) for s in statistics.values()]
    from harness.stats.significance import permutation_pvalue

    approx = permutation_pvalue(*id_tables, permutations=20000, rng=np.random.default_rng(3))
    assert approx == pytest.approx(mcnemar_exact(12, 2), abs=0.004)
    assert permutation_pvalue(*[sentence_table(IdentityMetric(), discordant(60, 0)[k])
                                for k in ("a", "b")], permutations=99,
                              rng=np.random.default_rng(1)) == pytest.approx(1 / 100)


def test_the_permutation_test_of_corpus_bleu_swaps_whole_sentences():
    bleu = BleuMetric()
    refs = ["the cat sat on the mat", "a dog ran in the park today", "hello there world",
            "we will meet again soon", "prices rose sharply in march"] * 8
    good = bleu.sentence_statistics(refs, refs)
    bad = bleu.sentence_statistics(refs, ["mat the on", "park dog", "world", "soon", "march"] * 8)
    p = paired_test(sentence_table(bleu, [good]), sentence_table(bleu, [bad]),
                    permutations=999, rng=np.random.default_rng(0)).p
    assert p == pytest.approx(1 / 1000)  # no swap pattern is as extreme as none or all swapped
    same = paired_test(sentence_table(bleu, [good]), sentence_table(bleu, [good]),
                       permutations=99, rng=np.random.default_rng(0)).p
    assert same == 1.0


# --- Holm ---------------------------------------------------------------------------------------

def test_holm_adjusted_p_values_by_hand():
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> monotone
    assert holm_adjusted(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm(p) == [True, False, False, True]


def test_significant_means_after_holm_over_the_pairs():
    """Three pairs at exact p 0.0039 (9-0), 0.0039 and 0.0313 (6-0): Holm keeps the first two
    (x3, x2) and drops the third only if 0.0313 > 0.05: it stays; with 5-0 (0.0625) it fails."""
    statistics = {"a": [ones(range(0, 20), 200)], "b": [ones(range(0, 11), 200)],
                  "c": [ones(range(0, 6), 200)]}
    ranking = paired_ranking(IdentityMetric(), statistics, higher_is_better=True, resamples=200,
                             seed=2)
    by_pair = {(d.a, d.b): d for d in ranking.differences}
    raw = {pair: mcnemar_exact(int(d.difference * 2), 0) for pair, d in by_pair.items()}
    assert [by_pair[pair].p for pair in raw] == pytest.approx(list(raw.values()))
    expected = holm_adjusted(list(raw.values()))
    assert [by_pair[pair].p_holm for pair in raw] == pytest.approx(expected)
    assert [by_pair[pair].significant for pair in raw] == [p <= 0.05 for p in expected]
    assert ranking.correction == "holm"


# --- rank intervals -----------------------------------------------------------------------------

def test_rank_intervals_follow_the_corrected_tests():
    statistics = {"top": [ones(range(0, 120))], "close": [ones(range(0, 117))],
                  "low": [ones(range(0, 30))]}
    ranking = paired_ranking(IdentityMetric(), statistics, higher_is_better=True, resamples=300,
                             seed=1)
    places = ranking.encoders
    assert (places["top"].rank, places["close"].rank, places["low"].rank) == (1, 2, 3)
    # top and close differ on 3 sentences: not significant, so their ranks are not separated
    assert places["top"].rank_ci95 == (1, 2)
    assert places["close"].rank_ci95 == (1, 2)
    assert places["low"].rank_ci95 == (3, 3)


def test_rank_intervals_count_the_significant_differences():
    """low = 1 + encoders significantly better, high = encoders ranked - those significantly
    worse, by the corrected tests; the observed rank always lies inside."""
    rng = np.random.default_rng(5)
    statistics = {f"e{i}": [(rng.random((300, 1)) < rate).astype(float)]
                  for i, rate in enumerate([0.1, 0.12, 0.2, 0.22, 0.4])}
    ranking = paired_ranking(IdentityMetric(), statistics, higher_is_better=True, resamples=200,
                             seed=1)
    for name, place in ranking.encoders.items():
        better = sum(d.significant and ((d.a == name and d.difference < 0)
                                        or (d.b == name and d.difference > 0))
                     for d in ranking.differences)
        worse = sum(d.significant and ((d.a == name and d.difference > 0)
                                       or (d.b == name and d.difference < 0))
                    for d in ranking.differences)
        assert place.rank_ci95 == (1 + better, 5 - worse)
        assert place.rank_ci95[0] <= place.rank <= place.rank_ci95[1]
    assert any(d.significant for d in ranking.differences)
    assert not all(d.significant for d in ranking.differences)


def test_an_undefined_resample_is_left_out_of_the_permutation_p_value():
    """Id/PERM, one seed, 6 sentences: a has a permutation only on sentence 0 (exact), b only
    on sentence 1 (not exact). Of the 4 swap patterns of those sentences, the 2 that leave one
    side without a permutation are undefined; the other 2 are as extreme as observed: p = 1."""
    from harness.stats.significance import permutation_pvalue

    a, b = np.zeros((6, 2)), np.zeros((6, 2))
    a[0], b[1] = [1.0, 1.0], [0.0, 1.0]
    tables = [sentence_table(IdentityPerPermutationMetric(), [x]) for x in (a, b)]
    p = permutation_pvalue(*tables, permutations=999, rng=np.random.default_rng(0))
    assert p == 1.0


def test_an_undefined_encoder_is_not_ranked():
    none = np.zeros((100, 2))
    some = np.zeros((100, 2))
    some[:10] = 1.0
    ranking = paired_ranking(IdentityPerPermutationMetric(), {"none": [none], "some": [some]},
                             higher_is_better=True, resamples=100, seed=1)
    assert ranking.encoders["none"].rank is None
    assert ranking.encoders["none"].rank_ci95 == (None, None)
    assert ranking.encoders["some"].rank_ci95 == (1, 1)
    (difference,) = ranking.differences
    assert difference.difference is None and difference.p is None
    assert not difference.significant


def test_rates_that_agree_everywhere_get_the_mover_interval_not_a_point():
    zero = {"a": [ones([], 500)], "b": [ones([], 500)]}
    (d,) = paired_comparisons(IdentityMetric(), zero, [("a", "b")], resamples=200, seed=1)
    bound = 100 * (1 - 0.025 ** (1 / 500))
    assert d.ci95 == pytest.approx((-bound, bound))
    assert d.p == 1.0 and not d.significant


def test_encoders_must_share_sentences_and_seeds():
    with pytest.raises(ValueError):
        paired_ranking(IdentityMetric(), {"a": [ones([1], 10)], "b": [ones([1], 12)]},
                       higher_is_better=True, resamples=10, seed=1)
    bleu = BleuMetric()
    stats = bleu.sentence_statistics(["a b c d"] * 4, ["a b c d"] * 4)
    with pytest.raises(ValueError):
        paired_ranking(bleu, {"a": [stats], "b": [stats, stats]}, higher_is_better=True,
                       resamples=10, seed=1)


# --- Fisher-z intervals of correlations ---------------------------------------------------------

def test_fisher_interval_by_hand():
    """Spearman: Bonett & Wright's (2000) variance (1 + r^2/2)/(n-3) with Student's t_{n-2}."""
    half = t_dist.ppf(0.975, 5) * math.sqrt((1 + 0.46 ** 2 / 2) / 4)
    low, high = fisher_interval(0.46, 7, "spearman")
    assert (low, high) == pytest.approx((math.tanh(math.atanh(0.46) - half),
                                         math.tanh(math.atanh(0.46) + half)))
    assert low < 0 < high  # rho 0.46 over 7 encoders says little
    pearson = fisher_interval(0.46, 7, "pearson")
    assert pearson[1] - pearson[0] < high - low
    kendall = fisher_interval(0.3, 9, "kendall")
    kh = norm.ppf(0.975) * math.sqrt(0.437 / 5)
    assert kendall == pytest.approx((math.tanh(math.atanh(0.3) - kh),
                                     math.tanh(math.atanh(0.3) + kh)))


COVERAGE_DRAWS = 4000


@pytest.mark.parametrize("n", [7, 10, 13])
def test_spearman_fisher_interval_covers_the_population_rho(n: int) -> None:
    """Coverage of the 95% interval of Spearman's rho, simulated: bivariate normal draws of n
    encoders with Pearson rho = 2 sin(pi rho_s / 6), so that the population Spearman rho is
    rho_s = (6 / pi) asin(rho / 2); the sample rho is scipy's (Pearson on scipy's ranks, checked
    against scipy.stats.spearmanr). With the constant variance 1.06/(n-3) and the normal
    quantile coverage fell to 0.89 at rho_s = 0.95 over 13 encoders."""
    from scipy.stats import pearsonr, rankdata, spearmanr

    rng = np.random.default_rng(2000 + n)
    for rho_s in (0.0, 0.5, 0.8, 0.9, 0.95):
        rho = 2 * math.sin(math.pi * rho_s / 6)
        x = rng.standard_normal((COVERAGE_DRAWS, n))
        y = rho * x + math.sqrt(1 - rho ** 2) * rng.standard_normal((COVERAGE_DRAWS, n))
        sample = pearsonr(rankdata(x, axis=1), rankdata(y, axis=1), axis=1).statistic
        for i in range(20):
            assert sample[i] == pytest.approx(spearmanr(x[i], y[i]).statistic, abs=1e-12)
        covered = [low <= rho_s <= high
                   for low, high in (fisher_interval(float(r), n) for r in sample)]
        coverage = float(np.mean(covered))
        assert coverage >= 0.94, f"coverage {coverage:.3f} at rho_s {rho_s}, n {n}"


def test_fisher_interval_holds_rho_below_one_even_above_the_rank_ceiling():
    """Kendall with one tie, tau 0.989 over 10: above 1 - 4/(n(n-1)) = 0.956, still inside."""
    from scipy.stats import kendalltau

    tau = kendalltau(range(10), [0, 1, 2, 3, 4, 5, 6, 7, 8, 8])[0]
    low, high = fisher_interval(tau, 10, "kendall")
    assert low < tau < high
    low, high = fisher_interval(0.999, 10, "pearson")
    assert low < 0.999 < high


def test_fisher_interval_is_never_a_point():
    low, high = fisher_interval(1.0, 7, "spearman")
    assert high == 1.0 and low < 0.9
    next_rho = 1 - 12 / (7 ** 3 - 7)
    half = t_dist.ppf(0.975, 5) * math.sqrt((1 + next_rho ** 2 / 2) / 4)
    assert low == pytest.approx(math.tanh(math.atanh(next_rho) - half))
    assert fisher_interval(-1.0, 7)[0] == -1.0
    assert fisher_interval(0.9, 3) == (-1.0, 1.0)
