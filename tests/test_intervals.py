"""Tests of harness.stats.intervals: exact proportion intervals, the bootstrap over sentences and
seeds, seed spreads and the per-score summary the pipeline records (`metric_score`).

Expected values come from scipy (binomtest's exact interval), from the closed form of the
Clopper-Pearson bounds at k = 0 and k = n, or from the same random draws made independently.
"""

from __future__ import annotations

import math
import statistics as pystats

import numpy as np
import pytest
from scipy.stats import binomtest

from harness.stats import (
    bootstrap_ci,
    bootstrap_seeds_ci,
    metric_score,
    proportion_interval,
    seed_spread,
)
from harness_plugins.metrics.bleu import BleuMetric
from harness_plugins.metrics.overlap import IdentityMetric, IdentityPerPermutationMetric


class MeanMetric:
    """A metric that is no proportion: 100 x the mean of one per-sentence value."""

    def sentence_statistics(self, references, hypotheses):  # pragma: no cover - not called
        raise NotImplementedError

    def corpus_score(self, totals, count):
        return 100.0 * np.asarray(totals, dtype=np.float64)[..., 0] / count


def ones(k: int, n: int) -> np.ndarray:
    column = np.zeros((n, 1))
    column[:k] = 1.0
    return column


# --- proportion_interval ------------------------------------------------------------------------

def test_five_of_five_is_the_exact_clopper_pearson_interval():
    exact = binomtest(5, 5).proportion_ci(confidence_level=0.95, method="exact")
    value, low, high = proportion_interval(5, 5)
    assert value == 1.0
    assert (low, high) == (pytest.approx(exact.low, abs=1e-12), pytest.approx(exact.high))
    # closed form at k = n: low = (alpha / 2) ** (1 / n) = 0.4782
    assert low == pytest.approx(0.025 ** (1 / 5), abs=1e-12)
    assert high == 1.0
    assert high - low == pytest.approx(1 - 0.025 ** 0.2)


@pytest.mark.parametrize("trials", [1, 2, 3, 5, 8, 13])
def test_small_counts_are_never_zero_width_and_match_scipy(trials):
    for successes in range(trials + 1):
        value, low, high = proportion_interval(successes, trials, level=0.9)
        exact = binomtest(successes, trials).proportion_ci(confidence_level=0.9, method="exact")
        assert value == pytest.approx(successes / trials)
        assert (low, high) == (pytest.approx(exact.low), pytest.approx(exact.high))
        assert high - low > 0.1  # never a point, however lopsided the count
        assert low <= value <= high


def test_zero_successes_has_the_closed_form_upper_bound():
    # k = 0: high = 1 - (alpha / 2) ** (1 / n)
    assert proportion_interval(0, 10).high == pytest.approx(1 - 0.025 ** 0.1)
    assert proportion_interval(0, 10).low == 0.0


def test_zero_trials_is_no_information():
    value, low, high = proportion_interval(0, 0)
    assert math.isnan(value)
    assert (low, high) == (0.0, 1.0)


def test_float_counts_from_summed_indicators_are_accepted():
    assert proportion_interval(np.float64(3.0), np.float64(7.0)) == proportion_interval(3, 7)


@pytest.mark.parametrize("successes, trials, level", [(4, 3, 0.95), (-1, 3, 0.95),
                                                      (1.5, 3, 0.95), (1, 3, 1.0)])
def test_proportion_interval_refuses_impossible_counts(successes, trials, level):
    with pytest.raises(ValueError):
        proportion_interval(successes, trials, level)


# --- seeds --------------------------------------------------------------------------------------

def test_seed_spread_is_mean_and_sample_deviation():
    spread = seed_spread([20.0, 30.0, 43.0])
    assert (spread.n, spread.values) == (3, [20.0, 30.0, 43.0])
    assert spread.mean == pytest.approx(31.0)
    assert spread.std == pytest.approx(pystats.stdev([20.0, 30.0, 43.0]))  # ddof = 1


def test_seed_spread_of_one_seed_has_no_deviation_and_undefined_seeds_are_kept_as_none():
    assert seed_spread([12.5]).std is None
    spread = seed_spread([10.0, float("nan"), None, 14.0])
    assert spread.values == [10.0, None, None, 14.0]
    assert (spread.n, spread.mean) == (4, 12.0)
    assert spread.std == pytest.approx(pystats.stdev([10.0, 14.0]))
    assert seed_spread([None]).mean is None


def test_two_level_bootstrap_is_the_same_draws_made_independently():
    a, b = ones(30, 200), ones(90, 200)
    interval = bootstrap_seeds_ci(MeanMetric(), [a, b], resamples=400, seed=11)
    rng = np.random.default_rng(11)
    counts = rng.multinomial(200, np.full(200, 1 / 200), size=400)  # one chunk: counts first
    choice = rng.integers(2, size=400)                               # then a seed per resample
    scores = np.where(choice == 0, counts @ a[:, 0], counts @ b[:, 0]) / 2.0
    assert interval.bounds == pytest.approx(tuple(np.percentile(scores, [2.5, 97.5])))
    assert interval.undefined == 0


