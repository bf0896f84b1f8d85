"""The primary test's encoders in their declared families: how many independent encoders the
test rests on, and the test within each family large enough for one
(`harness.analyses.correlation.results.FamilyAnalysis`)."""

from __future__ import annotations

from collections.abc import Mapping

from scipy.stats import rankdata

from harness.analyses.correlation.primary import primary_analysis
from harness.analyses.correlation.results import FamilyAnalysis, PrimaryAnalysis
from harness.analyses.correlation.spec import PrimarySection
from harness.stats.clusters import effective_number, intraclass_correlation

MIN_FAMILY = 5
"""Encoders a family needs for a test of its own (an exact permutation test over 5 encoders
can reach p = 2/120)."""


def family_analysis(primary: PrimaryAnalysis, families: Mapping[str, str],
                    diagnostics: dict[str, dict[str, float | None]],
                    downstream: dict[str, dict[str, float]], section: PrimarySection, *,
                    method: str, lower_is_better: frozenset[str], seed: int
                    ) -> FamilyAnalysis | None:
    """The family analysis of `primary` (its encoders and tests), `families` mapping an
    encoder to its declared family; None when none of the primary's encoders declares one."""
    encoders = primary.encoders
    declared = {name: families[name] for name in encoders if name in families}
    if not declared:
        return None
    grouped: dict[str, list[str]] = {}
    for name, family in declared.items():
        grouped.setdefault(family, []).append(name)
    sizes = list(map(len, grouped.values())) + [1] * (len(encoders) - len(declared))
    icc, effective = {}, {}
    for test in primary.tests:
        name = test.diagnostics[0] if test.diagnostics else test.diagnostic
        values = [float(diagnostics[name][e]) for e in encoders]  # type: ignore[arg-type]
        ranks = dict(zip(encoders, rankdata(values)))
        icc[test.diagnostic] = intraclass_correlation(ranks, declared)
        effective[test.diagnostic] = effective_number(sizes, icc[test.diagnostic])
    within = {}
    for family, members in grouped.items():
        if len(members) < MIN_FAMILY:
            continue
        within[family] = primary_analysis(
            {d: {e: v for e, v in by.items() if e in members} for d, by in diagnostics.items()},
            {e: row for e, row in downstream.items() if e in members}, section,
            method=method, lower_is_better=lower_is_better, seed=seed)
    return FamilyAnalysis(families=grouped, n=len(encoders), icc=icc, effective_n=effective,
                          within=within)
