"""Rank tests that include training variance: with 3 or more decoder seeds per encoder the
pairwise test is Welch's t over test sentences and seeds (`seeds_t_pvalue`)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from harness.analyses.rankings.paired import paired_ranking
from harness.stats.significance import SEEDS_T, seeds_t_pvalue
from harness_plugins.metrics.overlap import IdentityMetric


def test_without_sentence_noise_it_is_welchs_t_test_on_the_seeds() -> None:
    a, b = np.array([5.1, 6.0, 4.4]), np.array([2.0, 3.5, 2.9, 3.1])
    expected = stats.ttest_ind(a, b, equal_var=False).pvalue
    assert seeds_t_pvalue(a.mean() - b.mean(), 0.0, a, b, 1000) == pytest.approx(expected)


def test_sentence_noise_widens_it() -> None:
    a, b = np.array([5.1, 6.0, 4.4]), np.array([2.0, 3.5, 2.9])
    alone = seeds_t_pvalue(a.mean() - b.mean(), 0.0, a, b, 1000)
    assert seeds_t_pvalue(a.mean() - b.mean(), 1.0, a, b, 1000) > alone
    # A sentence component alone is the z test of the difference (df n - 1 = 999 ~ normal).
    same = np.array([3.0, 3.0, 3.0])
    assert seeds_t_pvalue(2.0, 1.0, same, same, 1000) == pytest.approx(
        2 * stats.t.sf(2.0, 999))
    assert seeds_t_pvalue(0.0, 0.0, same, same, 1000) == 1.0
    assert math.isnan(seeds_t_pvalue(1.0, 1.0, same[:1], same, 1000))


def _seeded_rates(rng: np.random.Generator, rate: float, seeds: int, n: int,
                  training_sd: float) -> list[np.ndarray]:
    """Id statistics of `seeds` decoders whose rates scatter around `rate` by training."""
    return [(rng.random(n) < np.clip(rate + rng.normal(0, training_sd), 0, 1)).astype(float)[:, None]
            for _ in range(seeds)]


def test_type_one_error_holds_with_training_variance() -> None:
    """Two encoders with the same expected Id whose decoders vary by training (sd 4 points
    between seeds): at alpha .05 it rejects within the binomial region of 5% (400
    simulations)."""
    rng = np.random.default_rng(7)
    metric = IdentityMetric()
    rejections = 0
    trials = 400
    for _ in range(trials):
        statistics = {"a": _seeded_rates(rng, 0.3, 3, 400, 0.04),
                      "b": _seeded_rates(rng, 0.3, 3, 400, 0.04)}
        ranking = paired_ranking(metric, statistics, higher_is_better=True, resamples=200,
                                 seed=int(rng.integers(1 << 30)))
        (difference,) = ranking.differences
        assert difference.test == SEEDS_T and ranking.seed_variance
        rejections += difference.p <= 0.05
    # Binomial 99% region around 0.05 for 400 trials: at most 32 rejections (8%).
    assert rejections <= stats.binom.ppf(0.995, trials, 0.05)


def test_two_seeds_keep_the_test_conditional_on_the_decoders() -> None:
    rng = np.random.default_rng(1)
    statistics = {"a": _seeded_rates(rng, 0.3, 2, 200, 0.0),
                  "b": _seeded_rates(rng, 0.2, 2, 200, 0.0)}
    ranking = paired_ranking(IdentityMetric(), statistics, higher_is_better=True,
                             resamples=200, seed=1)
    assert ranking.seeds and not ranking.seed_variance
    assert ranking.differences[0].test == "sign-flip-exact"


def test_an_interval_widened_by_the_seeds_stays_in_the_metrics_range() -> None:
    """BLEU over three seeds that disagree wildly (100, then near 0): the seed component
    (Student t) would take the interval below 0 and above 100; it is clipped to BLEU's
    [0, 100], the value kept."""
    from harness.stats.intervals import metric_score
    from harness_plugins.metrics.bleu import BleuMetric

    bleu = BleuMetric()
    references = ["the cat sat on the mat today", "a dog barks at night"] * 10
    hypotheses = [["the cat sat on the mat today", "a dog barks at night"] * 10,
                  ["one two", "three"] * 10, ["four five six", "seven"] * 10]
    stats = [np.asarray(bleu.sentence_statistics(references, h)) for h in hypotheses]
    score = metric_score(bleu, stats, seed=1, resamples=200)
    assert score.seed_variance and tuple(score.ci95) == (0.0, 100.0)
    assert 0.0 < score.value < 100.0
    unclipped = metric_score(type("Unbounded", (), {
        "sentence_statistics": bleu.sentence_statistics, "corpus_score": bleu.corpus_score})(),
        stats, seed=1, resamples=200)
    assert unclipped.ci95[0] < 0 and unclipped.ci95[1] > 100  # what the clip took away
    assert unclipped.value == score.value
