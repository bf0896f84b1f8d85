"""Tests of harness.stats.intervals: exact proportion intervals with the test sentence as the
unit over seeds, the cluster bootstrap, the seed component, seed spreads and the per-score
summary the pipeline records (`metric_score`).

Expected values come from scipy (binomtest's exact interval, Beta and t quantiles), from the
closed form of the Clopper-Pearson bounds at k = 0 and k = n, from the same random draws made
independently, or from simulations with a fixed seed.
"""

from __future__ import annotations

import math
import statistics as pystats

import numpy as np
import pytest
from scipy.stats import beta, binomtest, t

from harness.stats import (
    bootstrap_ci,
    cluster_bootstrap,
    metric_score,
    mover_difference,
    proportion_interval,
    rate_interval,
    seed_spread,
    sentence_table,
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


def test_cluster_bootstrap_is_the_same_draws_made_independently():
    """Each resample draws sentences, each bringing both seeds; the score is the mean of the
    seeds' scores on that resample."""
    a, b = ones(30, 200), ones(90, 200)
    interval = cluster_bootstrap(sentence_table(MeanMetric(), [a, b]), resamples=400, seed=11)
    rng = np.random.default_rng(11)
    counts = rng.multinomial(200, np.full(200, 1 / 200), size=400)
    scores = (100 * counts @ a[:, 0] / 200 + 100 * counts @ b[:, 0] / 200) / 2
    assert interval.bounds == pytest.approx(tuple(np.percentile(scores, [2.5, 97.5])))
    assert interval.undefined == 0


def test_one_seed_is_the_plain_bootstrap():
    stats = ones(40, 150)
    assert cluster_bootstrap(sentence_table(MeanMetric(), [stats]), seed=5) == bootstrap_ci(
        MeanMetric(), stats, seed=5)


def test_seeds_must_share_the_test_sentences():
    with pytest.raises(ValueError):
        sentence_table(MeanMetric(), [ones(1, 10), ones(1, 11)])
    with pytest.raises(ValueError):
        sentence_table(MeanMetric(), [])


# --- the sentence as the unit -------------------------------------------------------------------

def test_three_seeds_with_ten_of_ten_on_the_same_sentences_have_support_ten():
    """Id/PERM of 10 of 10 permutations on the same 10 sentences under 3 seeds: 10 sentences,
    not 30 trials: the interval of 10 trials, [69.2, 100]."""
    stats = np.zeros((40, 2))
    stats[:10] = 1.0
    score = metric_score(IdentityPerPermutationMetric(), [stats, stats.copy(), stats.copy()],
                         seed=1)
    exact = binomtest(10, 10).proportion_ci(confidence_level=0.95, method="exact")
    assert score.support == 10
    assert score.value == 100.0
    assert score.ci95 == pytest.approx((100 * exact.low, 100.0))
    assert score.ci95[0] == pytest.approx(69.15, abs=0.01)
    assert score.interval.startswith("clopper-pearson")


def test_id_over_seeds_is_the_mean_of_sentence_fractions_with_sentences_as_support():
    first, second = np.zeros((100, 1)), np.zeros((100, 1))
    first[:6], second[3:9] = 1.0, 1.0       # sentences 3-5 regenerated by both seeds
    score = metric_score(IdentityMetric(), [first, second], seed=1)
    # fractions: 0.5 on 0-2, 1 on 3-5, 0.5 on 6-8: sum 6 over 100 sentences
    assert score.value == pytest.approx(6.0)
    assert score.support == 100
    assert score.interval == "korn-graubard"
    assert score.ci95 == pytest.approx((100 * beta.ppf(0.025, 6, 95), 100 * beta.ppf(0.975, 7, 94)))
    assert score.seed_variance is False


def test_id_perm_units_are_sentences_where_some_seed_found_a_permutation():
    first, second = np.zeros((100, 2)), np.zeros((100, 2))
    first[:6, 1], first[:3, 0] = 1.0, 1.0    # 3 of 6 permutations exact
    second[:9, 1], second[:9, 0] = 1.0, 1.0  # 9 of 9
    assert metric_score(IdentityPerPermutationMetric(), [first], seed=1).support == 6
    score = metric_score(IdentityPerPermutationMetric(), [first, second], seed=1)
    assert score.support == 9  # sentences 0-8, not 6 + 9 permutations
    # fractions: 2/2 on 0-2, 1/2 on 3-5, 1/1 on 6-8: (3 + 1.5 + 3) / 9
    assert score.value == pytest.approx(100 * 7.5 / 9)


@pytest.mark.parametrize("disagree", [False, True])
def test_a_rare_rate_over_seeds_covers_the_truth(disagree):
    """n = 500 sentences, p = 0.004, 3 seeds, 2,000 replicates with a fixed seed. With seeds
    that agree sentence by sentence the interval is exact on 500 sentences (pooling the seeds
    as 1,500 trials covered 86%); with seeds that disagree (each succeeds on a sentence with
    probability 0.004 on its own) it is Korn & Graubard's, conservative."""
    rng = np.random.default_rng(2024)
    n, p, seeds, replicates = 500, 0.004, 3, 2000
    covered = 0
    for _ in range(replicates):
        if disagree:
            hits = (rng.random((seeds, n)) < p).astype(float)
        else:
            hits = np.repeat((rng.random(n) < p).astype(float)[None], seeds, axis=0)
        rate = rate_interval(sentence_table(IdentityMetric(), list(hits[:, :, None])))
        covered += rate.low <= 100 * p <= rate.high
    assert covered / replicates >= 0.94


def test_seed_variance_needs_three_seeds_and_then_covers_the_mean_over_seeds():
    """Seed-to-seed spread 4 times the sentence standard error: with 2 seeds the interval says
    it leaves seed variance out; with 3 it adds a t component and covers the mean over the
    distribution of seeds in at least 93% of 400 simulated runs (2 seeds: the old two-level
    bootstrap covered 75%)."""
    rng = np.random.default_rng(7)
    n, sd = 200, 10.0
    spread = 4 * sd / math.sqrt(n)
    covered, replicates = 0, 400
    for _ in range(replicates):
        base = rng.normal(50.0, sd, n)
        offsets = rng.normal(0.0, spread, 3)
        seeds = [(base + offset)[:, None] / 100.0 for offset in offsets]
        score = metric_score(MeanMetric(), seeds, seed=1, resamples=200)
        covered += score.ci95[0] <= 50.0 <= score.ci95[1]
    assert covered / replicates >= 0.93
    assert score.seed_variance is True and score.interval == "cluster-bootstrap+seeds-t"
    two = metric_score(MeanMetric(), seeds[:2], seed=1, resamples=200)
    assert two.seed_variance is False and two.interval == "cluster-bootstrap"
    assert two.seeds is not None and two.seeds.std is not None


def test_the_seed_component_is_the_t_interval_combined_with_the_sentence_interval():
    seeds = [np.full((50, 1), v / 100.0) for v in (40.0, 44.0, 48.0)]  # no sentence variance
    score = metric_score(MeanMetric(), seeds, seed=1, resamples=100)
    half = t.ppf(0.975, 2) * pystats.stdev([40.0, 44.0, 48.0]) / math.sqrt(3)
    assert score.value == pytest.approx(44.0)
    assert score.ci95 == pytest.approx((44.0 - half, 44.0 + half))


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


def test_a_rate_over_seeds_with_few_units_is_never_zero_width():
    first = np.zeros((50, 2))
    first[0] = 1.0
    score = metric_score(IdentityPerPermutationMetric(), [first, first.copy()], seed=1)
    exact = binomtest(1, 1).proportion_ci(method="exact")
    assert score.value == 100.0 and score.support == 1
    assert score.ci95 == pytest.approx((100 * exact.low, 100.0))
    assert score.ci95[0] < 3.0


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


def test_mover_difference_combines_two_exact_intervals():
    """MOVER (Zou & Donner 2008) with Clopper-Pearson limits: 0 of 500 against 0 of 500."""
    zero = proportion_interval(0, 500)
    low, high = mover_difference(zero, zero)
    assert (low, high) == pytest.approx((-zero.high, zero.high))
    assert high == pytest.approx(1 - 0.025 ** (1 / 500))
