"""The primary analysis in the report: its table ("Primary analysis") and the sentences that
state its result as the report's claim (`harness.report.summary` puts them first, and labels
the diagnostic x task matrix exploratory)."""

from __future__ import annotations

from harness.analyses.correlation.results import FamilyAnalysis, PrimaryAnalysis, PrimaryTest, correlations_of
from harness.report.elements import Section, Table, fmt, fmt_p, join_names, plural
from harness.results.model import RunResults

P_METHODS = {"exact": "exact joint permutation p (all {count} relabellings of the encoders)",
             "monte-carlo": "Monte-Carlo joint permutation p ((b+1)/(m+1) over {count} random "
                            "relabellings of the encoders)"}
"""`PrimaryAnalysis.p_method`, in words."""

POWER_MODELS = {"bivariate-normal-one-factor": "simulated under a bivariate normal model of the "
                "diagnostic and one downstream factor shared by every task (conservative for a "
                "mean over tasks)"}
"""`PrimaryAnalysis.power_model`, in words."""


def decision(test: PrimaryTest) -> str:
    """"significant" (with "inverse" for a negative mean) or "not significant", after Holm."""
    if test.p_holm is None:
        return "untested"
    if not test.significant:
        return "not significant"
    return "significant" if (test.mean_rho or 0.0) >= 0 else "significant, inverse"


def _detectable(primary: PrimaryAnalysis) -> str:
    if primary.min_detectable_rho is None:
        return "none"
    return fmt(primary.min_detectable_rho, 2)


def _how(primary: PrimaryAnalysis, method: str) -> str:
    """How the tests were made, as a phrase."""
    test = P_METHODS.get(primary.p_method or "", primary.p_method or "p").format(
        count=f"{primary.permutations:,}")
    return (f"mean {method.capitalize()} rho over {plural(len(primary.tasks), 'task')} across "
            f"{plural(primary.n, 'encoder')}, {test}, Holm's correction over "
            f"{plural(primary.family, 'diagnostic')} (family-wise error {primary.alpha:g})")


def _power_phrase(primary: PrimaryAnalysis, method: str) -> str:
    level = "the family's level"
    if primary.power_alpha is not None:
        level = f"alpha {primary.alpha:g}/{primary.family} = {primary.power_alpha:.3g}"
    if primary.min_detectable_rho is None:
        return (f"with {plural(primary.n, 'encoder')} no population {method.capitalize()} rho "
                f"is detected with {primary.power:.0%} power at {level}")
    return (f"with {plural(primary.n, 'encoder')} the test detects a population "
            f"{method.capitalize()} rho of {primary.min_detectable_rho:.2f} or more with "
            f"{primary.power:.0%} power at {level} (Holm's first step, the conservative "
            "statement); weaker associations can go unseen")


def primary_section(results: RunResults) -> Section | None:
    """The primary analysis's table and how it was made; None when the run declared none."""
    primary, method = correlations_of(results).primary, correlations_of(results).method
    if primary is None:
        return None
    text = ["Declared in the spec before the run (`correlation.primary`); its result is the "
            "report's claim, and the diagnostic x task matrix is exploratory."]
    if (registered := registration_line(results)) is not None:
        text.append(registered)
    if primary.tests:
        text.append(f"One test per diagnostic: {_how(primary, method)}. The diagnostic's "
                    "encoder labels are permuted jointly against the whole task table, so the "
                    "tasks' dependence on each other stays in the null distribution. "
                    "Diagnostics with the same value on every encoder are one test (a = b) "
                    "and count once in the family.")
        text.append(f"Minimum detectable rho: the smallest population correlation detected "
                    f"with {primary.power:.0%} power at alpha / family = "
                    f"{primary.power_alpha:.3g} (Holm's first step: conservative), "
                    f"{POWER_MODELS.get(primary.power_model, primary.power_model)}.")
        text.append(f"Tasks: {', '.join(primary.tasks)}.")
    text += [f"- {note}" for note in primary.notes]
    p_column = "exact p" if primary.p_method == "exact" else "p"
    header = ["diagnostic", "mean rho", p_column, "Holm p", "decision", "n encoders", "tasks",
              f"min. detectable rho ({primary.power:.0%} power)"]
    reference = correlations_of(results).primary_reference
    families = correlations_of(results).families
    family_tables = []
    if families is not None:
        text.append(family_line(families))
        family_tables = [Table(f"Within the family {name} ({len(families.families[name])} "
                               "encoders; exploratory)", header, _rows(analysis))
                         for name, analysis in families.within.items() if analysis.tests]
    if reference is None:
        rows = _rows(primary)
        return Section("Primary analysis", text,
                       tables=([Table("", header, rows)] if rows else []) + family_tables)
    text.append(f"This run joined a reference bundle: the registered test is over the "
                f"bundle's {plural(reference.n, 'encoder')} (first table, the claim); over "
                f"every encoder of the run ({primary.n}, second table) it is exploratory, and "
                "the difference is what the run's own encoders did to it.")
    tables = [Table(f"Registered: the bundle's {plural(reference.n, 'encoder')}", header,
                    _rows(reference)),
              Table(f"Exploratory: every encoder of the run ({primary.n})", header,
                    _rows(primary))]
    return Section("Primary analysis", text,
                   tables=[t for t in tables if t.rows] + family_tables)


