"""Tests of harness.stats.paired: the paired bootstrap over encoders (rank intervals, pairwise
differences) and the intervals of correlations across encoders.

Expected values are reproduced independently: the same multinomial draws from the same seed,
scipy's rankdata, spearmanr, pearsonr and kendalltau on the resampled scores.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from harness.stats import (
    correlate,
    correlation_intervals,
    paired_ranking,
    paired_scores,
    rank,
    resample_correlations,
)
from harness.stats.ranks import average_rank_rows, rank_rows
from harness_plugins.metrics.overlap import IdentityMetric, IdentityPerPermutationMetric


def ones(indices: range | list[int], n: int = 500) -> np.ndarray:
    column = np.zeros((n, 1))
    column[list(indices)] = 1.0
    return column


def draws(n: int, resamples: int, seed: int) -> np.ndarray:
    """The counts paired_scores draws first from its seed (one chunk for these sizes)."""
    return np.random.default_rng(seed).multinomial(n, np.full(n, 1 / n), size=resamples)


# --- ranks of rows ------------------------------------------------------------------------------

def test_rank_rows_matches_rank_and_puts_undefined_last():
    rows = np.array([[10.0, 30.0, 30.0, 5.0], [1.0, np.nan, 2.0, np.nan]])
    assert rank_rows(rows[:1])[0].tolist() == list(rank(dict(enumerate(rows[0]))).values())
    assert rank_rows(rows[:1])[0].tolist() == [3, 1, 1, 4]
    assert rank_rows(rows[:1], higher_is_better=False)[0].tolist() == [2, 3, 3, 1]
    assert rank_rows(rows[1:])[0].tolist() == [2, 3, 1, 3]


def test_average_rank_rows_is_scipy_rankdata_per_row():
    rows = np.random.default_rng(0).integers(0, 4, size=(30, 7)).astype(float)
    expected = np.array([scipy_stats.rankdata(row) for row in rows])
    assert np.array_equal(average_rank_rows(rows), expected)


# --- paired ranking -----------------------------------------------------------------------------

def test_one_sentence_apart_is_not_significant_and_ranks_overlap():
    # a regenerates sentences 0-199, b sentences 0-198: b is never better, often tied.
    statistics = {"a": [ones(range(200))], "b": [ones(range(199))]}
    ranking = paired_ranking(IdentityMetric(), statistics, higher_is_better=True,
                             resamples=1000, seed=4)
    a, b = ranking.encoders["a"], ranking.encoders["b"]
    assert (a.rank, b.rank) == (1, 2)
    assert a.rank_ci95 == (1, 1) and b.rank_ci95 == (1, 2)  # overlapping
    (difference,) = ranking.differences
    assert (difference.a, difference.b, difference.difference) == ("a", "b", pytest.approx(0.2))
    assert difference.ci95[0] == 0.0 and not difference.significant
    # p = 2 * min(P(d <= 0), P(d >= 0)) over the same draws, made independently
    d = draws(500, 1000, 4)[:, 199] * 100.0 / 500
    assert difference.p == pytest.approx(min(1.0, 2 * min(np.mean(d <= 0), np.mean(d >= 0))))
    assert difference.p > 0.5
    assert (ranking.resamples, ranking.sentences, ranking.seeds) == (1000, 500, False)
    assert ranking.undefined_resamples == 0


def test_one_sentence_apart_on_different_sentences_is_not_significant():
    statistics = {"a": [ones(range(0, 200))], "b": [ones(range(100, 299))]}
    ranking = paired_ranking(IdentityMetric(), statistics, higher_is_better=True,
                             resamples=1000, seed=4)
    (difference,) = ranking.differences
    assert difference.ci95[0] < 0 < difference.ci95[1] and not difference.significant
    assert ranking.encoders["a"].rank_ci95 == ranking.encoders["b"].rank_ci95 == (1, 2)


def test_rates_that_agree_on_every_sentence_differ_by_an_interval_with_width():
    # Both regenerate nothing: every resampled difference is 0, yet 0 of 500 only bounds each
    # rate by its exact interval, so the difference gets Newcombe's interval built from them.
    statistics = {"a": [ones([])], "b": [ones([])]}
    ranking = paired_ranking(IdentityMetric(), statistics, higher_is_better=True,
                             resamples=1000, seed=4)
    (difference,) = ranking.differences
    upper = 100.0 * scipy_stats.binomtest(0, 500).proportion_ci(method="exact").high
    assert difference.difference == 0.0 and not difference.significant
    assert difference.ci95 == pytest.approx((-upper, upper))  # sqrt(0 + u^2) either side
    # The same where both regenerate the same 3 sentences: p = 0.6% each.
    statistics = {"a": [ones(range(3))], "b": [ones(range(3))]}
    (same,) = paired_ranking(IdentityMetric(), statistics, higher_is_better=True,
                             resamples=1000, seed=4).differences
    ci = scipy_stats.binomtest(3, 500).proportion_ci(method="exact")
    below, above = 100.0 * (0.006 - ci.low), 100.0 * (ci.high - 0.006)
    half = (np.hypot(below, above), np.hypot(above, below))
    assert same.ci95 == pytest.approx((-half[0], half[1]))


def test_a_hundred_sentences_apart_is_significant_and_ranks_separate():
    statistics = {"a": [ones(range(100, 300))], "b": [ones(range(100))]}
    ranking = paired_ranking(IdentityMetric(), statistics, higher_is_better=True,
                             resamples=1000, seed=4)
    assert ranking.encoders["a"].rank_ci95 == (1, 1)
    assert ranking.encoders["b"].rank_ci95 == (2, 2)
    (difference,) = ranking.differences
    assert difference.difference == pytest.approx(20.0)
    assert difference.ci95[0] > 0 and difference.significant and difference.p == 0.0
    d = (draws(500, 1000, 4) @ (ones(range(100, 300)) - ones(range(100))))[:, 0] / 5.0
    assert difference.ci95 == pytest.approx(tuple(np.percentile(d, [2.5, 97.5])))


def test_lower_is_better_reverses_the_ranks_and_pairs_follow_the_given_order():
    statistics = {"x": [ones(range(50))], "y": [ones(range(150))], "z": [ones(range(250))]}
    ranking = paired_ranking(IdentityMetric(), statistics, higher_is_better=False,
                             resamples=200, seed=1)
    assert {e: r.rank for e, r in ranking.encoders.items()} == {"x": 1, "y": 2, "z": 3}
    assert [(d.a, d.b) for d in ranking.differences] == [("x", "y"), ("x", "z"), ("y", "z")]
    assert all(d.difference < 0 and d.significant for d in ranking.differences)


def test_seed_variance_widens_rank_intervals():
    # b's two seeds straddle a: with seeds drawn per resample, both can come first.
    a = ones(range(200))
    single = paired_ranking(IdentityMetric(), {"a": [a], "b": [ones(range(150))]},
                            higher_is_better=True, resamples=500, seed=3)
    seeded = paired_ranking(IdentityMetric(), {"a": [a], "b": [ones(range(150)),
                                                                ones(range(250))]},
                            higher_is_better=True, resamples=500, seed=3)
    assert single.encoders["b"].rank_ci95 == (2, 2)
    assert seeded.encoders["b"].rank_ci95 == (1, 2) and seeded.encoders["a"].rank_ci95 == (1, 2)
    assert seeded.seeds and not single.seeds
    assert seeded.encoders["b"].value == pytest.approx(40.0)  # mean of the seeds' 30 and 50
    assert not seeded.differences[0].significant


def test_a_rank_interval_holds_the_observed_rank_when_resampled_ties_do_not():
    # c never regenerates anything; b's seeds regenerate 2 and 0 sentences: by the means b
    # (0.2) ranks 2 and c 3, but in the resamples drawing b's second seed they tie at 0 and
    # share rank 2, and c's ranks would run 2-2 without the observed rank 3.
    statistics = {"a": [ones(range(100))], "b": [ones(range(2)), ones([])], "c": [ones([])]}
    ranking = paired_ranking(IdentityMetric(), statistics, higher_is_better=True,
                             resamples=500, seed=5)
    c = ranking.encoders["c"]
    assert c.rank == 3
    assert c.rank_ci95[0] <= c.rank <= c.rank_ci95[1]
    assert c.rank_ci95 == (2, 3)


def test_undefined_scores_are_counted_and_rank_last():
    n = 300
    rare = np.zeros((n, 2))
    rare[:2] = 1.0                                   # Id/PERM 100 from 2 permutations
    common = np.zeros((n, 2))
    common[:100, 1], common[:50, 0] = 1.0, 1.0       # Id/PERM 50 from 100 permutations
    ranking = paired_ranking(IdentityPerPermutationMetric(), {"rare": [rare], "common": [common]},
                             higher_is_better=True, resamples=1000, seed=9)
    missing = draws(n, 1000, 9)[:, :2].sum(axis=1) == 0  # resamples without rare's permutations
    assert ranking.undefined_resamples == int(missing.sum()) > 25
    assert ranking.encoders["rare"].rank_ci95 == (1, 2)  # last where undefined
    assert ranking.encoders["common"].rank_ci95 == (1, 2)
    assert ranking.encoders["rare"].rank == 1


def test_an_encoder_undefined_on_the_test_set_has_no_point_rank():
    none = np.zeros((20, 2))
    some = np.zeros((20, 2))
    some[:5] = 1.0
    ranking = paired_ranking(IdentityPerPermutationMetric(), {"none": [none], "some": [some]},
                             higher_is_better=True, resamples=100, seed=1)
    assert ranking.encoders["none"].value is None and ranking.encoders["none"].rank is None
    assert ranking.encoders["none"].rank_ci95 == (2, 2)
    assert ranking.differences[0].difference is None and ranking.differences[0].p is None
    assert ranking.undefined_resamples == 100


def test_encoders_must_share_the_test_sentences():
    with pytest.raises(ValueError):
        paired_ranking(IdentityMetric(), {"a": [ones([1], 10)], "b": [ones([1], 12)]},
                       higher_is_better=True, resamples=10, seed=0)


# --- correlation intervals ----------------------------------------------------------------------

ENCODERS = ["avg", "gem", "hier", "laser", "sbert", "qt"]
DOWNSTREAM = {"avg": {"MR": 72.1, "CR": 80.0}, "gem": {"MR": 70.0, "CR": 79.0},
              "hier": {"MR": 74.3, "CR": 78.5}, "laser": {"MR": 80.2, "CR": 83.0},
              "sbert": {"MR": 85.5, "CR": 88.0}, "qt": {"MR": 81.0, "CR": 82.0}}


def test_constant_sentences_collapse_the_interval_to_the_observed_rho():
    # Every sentence of an encoder has the same statistics: every resample sums to the same
    # totals, so rho never moves from its observed value.
    values = dict(zip(ENCODERS, [0.15, 0.01, 0.15, 0.40, 0.03, 0.22]))
    statistics = {e: [np.full((40, 1), v)] for e, v in values.items()}
    result = correlation_intervals(IdentityMetric(), statistics, DOWNSTREAM, method="spearman",
                                   resamples=200, seed=2)
    rhos = []
    for task in ("MR", "CR"):
        observed = correlate({e: 100 * v for e, v in values.items()},
                             {e: DOWNSTREAM[e][task] for e in ENCODERS}).rho
        assert result.tasks[task] == (pytest.approx(observed), pytest.approx(observed))
        assert result.undefined[task] == 0
        rhos.append(observed)
    assert result.mean == (pytest.approx(np.mean(rhos)), pytest.approx(np.mean(rhos)))
    assert result.encoders["MR"] == tuple(ENCODERS)


def random_statistics(seed: int, n: int = 60) -> dict[str, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return {e: [(rng.random((n, 1)) < 0.2 + 0.1 * i).astype(float)]
            for i, e in enumerate(ENCODERS)}


@pytest.mark.parametrize("method, reference", [("spearman", scipy_stats.spearmanr),
                                               ("pearson", scipy_stats.pearsonr),
                                               ("kendall", scipy_stats.kendalltau)])
def test_resampled_rho_equals_scipy_on_a_resample_reproduced_independently(method, reference):
    statistics = random_statistics(5)
    scores = paired_scores(IdentityMetric(), statistics, resamples=150, seed=8)
    counts = draws(60, 150, 8)
    first = [float(counts[0] @ statistics[e][0][:, 0]) * 100 / 60 for e in ENCODERS]
    assert scores.resampled[0] == pytest.approx(first)
    y = np.array([DOWNSTREAM[e]["MR"] for e in ENCODERS])
    rhos = resample_correlations(scores.resampled, y, method)
    assert rhos[0] == pytest.approx(reference(first, y)[0])
    # and the interval is the percentile interval of scipy's rho on every resample
    expected = [reference(row, y)[0] for row in scores.resampled]
    result = correlation_intervals(IdentityMetric(), statistics, DOWNSTREAM, method=method,
                                   resamples=150, seed=8)
    assert rhos == pytest.approx(expected)
    assert result.tasks["MR"] == pytest.approx(tuple(np.percentile(expected, [2.5, 97.5])))


def test_resample_correlations_delete_pairwise_and_leave_undefined_rows_nan():
    y = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    x = np.array([[5.0, np.nan, 1.0, 2.0, 4.0],     # 4 defined: scipy on those
                  [1.0, np.nan, np.nan, np.nan, 2.0],  # 2 defined: undefined
                  [3.0, 3.0, 3.0, 3.0, 3.0]])       # constant: undefined
    rhos = resample_correlations(x, y, "spearman")
    keep = [0, 2, 3, 4]
    assert rhos[0] == pytest.approx(scipy_stats.spearmanr(x[0, keep], y[keep])[0])
    assert np.isnan(rhos[1]) and np.isnan(rhos[2])


def test_tasks_missing_for_some_encoders_use_the_others_and_undefined_is_counted():
    statistics = random_statistics(6)
    downstream = {e: dict(scores) for e, scores in DOWNSTREAM.items()}
    downstream["gem"]["TREC"] = 90.0
    downstream["qt"]["TREC"] = 80.0
    result = correlation_intervals(IdentityMetric(), statistics, downstream, method="kendall",
                                   resamples=100, seed=1)
    assert list(result.tasks) == ["MR", "CR", "TREC"]
    assert result.encoders["TREC"] == ("gem", "qt")
    assert result.tasks["TREC"] == (None, None) and result.undefined["TREC"] == 100
    assert result.mean_undefined == 0 and result.resamples == 100


def test_correlation_intervals_refuse_unknown_methods():
    with pytest.raises(ValueError):
        correlation_intervals(IdentityMetric(), random_statistics(1), DOWNSTREAM,
                              method="distance", resamples=10, seed=0)