def test_seed_variance_widens_the_interval():
    low_seed, high_seed = ones(100, 500), ones(300, 500)  # 20% and 60%
    one = bootstrap_ci(MeanMetric(), low_seed, seed=2)
    both = bootstrap_seeds_ci(MeanMetric(), [low_seed, high_seed], seed=2)
    assert one.high - one.low < 10.0
    assert both.high - both.low > 3 * (one.high - one.low)
    assert both.low < 20.0 and both.high > 60.0 - 5.0


def test_one_seed_is_the_plain_bootstrap():
    stats = ones(40, 150)
    assert bootstrap_seeds_ci(MeanMetric(), [stats], seed=5) == bootstrap_ci(MeanMetric(), stats,
                                                                            seed=5)


def test_seeds_must_share_the_test_sentences():
    with pytest.raises(ValueError):
        bootstrap_seeds_ci(MeanMetric(), [ones(1, 10), ones(1, 11)])
    with pytest.raises(ValueError):
        bootstrap_seeds_ci(MeanMetric(), [])


# --- metric_score -------------------------------------------------------------------------------

def test_a_proportion_with_one_seed_gets_clopper_pearson_on_its_trials():
    stats = IdentityMetric().sentence_statistics(["a b", "c d", "e", "f g"], ["a b", "d c", "e", ""])
    score = metric_score(IdentityMetric(), [stats], seed=1)
    exact = binomtest(2, 4).proportion_ci(method="exact")
    assert (score.value, score.interval, score.support) == (50.0, "clopper-pearson", 4)
    assert score.ci95 == pytest.approx((100 * exact.low, 100 * exact.high))
    assert score.seeds is None and score.undefined_resamples is None


def test_another_metric_gets_the_percentile_bootstrap_over_its_sentences():
    stats = ones(40, 150)
    score = metric_score(MeanMetric(), [stats], seed=5, resamples=300)
    expected = bootstrap_ci(MeanMetric(), stats, seed=5, resamples=300)
    assert (score.value, score.interval, score.support) == (pytest.approx(40 / 1.5), "bootstrap",
                                                            150)
    assert score.ci95 == expected.bounds
    assert score.undefined_resamples == 0


def test_several_seeds_get_the_two_level_bootstrap_and_their_spread():
    seeds = [ones(100, 500), ones(300, 500)]
    score = metric_score(IdentityMetric(), seeds, seed=2, resamples=500)
    expected = bootstrap_seeds_ci(IdentityMetric(), seeds, seed=2, resamples=500)
    # Id is a rate: the hull of the seed bootstrap and the exact interval of the pooled counts
    # (400 of 1000); here the seed variance dominates, so the hull is the bootstrap's
    pooled = binomtest(400, 1000).proportion_ci(method="exact")
    assert pooled.low * 100 > expected.low and pooled.high * 100 < expected.high
    assert score.interval == "clopper-pearson+bootstrap-seeds"
    assert score.value == pytest.approx(40.0)  # mean of 20 and 60
    assert score.ci95 == pytest.approx(expected.bounds)
    assert score.seeds is not None and score.seeds.values == [20.0, 60.0]
    assert score.seeds.std == pytest.approx(pystats.stdev([20.0, 60.0]))
    assert score.support == 1000  # trials pooled over the seeds


def test_a_rate_over_seeds_with_few_trials_is_never_zero_width():
    """1 of 1 and 1 of 1 permutations exact: every bootstrap resample scores 100, but two
    trials cannot establish that; the exact interval of the pooled 2 of 2 widens it."""
    first = np.zeros((50, 2))
    first[0] = 1.0
    score = metric_score(IdentityPerPermutationMetric(), [first, first.copy()], seed=1,
                         resamples=200)
    exact = binomtest(2, 2).proportion_ci(method="exact")
    assert score.value == 100.0 and score.support == 2
    assert score.ci95 == pytest.approx((100 * exact.low, 100.0))
    assert score.ci95[0] < 20.0


def test_id_perm_support_is_its_permutations_pooled_over_seeds():
    first, second = np.zeros((100, 2)), np.zeros((100, 2))
    first[:6, 1], first[:3, 0] = 1.0, 1.0    # 3 of 6 permutations exact
    second[:9, 1], second[:9, 0] = 1.0, 1.0  # 9 of 9
    assert metric_score(IdentityPerPermutationMetric(), [first], seed=1).support == 6
    score = metric_score(IdentityPerPermutationMetric(), [first, second], seed=1, resamples=300)
    assert score.support == 15  # 6 + 9 permutations over the two seeds
    assert score.value == pytest.approx(75.0)
    interval = bootstrap_seeds_ci(IdentityPerPermutationMetric(), [first, second], seed=1,
                                  resamples=300)
    assert score.undefined_resamples == interval.undefined


def test_metric_score_records_direction_and_signature():
    bleu = BleuMetric()
    refs = ["the cat sat on the mat", "a dog ran in the park today", "hello there world"] * 4
    hyps = ["the cat sat on a mat", "a dog ran in a park", "hello world"] * 4
    stats = bleu.sentence_statistics(refs, hyps)
    score = metric_score(bleu, [stats], seed=1, resamples=200, signature="sig")
    assert (score.interval, score.support, score.signature) == ("bootstrap", 12, "sig")
    assert score.higher_is_better is True
    assert metric_score(bleu, [stats], seed=1, resamples=200,
                        higher_is_better=False).higher_is_better is False
    assert score.ci95[0] <= score.value <= score.ci95[1]
