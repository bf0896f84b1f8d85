"""The primary test over encoders in families: the effective number of independent encoders
and the test within each family of at least five."""

from __future__ import annotations

import pytest
from scipy.stats import rankdata

from harness.analyses.correlation.families import family_analysis
from harness.analyses.correlation.primary import primary_analysis
from harness.analyses.correlation.primary_report import family_line
from harness.analyses.correlation.spec import PrimarySection
from harness.stats.clusters import effective_number, intraclass_correlation

# twelve encoders: a family of five poolings, a family of five views, two alone
ENCODERS = [f"p{i}" for i in range(5)] + [f"v{i}" for i in range(5)] + ["x", "y"]
FAMILIES = {**{f"p{i}": "poolings" for i in range(5)}, **{f"v{i}": "views" for i in range(5)}}
ID = dict(zip(ENCODERS, [1.0, 2.0, 3.0, 4.0, 5.0, 11.0, 12.0, 13.0, 14.0, 15.0, 7.0, 8.0]))
DOWNSTREAM = {e: {"MR": 50 + ID[e] + (i % 3), "CR": 60 + 2 * ID[e] - (i % 2)}
              for i, e in enumerate(ENCODERS)}


def analyse():
    section = PrimarySection(diagnostics=["id"])
    primary = primary_analysis({"id": dict(ID)}, DOWNSTREAM, section, method="spearman", seed=1)
    found = family_analysis(primary, FAMILIES, {"id": dict(ID)}, DOWNSTREAM, section,
                            method="spearman", lower_is_better=frozenset(), seed=1)
    return primary, found


def test_the_effective_number_is_kish_from_the_ranks_icc():
    primary, found = analyse()
    assert found.n == 12 and found.families == {"poolings": ENCODERS[:5], "views": ENCODERS[5:10]}
    ranks = dict(zip(primary.encoders, rankdata([ID[e] for e in primary.encoders])))
    icc = intraclass_correlation(ranks, FAMILIES)
    assert found.icc["id"] == pytest.approx(icc) and icc > 0.8  # the families sit apart
    assert found.effective_n["id"] == pytest.approx(effective_number([5, 5, 1, 1], icc))
    assert found.effective_n["id"] < 6


def test_each_family_of_five_gets_its_own_exact_test():
    _, found = analyse()
    assert set(found.within) == {"poolings", "views"}
    poolings = found.within["poolings"]
    assert poolings.encoders == ENCODERS[:5] and poolings.p_method == "exact"
    # the mean of the two tasks' Spearman rho over the five poolings alone, by scipy
    from scipy.stats import spearmanr

    ids = [ID[e] for e in ENCODERS[:5]]
    expected = (spearmanr(ids, [DOWNSTREAM[e]["MR"] for e in ENCODERS[:5]]).statistic
                + spearmanr(ids, [DOWNSTREAM[e]["CR"] for e in ENCODERS[:5]]).statistic) / 2
    assert poolings.tests[0].mean_rho == pytest.approx(expected)


def test_the_report_states_the_effective_number_beside_n():
    _, found = analyse()
    line = family_line(found)
    assert "Families of the 12 encoders tested (poolings: 5; views: 5" in line
    assert f"id {found.effective_n['id']:.1f} (ICC {found.icc['id']:.2f})" in line
    assert "poolings, views" in line


def test_no_declared_family_gives_no_family_analysis():
    section = PrimarySection(diagnostics=["id"])
    primary = primary_analysis({"id": dict(ID)}, DOWNSTREAM, section, method="spearman", seed=1)
    assert family_analysis(primary, {}, {"id": dict(ID)}, DOWNSTREAM, section,
                           method="spearman", lower_is_better=frozenset(), seed=1) is None
