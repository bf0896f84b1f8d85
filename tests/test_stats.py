"""Tests of harness.stats: bootstrap intervals, correlations across encoders, ranks.

Exact intervals, seeds and the paired analyses across encoders are in tests/test_intervals.py
and tests/test_paired.py."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats as scipy_stats

from harness.analyses.correlation.correlate import correlations_from_tables
from harness.analyses.downstream.scores import read_reference_table
from harness.stats import (
    BootstrapInterval,
    Correlation,
    bootstrap_ci,
    corpus_value,
    correlate,
    correlation_matrix,
    downstream_rank,
    permutation_pvalue,
    rank,
    summarise,
)
from harness.stats.correlation import _permutation_blocks
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
    interval = bootstrap_ci(IdentityMetric(), stats, resamples=500, seed=4)
    assert isinstance(interval, BootstrapInterval)
    assert interval.low < 30.0 < interval.high
    assert (interval.undefined, interval.resamples) == (0, 500)
    assert bootstrap_ci(IdentityMetric(), stats, resamples=500, seed=4) == interval
    assert bootstrap_ci(IdentityMetric(), stats, resamples=500, seed=5).bounds != interval.bounds


def test_bootstrap_narrows_with_more_sentences():
    small = bootstrap_ci(IdentityMetric(), identity_statistics(20, 100), resamples=500)
    large = bootstrap_ci(IdentityMetric(), identity_statistics(200, 1000), resamples=500)
    assert large.high - large.low < small.high - small.low


def test_bootstrap_of_id_matches_the_normal_approximation():
    n, p = 2000, 0.25
    low, high = bootstrap_ci(IdentityMetric(), identity_statistics(int(n * p), n),
                             resamples=2000).bounds
    half_width = 100 * 1.959964 * math.sqrt(p * (1 - p) / n)
    assert low == pytest.approx(25.0 - half_width, abs=0.3)
    assert high == pytest.approx(25.0 + half_width, abs=0.3)


def test_bootstrap_level_widens_interval():
    stats = identity_statistics(40, 200)
    narrow = bootstrap_ci(IdentityMetric(), stats, level=0.5)
    wide = bootstrap_ci(IdentityMetric(), stats, level=0.99)
    assert wide.low < narrow.low < narrow.high < wide.high


def test_bootstrap_works_for_ratio_and_bleu_metrics():
    id_perm = np.array([[1, 1], [0, 1], [0, 0], [1, 1]] * 25, dtype=float)
    low, high = bootstrap_ci(IdentityPerPermutationMetric(), id_perm, resamples=300).bounds
    assert low <= corpus_value(IdentityPerPermutationMetric(), id_perm) <= high
    bleu = BleuMetric()
    refs = ["the cat sat on the mat", "a dog ran in the park today", "hello there world"] * 10
    hyps = ["the cat sat on a mat", "a dog ran in a park", "hello world"] * 10
    stats = bleu.sentence_statistics(refs, hyps)
    low, high = bootstrap_ci(bleu, stats, resamples=300).bounds
    assert low <= corpus_value(bleu, stats) <= high


def test_bootstrap_chunks_give_every_resample(monkeypatch):
    # Tiny chunks must still produce a valid interval over all resamples.
    monkeypatch.setattr("harness.stats.intervals._BOOTSTRAP_CELLS", 7)
    interval = bootstrap_ci(IdentityMetric(), identity_statistics(5, 10), resamples=50)
    assert 0.0 <= interval.low <= 50.0 <= interval.high <= 100.0
    assert interval.resamples == 50


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


SCIPY = {"spearman": scipy_stats.spearmanr, "pearson": scipy_stats.pearsonr,
         "kendall": scipy_stats.kendalltau}


def brute_force_p(x: list[float], y: list[float], method: str) -> float:
    """Two-sided permutation p-value by scoring every pairing with scipy itself."""
    function = SCIPY[method]
    observed = abs(function(x, y)[0])
    values = [abs(function(x, list(pairing))[0]) for pairing in itertools.permutations(y)]
    return sum(v >= observed - 1e-12 for v in values) / len(values)


@pytest.mark.parametrize("method", ["spearman", "pearson", "kendall"])
def test_correlate_equals_scipy_with_exact_p(method):
    keys = sorted(X)
    xs, ys = [X[k] for k in keys], [Y[k] for k in keys]
    expected_rho, expected_p = SCIPY[method](xs, ys)
    result = correlate(X, Y, method)
    assert result.n == 6
    assert result.rho == pytest.approx(expected_rho)
    assert result.p_method == "exact"
    assert result.p == pytest.approx(brute_force_p(xs, ys, method))
    # beyond exact_max, scipy's own p-value
    approximate = correlate(X, Y, method, exact_max=5)
    assert approximate.p_method == "scipy"
    assert approximate.rho == pytest.approx(expected_rho)
    assert approximate.p == pytest.approx(expected_p)


def test_correlate_uses_pairwise_deletion():
    x = dict(X, extra=99.0, broken=float("nan"))
    y = dict(Y, broken=50.0, only_y=1.0)
    del y["qt"]
    result = correlate(x, y)
    keys = ["avg", "gem", "hier", "laser", "sbert"]
    xs, ys = [X[k] for k in keys], [Y[k] for k in keys]
    assert result.n == 5
    assert result.rho == pytest.approx(scipy_stats.spearmanr(xs, ys)[0])
    assert result.p == pytest.approx(brute_force_p(xs, ys, "spearman"))


@pytest.mark.parametrize("method", ["spearman", "pearson", "kendall"])
def test_exact_p_equals_brute_force_with_ties_and_blocked_enumeration(method, monkeypatch):
    # 6 values with ties on both sides; blocks of 4! rows force the prefix enumeration.
    monkeypatch.setattr("harness.stats.correlation._BLOCK", 4)
    x = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0]
    y = [2.0, 7.0, 1.0, 8.0, 2.0, 8.0]
    assert permutation_pvalue(np.array(x), np.array(y), method) == pytest.approx(
        brute_force_p(x, y, method))


def test_exact_p_agrees_with_scipy_exact_tests():
    rng = np.random.default_rng(3)
    x = rng.normal(size=6)
    y = x + rng.normal(size=6)
    # Kendall without ties: scipy's exact null distribution.
    assert permutation_pvalue(x, y, "kendall") == pytest.approx(
        scipy_stats.kendalltau(x, y, method="exact").pvalue)
    # Spearman: scipy's permutation test over all 6! pairings (symmetric null: same two sides).
    reference = scipy_stats.permutation_test(
        (y,), lambda yy: scipy_stats.spearmanr(x, yy)[0], permutation_type="pairings",
        n_resamples=np.inf, alternative="two-sided")
    assert permutation_pvalue(x, y, "spearman") == pytest.approx(reference.pvalue)


@pytest.mark.parametrize("method", ["spearman", pytest.param("kendall", marks=pytest.mark.slow)])
def test_exact_p_for_ten_perfectly_ordered_encoders(method):
    # Only the identity and the reversal reach |rho| = 1: p = 2 / 10!.
    x = np.arange(10.0)
    assert permutation_pvalue(x, x * 3 + 1, method) == pytest.approx(2 / math.factorial(10))
    result = correlate(dict(enumerate(x)), dict(enumerate(-x)), method)
    assert (result.rho, result.p_method) == (pytest.approx(-1.0), "exact")


def test_permutation_blocks_enumerate_each_permutation_once(monkeypatch):
    monkeypatch.setattr("harness.stats.correlation._BLOCK", 5)
    rows = np.concatenate(list(_permutation_blocks(7)))
    codes = rows @ (7 ** np.arange(7))
    assert len(rows) == math.factorial(7) == len(np.unique(codes))
    assert (np.sort(rows, axis=1) == np.arange(7)).all()


def test_eleven_encoders_fall_back_to_scipy():
    rng = np.random.default_rng(0)
    x = dict(enumerate(rng.normal(size=11)))
    y = dict(enumerate(rng.normal(size=11)))
    result = correlate(x, y)
    expected = scipy_stats.spearmanr(list(x.values()), list(y.values()))
    assert (result.n, result.p_method) == (11, "scipy")
    assert result.p == pytest.approx(expected.pvalue)


def test_correlation_to_json():
    assert Correlation(0.5, 0.2, 7, "exact").to_json() == {
        "rho": 0.5, "p": 0.2, "p_method": "exact", "n": 7}
    assert Correlation(None, None, 2).to_json() == {"rho": None, "p": None, "n": 2}


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
    assert summary["id"] == {"mean": pytest.approx(0.9), "min": pytest.approx(0.8), "tasks": 2}
    assert summary["perm"] == {"mean": pytest.approx(-0.9), "min": pytest.approx(-1.0),
                               "tasks": 2}


def test_summary_is_none_without_defined_correlations():
    assert summarise({"id": {"MR": Correlation(None, None, 1)}}) == {
        "id": {"mean": None, "min": None, "tasks": 0}}


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


# --- the paper's tables -------------------------------------------------------------------------

PAPER = Path(__file__).resolve().parents[1] / "benchmarks" / "paper"


def read_table(name: str) -> dict:
    return yaml.safe_load((PAPER / name).read_text(encoding="utf-8"))


def test_correlations_from_the_paper_tables_equal_scipy():
    table4, table5 = read_table("v2s-table4.yaml"), read_table("senteval-table5.yaml")
    result = correlations_from_tables(PAPER / "v2s-table4.yaml", PAPER / "senteval-table5.yaml")
    encoders = list(table5["scores"])          # LASER has no SentEval scores in Table 5
    assert "laser" not in encoders and len(encoders) == 8
    assert list(result.matrix) == ["bleu", "mover", "perm", "id", "id-perm"]
    for diagnostic in table4["tasks"]:
        x = [table4["scores"][e][diagnostic] for e in encoders]
        rhos = []
        for task in table5["tasks"]:
            y = [table5["scores"][e][task] for e in encoders]
            rho, _ = scipy_stats.spearmanr(x, y)
            cell = result.matrix[diagnostic][task]
            assert cell.rho == pytest.approx(rho) and cell.n == 8
            assert cell.p_method == "exact"
            rhos.append(rho)
        assert result.summary[diagnostic].mean == pytest.approx(np.mean(rhos))
        assert result.summary[diagnostic].min == pytest.approx(min(rhos))
    assert result.notes == ["no downstream scores for: laser (not in Kerscher & Eger 2020, "
                            "Table 5)"]


def test_paper_figure_2_summary_where_the_text_states_it():
    # Section 3.1: Id mean 0.59, min 0.38; Id/PERM mean 0.69, min 0.58 (Figure 2 used LASER's
    # SentEval scores too, which Table 5 does not print). From the printed tables (8 encoders):
    summary = correlations_from_tables(PAPER / "v2s-table4.yaml",
                                       PAPER / "senteval-table5.yaml").summary
    assert summary["id"].min == pytest.approx(0.38, abs=0.01)       # matches the text
    assert summary["id-perm"].mean == pytest.approx(0.69, abs=0.015)  # matches the text
    assert summary["id"].mean == pytest.approx(0.54, abs=0.005)     # text: 0.59
    assert summary["id-perm"].min == pytest.approx(0.52, abs=0.005)  # text: 0.58
    # The paper's ordering of the diagnostics by mean: Id/PERM > Id > Mover > BLEU > PERM.
    means = {d: s.mean for d, s in summary.items()}
    assert sorted(means, key=means.get, reverse=True) == ["id-perm", "id", "mover", "bleu", "perm"]


def test_paper_table_1_ranks_from_the_tables():
    table1 = read_table("ranks-table1.yaml")["scores"]
    result = correlations_from_tables(PAPER / "v2s-table4.yaml", PAPER / "senteval-table5.yaml",
                                      rank_by="id")
    # V2S rank by Id over all nine encoders: exactly Table 1's column.
    assert result.ranks["id"] == {e: row["rank-v2s"] for e, row in table1.items()}
    # Downstream rank over the eight encoders of Table 5: Table 1's order with LASER left out.
    printed = sorted((row["rank-ds"], e) for e, row in table1.items() if e != "laser")
    assert result.ranks["downstream"] == {e: i for i, (_, e) in enumerate(printed, start=1)}


def test_correlations_to_json_round_trip():
    result = correlations_from_tables(PAPER / "v2s-table4.yaml", PAPER / "senteval-table5.yaml",
                                      method="kendall")
    data = json.loads(json.dumps(result.model_dump(mode="json")))
    assert data["method"] == "kendall" and data["rank_by"] == "id"
    assert data["sources"] == {"diagnostics": "Kerscher & Eger 2020, Table 4",
                               "downstream": "Kerscher & Eger 2020, Table 5"}
    assert data["diagnostics"]["id"]["laser"] == 18.52
    assert data["matrix"]["id"]["MR"]["rho"] == pytest.approx(scipy_stats.kendalltau(
        [read_table("v2s-table4.yaml")["scores"][e]["id"] for e in read_table(
            "senteval-table5.yaml")["scores"]],
        [v["MR"] for v in read_table("senteval-table5.yaml")["scores"].values()])[0])


def test_the_shipped_tables_are_read_by_the_reference_reader():
    for name in ("v2s-table4.yaml", "senteval-table5.yaml", "ranks-table1.yaml"):
        source, tasks, scores = read_reference_table(PAPER / name)
        assert source.startswith("Kerscher & Eger 2020, Table")
        assert all(set(row) == set(tasks) for row in scores.values())


def test_a_lower_is_better_diagnostic_ranks_its_lowest_first() -> None:
    """Perplexity: the encoder with the lowest value is ranked 1; an undefined value (Id/PERM
    without permutations) is not ranked."""
    from harness.analyses.correlation.correlate import correlate_diagnostics
    from harness.analyses.downstream.scores import Downstream

    scores = {e: {"MR": s} for e, s in zip("abcd", (80.0, 70.0, 60.0, 50.0))}
    downstream = Downstream(source="", tasks=["MR"], scores=scores)
    diagnostics = {"ppl": {"a": 5.0, "b": 10.0, "c": 20.0, "d": 40.0},
                   "id-perm": {"a": 90.0, "b": float("nan"), "c": 50.0, "d": 40.0}}
    ppl = correlate_diagnostics(diagnostics, downstream, method="spearman", decoder="x",
                                rank_by="ppl", lower_is_better=frozenset({"ppl"}))
    assert ppl.ranks["ppl"] == {"a": 1, "b": 2, "c": 3, "d": 4}
    assert ppl.matrix["ppl"]["MR"].rho == pytest.approx(-1.0)  # agreement, lower is better
    by_id_perm = correlate_diagnostics(diagnostics, downstream, method="spearman", decoder="x",
                                       rank_by="id-perm")
    assert by_id_perm.ranks["id-perm"] == {"a": 1, "c": 2, "d": 3}
    assert by_id_perm.matrix["id-perm"]["MR"].n == 3


def test_downstream_rank_shares_tied_places_evenly() -> None:
    """Within a task tied encoders share the mean of their places (2.5 each here), so each task
    hands out the same rank total; then the mean ranks are ranked."""
    from harness.stats import downstream_rank

    downstream = {"a": {"MR": 90.0, "CR": 70.0}, "b": {"MR": 80.0, "CR": 80.0},
                  "c": {"MR": 80.0, "CR": 90.0}, "d": {"MR": 50.0, "CR": 60.0}}
    # MR: a 1, b 2.5, c 2.5, d 4; CR: c 1, b 2, a 3, d 4 -> means a 2, b 2.25, c 1.75, d 4
    assert downstream_rank(downstream) == {"c": 1, "a": 2, "b": 3, "d": 4}
