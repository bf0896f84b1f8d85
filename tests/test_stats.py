"""Tests of harness.stats: bootstrap intervals, correlations across encoders, ranks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from harness.stats import (
    Correlation,
    bootstrap_ci,
    corpus_value,
    correlate,
    correlation_matrix,
    downstream_rank,
    rank,
    summarise,
)
from harness_plugins.metrics.bleu import BleuMetric
from harness_plugins.metrics.overlap import IdentityMetric, IdentityPerPermutationMetric


def identity_statistics(ones: int, n: int) -> np.ndarray:
    column = np.zeros((n, 1))
    column[:ones] = 1.0
    return column


# --- bootstrap ----------------------------------------------------------------------------------

def test_corpus_value_is_the_metric_on_summed_statistics():
    assert corpus_value(IdentityMetric(), identity_statistics(3, 10)) == pytest.approx(30.0)


def test_bootstrap_contains_point_estimate_and_is_deterministic():
    stats = identity_statistics(30, 100)
    low, high = bootstrap_ci(IdentityMetric(), stats, resamples=500, seed=4)
    assert low < 30.0 < high
    assert bootstrap_ci(IdentityMetric(), stats, resamples=500, seed=4) == (low, high)
    assert bootstrap_ci(IdentityMetric(), stats, resamples=500, seed=5) != (low, high)


def test_bootstrap_narrows_with_more_sentences():
    small = bootstrap_ci(IdentityMetric(), identity_statistics(20, 100), resamples=500)
    large = bootstrap_ci(IdentityMetric(), identity_statistics(200, 1000), resamples=500)
    assert large[1] - large[0] < small[1] - small[0]


def test_bootstrap_of_id_matches_the_normal_approximation():
    n, p = 2000, 0.25
    low, high = bootstrap_ci(IdentityMetric(), identity_statistics(int(n * p), n), resamples=2000)
    half_width = 100 * 1.959964 * math.sqrt(p * (1 - p) / n)
    assert low == pytest.approx(25.0 - half_width, abs=0.3)
    assert high == pytest.approx(25.0 + half_width, abs=0.3)


def test_bootstrap_level_widens_interval():
    stats = identity_statistics(40, 200)
    narrow = bootstrap_ci(IdentityMetric(), stats, level=0.5)
    wide = bootstrap_ci(IdentityMetric(), stats, level=0.99)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]


def test_bootstrap_works_for_ratio_and_bleu_metrics():
    id_perm = np.array([[1, 1], [0, 1], [0, 0], [1, 1]] * 25, dtype=float)
    low, high = bootstrap_ci(IdentityPerPermutationMetric(), id_perm, resamples=300)
    assert low <= corpus_value(IdentityPerPermutationMetric(), id_perm) <= high
    bleu = BleuMetric()
    refs = ["the cat sat on the mat", "a dog ran in the park today", "hello there world"] * 10
    hyps = ["the cat sat on a mat", "a dog ran in a park", "hello world"] * 10
    stats = bleu.sentence_statistics(refs, hyps)
    low, high = bootstrap_ci(bleu, stats, resamples=300)
    assert low <= corpus_value(bleu, stats) <= high


def test_bootstrap_chunks_give_every_resample(monkeypatch):
    # Tiny chunks must still produce a valid interval over all resamples.
    monkeypatch.setattr("harness.stats._BOOTSTRAP_CELLS", 7)
    low, high = bootstrap_ci(IdentityMetric(), identity_statistics(5, 10), resamples=50)
    assert 0.0 <= low <= 50.0 <= high <= 100.0


@pytest.mark.parametrize("kwargs", [{"resamples": 0}, {"level": 1.0}, {"level": 0.0}])
def test_bootstrap_refuses_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        bootstrap_ci(IdentityMetric(), identity_statistics(1, 3), **kwargs)


def test_bootstrap_refuses_empty_statistics():
    with pytest.raises(ValueError):
        bootstrap_ci(IdentityMetric(), np.zeros((0, 1)))


# --- correlation --------------------------------------------------------------------------------

X = {"avg": 15.2, "gem": 1.2, "hier": 15.0, "laser": 40.1, "sbert": 3.3, "qt": 22.0}
Y = {"avg": 72.1, "gem": 70.0, "hier": 74.3, "laser": 80.2, "sbert": 85.5, "qt": 81.0}


@pytest.mark.parametrize("method, reference", [
    ("spearman", scipy_stats.spearmanr),
    ("pearson", scipy_stats.pearsonr),
    ("kendall", scipy_stats.kendalltau),
])
def test_correlate_equals_scipy(method, reference):
    keys = sorted(X)
    expected_rho, expected_p = reference([X[k] for k in keys], [Y[k] for k in keys])
    result = correlate(X, Y, method)
    assert result.n == 6
    assert result.rho == pytest.approx(expected_rho)
    assert result.p == pytest.approx(expected_p)


def test_correlate_uses_pairwise_deletion():
    x = dict(X, extra=99.0, broken=float("nan"))
    y = dict(Y, broken=50.0, only_y=1.0)
    del y["qt"]
    result = correlate(x, y)
    keys = ["avg", "gem", "hier", "laser", "sbert"]
    expected = scipy_stats.spearmanr([X[k] for k in keys], [Y[k] for k in keys])
    assert result.n == 5
    assert result.rho == pytest.approx(expected[0])
    assert result.p == pytest.approx(expected[1])


def test_correlate_is_undefined_for_fewer_than_three_or_constant():
    assert correlate({"a": 1.0, "b": 2.0}, {"a": 3.0, "b": 1.0}) == Correlation(None, None, 2)
    constant = {"a": 1.0, "b": 1.0, "c": 1.0}
    assert correlate(constant, {"a": 3.0, "b": 1.0, "c": 2.0}) == Correlation(None, None, 3)


def test_correlate_refuses_unknown_method():
    with pytest.raises(ValueError):
        correlate(X, Y, "distance")


def test_correlation_matrix_and_summary():
    diagnostics = {"id": {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0},
                   "perm": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    downstream = {"a": {"MR": 1.0, "CR": 1.0, "TREC": 5.0},
                  "b": {"MR": 2.0, "CR": 3.0},
                  "c": {"MR": 3.0, "CR": 2.0},
                  "d": {"MR": 4.0, "CR": 4.0, "TREC": 6.0}}
    matrix = correlation_matrix(diagnostics, downstream)
    assert list(matrix["id"]) == ["MR", "CR", "TREC"]
    assert matrix["id"]["MR"].rho == pytest.approx(1.0)
    assert matrix["id"]["CR"].rho == pytest.approx(0.8)
    assert matrix["perm"]["CR"].rho == pytest.approx(-0.8)
    assert matrix["id"]["TREC"] == Correlation(None, None, 2)
    summary = summarise(matrix)
    assert summary["id"] == {"mean": pytest.approx(0.9), "min": pytest.approx(0.8)}
    assert summary["perm"] == {"mean": pytest.approx(-0.9), "min": pytest.approx(-1.0)}


def test_summary_is_none_without_defined_correlations():
    assert summarise({"id": {"MR": Correlation(None, None, 1)}}) == {
        "id": {"mean": None, "min": None}}


# --- ranks --------------------------------------------------------------------------------------

def test_rank_with_ties_takes_the_best_rank():
    values = {"a": 10.0, "b": 30.0, "c": 30.0, "d": 5.0}
    assert rank(values) == {"b": 1, "c": 1, "a": 3, "d": 4}
    assert rank(values, higher_is_better=False) == {"d": 1, "a": 2, "b": 3, "c": 3}


def test_rank_skips_non_finite_values():
    assert rank({"a": 1.0, "b": float("nan"), "c": 2.0}) == {"c": 1, "a": 2}


def test_downstream_rank_hand_computed():
    # Task ranks: MR a=2 b=1 c=3; CR a=1 b=3 c=2 -> mean ranks a=1.5 b=2.0 c=2.5.
    downstream = {"a": {"MR": 80.0, "CR": 90.0},
                  "b": {"MR": 85.0, "CR": 70.0},
                  "c": {"MR": 60.0, "CR": 75.0}}
    assert downstream_rank(downstream) == {"a": 1, "b": 2, "c": 3}


def test_downstream_rank_averages_over_the_tasks_an_encoder_has():
    # c has MR only (rank 3); a and b: MR 2/1, CR 1/2 -> all means 1.5, except c = 3.
    downstream = {"a": {"MR": 80.0, "CR": 90.0},
                  "b": {"MR": 85.0, "CR": 70.0},
                  "c": {"MR": 60.0}}
    assert downstream_rank(downstream) == {"a": 1, "b": 1, "c": 3}