def family_line(families: FamilyAnalysis) -> str:
    """The encoders by family and the effective number of independent encoders, in words."""
    listed = "; ".join(f"{name}: {len(members)}" for name, members in families.families.items())
    effective = ", ".join(f"{diagnostic} {value:.1f} (ICC {families.icc[diagnostic]:.2f})"
                          for diagnostic, value in families.effective_n.items())
    within = (f" Within each family of at least 5, the same test over its encoders alone "
              f"(exploratory): {', '.join(families.within)}." if families.within else "")
    return (f"Families of the {families.n} encoders tested ({listed}; the others stand alone). "
            "Views of one model and poolings of one table are near-duplicates, so fewer than "
            f"{families.n} encoders are independent: the effective number, N / (1 + (m - 1) "
            "ICC) from the one-way intraclass correlation of the diagnostic's ranks over the "
            f"families (Kish's design effect, an approximation), is {effective}.{within}")


def registration_line(results: RunResults) -> str | None:
    """"Registered at COMMIT ...", "Changed after registration at COMMIT: FIELDS." or why the
    test is not registered; None where the run did not look (no declared primary)."""
    found = correlations_of(results).registration
    if found is None:
        return None
    if found.commit is None:
        return (f"Not registered: {found.why} ({found.file}); the primary test was declared "
                "but not committed before the run.")
    when = f"{found.commit[:12]}" + (f" ({found.date[:10]})" if found.date else "")
    if found.equal:
        return f"Registered at {when} in {found.file}: the run's spec is the registered one."
    return (f"Changed after registration at {when} in {found.file}: "
            f"{', '.join(found.changed)}. The result is not the registered test's where those "
            "fields move it.")


def _rows(primary: PrimaryAnalysis) -> list[list[str]]:
    """One row per test of a primary analysis."""
    tasks = str(len(primary.tasks))
    return [[test.diagnostic, fmt(test.mean_rho, 2), fmt_p(test.p), fmt_p(test.p_holm),
             decision(test), str(primary.n), tasks, _detectable(primary)]
            for test in primary.tests]


def primary_claims(results: RunResults) -> list[str]:
    """The primary analysis's result as the claim: the diagnostics whose mean correlation
    survives Holm's correction, else that none does, every test's numbers, and the power."""
    primary, method = correlations_of(results).primary, correlations_of(results).method
    reference = correlations_of(results).primary_reference
    if reference is not None and reference.tests and primary is not None:
        claims = _claims(reference, method, "the bundle's encoders, as registered")
        numbers = "; ".join(f"{t.diagnostic} {fmt(t.mean_rho, 2)} (Holm {fmt_p(t.p_holm)})"
                            for t in primary.tests)
        return claims + [f"Exploratory, with this run's own encoders ({primary.n} in all): "
                         f"{numbers}."]
    if primary is None or not primary.tests:
        return []
    return _claims(primary, method, "declared in the spec")


def _claims(primary: PrimaryAnalysis, method: str, what: str) -> list[str]:
    """The claim of one primary analysis (`primary_claims`)."""
    numbers = "; ".join(f"{t.diagnostic} {fmt(t.mean_rho, 2)} (p {fmt_p(t.p)}, Holm "
                        f"{fmt_p(t.p_holm)})" for t in primary.tests)
    kept = [t for t in primary.tests if t.significant]
    lead = f"Primary analysis ({what}: {_how(primary, method)})"
    if kept:
        named = [f"{t.diagnostic} ({'inversely, ' if (t.mean_rho or 0) < 0 else ''}mean rho "
                 f"{t.mean_rho:.2f})" for t in kept if t.mean_rho is not None]
        verdict = (f"{join_names(named)} {'tracks' if len(kept) == 1 else 'track'} downstream "
                   "performance after Holm's correction")
    else:
        verdict = "no diagnostic's mean rho is significant after Holm's correction"
    power = _power_phrase(primary, method)
    return [f"{lead}: {verdict}. Mean rho: {numbers}. {power[0].upper()}{power[1:]}."]


def exploratory(line: str) -> str:
    """A sentence about the diagnostic x task matrix, labelled exploratory."""
    return f"Exploratory, cell by cell (not the claim): {line[:1].lower()}{line[1:]}"
