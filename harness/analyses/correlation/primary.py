"""The primary analysis: the test the spec declared before the run (`correlation.primary`), whose
result is the claim; the diagnostic x task matrix beside it is exploratory.

One test per diagnostic: its mean correlation over the downstream tasks, across the encoders,
with a two-sided joint permutation p-value (`harness.stats.joint`: the diagnostic's encoder
labels permuted jointly against the whole task table, exact over all n! permutations up to 10
encoders, Monte-Carlo beyond). Holm's (1979) step-down correction runs over the diagnostics
only: the family is the declared diagnostics, not the matrix's cells. Diagnostics whose values
are identical on every encoder (Id and PERM are when every exact output is the only
permutation found) are one test, named "id = perm", so they count once in the family.

Missing values: every test runs over the same encoders and the same tasks, so the family is
one comparison. The encoders are those with downstream scores and a value for every declared
diagnostic; the tasks are those every such encoder has a score for (a task some encoder lacks
is left out and named in `tasks_left_out`, rather than letting each encoder's mean run over
different tasks); a task whose scores are all equal has no correlation and is left out too.

Beside the tests, the smallest population correlation detectable with the declared power at the
family's first Holm step, alpha / m (`harness.stats.power`; conservative: the later steps test
at larger levels).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from harness.analyses.correlation.results import PrimaryAnalysis, PrimaryTest
from harness.analyses.correlation.spec import PrimarySection
from harness.stats.correlation import EXACT_MAX
from harness.stats.joint import mean_correlation_test
from harness.stats.multiple import holm_adjusted
from harness.stats.power import min_detectable_correlation

POWER_MODEL = "bivariate-normal-one-factor"
"""`PrimaryAnalysis.power_model`: the diagnostic and one downstream factor shared by every task
are bivariate normal with the given population correlation (conservative for a mean over
tasks; `harness.stats.power`)."""

MERGED = " = "
"""Joins the names of diagnostics merged into one test: "id = perm"."""


def primary_analysis(diagnostics: Mapping[str, Mapping[str, float | None]],
                     downstream: Mapping[str, Mapping[str, float]], section: PrimarySection, *,
                     method: str, lower_is_better: frozenset[str] = frozenset(), seed: int = 0,
                     exact_max: int | None = None) -> PrimaryAnalysis:
    """Return the primary analysis of `diagnostics` (diagnostic -> encoder -> value) against
    `downstream` (encoder -> task -> score, the studied encoders only) as `section` declares
    it (module docstring). Monte-Carlo permutations and the power simulation draw from
    `seed`."""
    notes: list[str] = []
    names = _diagnostics(diagnostics, section, lower_is_better, notes)
    encoders = _encoders(diagnostics, downstream, names, notes)
    tasks, left_out = _tasks(downstream, encoders, section, notes)
    base = PrimaryAnalysis(encoders=encoders, n=len(encoders), tasks=tasks,
                           tasks_left_out=left_out, alpha=section.alpha, power=section.power,
                           power_model=POWER_MODEL, notes=notes)
    if not names or len(encoders) < 3 or not tasks:
        if len(encoders) < 3:
            notes.append(f"the primary analysis needs at least 3 encoders with every declared "
                         f"diagnostic and downstream scores; {len(encoders)} have them")
        if not tasks:
            notes.append("the primary analysis has no task every encoder has a score for")
        return base.model_copy(update={"notes": notes})
    table = np.array([[downstream[e][t] for t in tasks] for e in encoders], dtype=np.float64)
    limit = EXACT_MAX if exact_max is None else exact_max
    tests, p_method, permutations = [], None, 0
    for group in merge_identical(diagnostics, names, encoders):
        # every value is finite: `_encoders` kept the encoders that have one
        x = np.array([diagnostics[group[0]][e] for e in encoders], dtype=np.float64)
        joint = mean_correlation_test(x, table, method, exact_max=limit,
                                      permutations=section.permutations, seed=seed)
        p_method, permutations = joint.p_method or p_method, joint.permutations or permutations
        tests.append(PrimaryTest(diagnostic=MERGED.join(group), diagnostics=group,
                                 mean_rho=joint.statistic, p=joint.p))
    tested = [i for i, test in enumerate(tests) if test.p is not None]
    adjusted = dict(zip(tested, holm_adjusted([tests[i].p for i in tested])))  # type: ignore[misc]
    tests = [test.model_copy(update={"p_holm": adjusted.get(i), "significant": i in adjusted
                                     and adjusted[i] <= section.alpha})
             for i, test in enumerate(tests)]
    family = len(tested)
    power_alpha = section.alpha / family if family else None
    detectable = (min_detectable_correlation(len(encoders), power_alpha, section.power, method,
                                             seed=seed, exact_max=limit)
                  if power_alpha is not None else None)
    return base.model_copy(update={
        "tests": tests, "p_method": p_method, "permutations": permutations, "family": family,
        "power_alpha": power_alpha, "min_detectable_rho": detectable, "notes": notes})


def _diagnostics(diagnostics: Mapping[str, Mapping[str, float | None]], section: PrimarySection,
                 lower_is_better: frozenset[str], notes: list[str]) -> list[str]:
    """The declared diagnostics that were measured; by default every higher-is-better one."""
    if section.diagnostics is None:
        return [name for name in diagnostics if name not in lower_is_better]
    missing = [name for name in section.diagnostics if name not in diagnostics]
    if missing:
        notes.append(f"declared diagnostics not measured, left out of the primary analysis: "
                     f"{', '.join(missing)}")
    return [name for name in section.diagnostics if name in diagnostics]


def _finite(value: object) -> bool:
    try:
        return math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _encoders(diagnostics: Mapping[str, Mapping[str, float | None]],
              downstream: Mapping[str, Mapping[str, float]], names: list[str],
              notes: list[str]) -> list[str]:
    """The encoders with downstream scores and a finite value of every diagnostic, sorted."""
    scored = sorted(e for e, scores in downstream.items() if scores)
    kept = [e for e in scored if all(_finite(diagnostics[d].get(e)) for d in names)]
    lacking = [e for e in scored if e not in kept]
    if lacking:
        notes.append(f"left out of the primary analysis for lack of a declared diagnostic's "
                     f"value: {', '.join(lacking)}")
    return kept


def _tasks(downstream: Mapping[str, Mapping[str, float]], encoders: list[str],
           section: PrimarySection, notes: list[str]) -> tuple[list[str], list[str]]:
    """(tasks the mean is over, tasks left out): the declared (or all) tasks that every encoder
    has a finite score for and whose scores are not all equal."""
    present = list(dict.fromkeys(t for e in encoders for t in downstream[e]))
    if section.tasks == "all":
        wanted = present
    else:
        by_name = {t.lower(): t for t in present}
        unknown = [t for t in section.tasks if t.lower() not in by_name]
        if unknown:
            notes.append(f"declared tasks without scores, left out of the primary analysis: "
                         f"{', '.join(unknown)}")
        wanted = [by_name[t.lower()] for t in section.tasks if t.lower() in by_name]
    kept, left_out = [], []
    for task in wanted:
        lacking = [e for e in encoders if not _finite(downstream[e].get(task))]
        values = {float(downstream[e][task]) for e in encoders if e not in lacking}
        if lacking:
            notes.append(f"task {task} left out of the primary analysis: no score for "
                         f"{', '.join(lacking)}")
        elif len(values) == 1 and len(encoders) > 1:
            notes.append(f"task {task} left out of the primary analysis: every encoder scores "
                         "the same")
        else:
            kept.append(task)
            continue
        left_out.append(task)
    return kept, left_out


def merge_identical(diagnostics: Mapping[str, Mapping[str, float | None]], names: list[str],
                    encoders: list[str]) -> list[list[str]]:
    """`names` grouped so that diagnostics with the same value on every encoder (to 1e-12
    relative) share a group, in the order first met: each group is one test."""
    groups: list[list[str]] = []
    for name in names:
        values = [float(diagnostics[name][e]) for e in encoders]  # type: ignore[arg-type]
        for group in groups:
            first = [float(diagnostics[group[0]][e]) for e in encoders]  # type: ignore[arg-type]
            if all(math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
                   for a, b in zip(values, first)):
                group.append(name)
                break
        else:
            groups.append([name])
    return groups
