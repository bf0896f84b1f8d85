"""The correlation analysis's sentences for the report's "What this run shows": which
diagnostics track downstream performance (the primary analysis's result first, the matrix's
cells only where they survive Holm's correction over the matrix), and its caveats: few
encoders, the smallest attainable p, how many cells reach p < alpha by chance, encoders left
out for want of downstream scores."""

from __future__ import annotations

import math

from harness.analyses.correlation.multiplicity import multiplicity
from harness.analyses.correlation.primary_report import exploratory, primary_claims
from harness.analyses.correlation.report import INTERVALS
from harness.analyses.correlation.results import correlations_of
from harness.analyses.downstream.report import missing_downstream
from harness.report.elements import (
    ALPHA,
    fmt,
    fmt_interval,
    fmt_p,
    higher_is_better,
    join_names,
    plural,
)
from harness.results.model import RunResults
from harness.stats.multiple import holm_adjusted

MANY_ENCODERS = 10
"""Below this many encoders a correlation across them is called few-encoder in the caveats."""


def tracking_claims(results: RunResults) -> list[str]:
    """Which diagnostics track downstream performance. With a primary analysis (declared in the
    spec), its result is the claim and comes first; the matrix's sentences follow, labelled
    exploratory. The matrix's: only the diagnostic x task correlations whose p-value survives
    Holm's correction over every test of the matrix; every other diagnostic's mean rho is given
    with its interval across encoders and "not significant after correction"."""
    corr = correlations_of(results)
    direction = higher_is_better(results)
    cells = [(d, t, c, p, rho) for d, row in corr.matrix.items() for t, c in row.items()
             if (p := c.p) is not None and (rho := c.rho) is not None]
    if not cells:
        return []
    adjusted = [c.p_holm if c.p_holm is not None else p_holm
                for (_, _, c, _, _), p_holm in zip(cells, holm_adjusted([p for *_, p, _ in cells]))]
    family = f"Holm's correction over the {plural(len(cells), 'diagnostic x task test')}"
    kept = [(d, t, c, rho, adj) for (d, t, c, _, rho), adj in zip(cells, adjusted)
            if adj <= ALPHA]
    lines = []
    if kept:
        parts = []
        for d, t, c, rho, adj in kept:
            agrees = (rho > 0) == direction.get(d, True)
            how = f"{c.p_method} p" if c.p_method else "p"
            parts.append(f"{d} {'tracks' if agrees else 'tracks inversely'} {t} (rho "
                         f"{rho:.2f}, {how} {fmt_p(c.p)}, Holm-adjusted {fmt_p(adj)}, "
                         f"{c.n} encoders)")
        lines.append(f"Associations with downstream performance that survive {family}: "
                     f"{'; '.join(parts)}.")
    surviving = {d for d, *_ in kept}
    rest = [d for d in corr.matrix if d not in surviving and d in corr.summary
            and corr.summary[d].mean is not None]
    if rest:
        parts = []
        for d in rest:
            summary = corr.summary[d]
            interval = fmt_interval(summary.mean_ci95, 2)
            parts.append(f"{d} {fmt(summary.mean, 2)}" + (f" {interval}" if interval else ""))
        lead = ("No association between a diagnostic and a downstream task survives "
                f"{family}. Mean rho over tasks" if not kept
                else "Mean rho over tasks of the other diagnostics")
        how = (f" (95% {INTERVALS.get(corr.interval or '', 'interval')})"
               if any(corr.summary[d].mean_ci95 for d in rest) else "")
        lines.append(f"{lead}{how}, not significant after correction: {'; '.join(parts)}.")
    claimed = primary_claims(results)
    if claimed:
        lines = [*claimed, *(exploratory(line) for line in lines)]
    lower = [d for d in corr.summary if not direction.get(d, True)]
    if lower:
        lines.append(f"For {join_names(lower)} lower is better, so a negative rho is agreement.")
    return lines


def correlation_caveats(results: RunResults) -> list[str]:
    """What limits the correlations: few encoders (or too few for any exact p below alpha),
    how many cells reach p < alpha where chance would give some, and the encoders left out
    for want of downstream scores."""
    notes = []
    ns = [cell.n for row in correlations_of(results).matrix.values() for cell in row.values()
          if cell.rho is not None]
    if ns:
        n = max(ns)
        exact = any(cell.p_method == "exact" for row in correlations_of(results).matrix.values()
                    for cell in row.values())
        smallest = 2 / math.factorial(n)
        if exact and smallest >= ALPHA:
            notes.append(f"with {n} encoders the smallest possible exact two-sided p-value is "
                         f"2/{n}! = {smallest:.3f}, so no correlation can reach p < {ALPHA:g}.")
        elif n < MANY_ENCODERS:
            notes.append(f"the correlations rest on only {n} encoders; one encoder more or less "
                         "can change rho a lot.")
        counts = multiplicity(correlations_of(results))
        if counts.significant:
            notes.append(f"{counts.significant} of {counts.tests} correlations have "
                         f"p < {ALPHA:g}, where about {counts.expected:.1f} would by chance; "
                         f"{counts.holm} {'survives' if counts.holm == 1 else 'survive'} "
                         "Holm's correction.")
    missing = missing_downstream(results)
    if missing:
        one = len(missing) == 1
        notes.append(f"{join_names(list(missing))} {'has' if one else 'have'} no downstream "
                     f"scores and {'is' if one else 'are'} left out of the correlations.")
    return notes
