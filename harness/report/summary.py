"""The report's "What this run shows": a few plain sentences generated from the numbers, never
written by hand. They say which encoders differ significantly on the ranking diagnostic, which
diagnostics track downstream performance, and what to be careful about. Every claim is one
that survives the correction it names (Holm's, over the pairs of a diagnostic, over the
diagnostics of the primary analysis declared in the spec, or over the diagnostic x task
matrix); anything else is stated as not significant after correction. With a primary analysis
its result is the claim on downstream performance, and the matrix's sentences are labelled
exploratory."""

from __future__ import annotations

import math

from harness.analyses.correlation.multiplicity import multiplicity
from harness.analyses.correlation.primary_report import exploratory, primary_claims
from harness.analyses.correlation.report import INTERVALS
from harness.analyses.downstream.report import missing_downstream
from harness.analyses.rankings.report import (
    no_difference_sentence,
    ranking_setup,
    significant_pairs,
    wins,
)
from harness.report.elements import (
    ALPHA,
    EMPTY_WARNING,
    Section,
    fmt,
    fmt_interval,
    fmt_p,
    higher_is_better,
    join_names,
    low_support,
    metric_order,
    min_support,
    mostly_empty,
    pair_name,
    plural,
    rank_by,
    still_improving,
)
from harness.results import DiagnosticRanking, RunResults
from harness.stats.multiple import holm_adjusted

MANY_ENCODERS = 10
"""Below this many encoders a correlation across them is called few-encoder in the caveats."""

LISTED_PAIRS = 6
"""Pairs without a significant difference are named up to this many, else counted."""


def _ranking(results: RunResults) -> tuple[str, str, DiagnosticRanking] | None:
    """(decoder, diagnostic, ranking) of the ranking diagnostic on the correlated decoder."""
    decoder = results.primary_decoder()
    by_diagnostic = (results.rankings or {}).get(decoder or "", {})
    if not by_diagnostic:
        return None
    wanted = rank_by(results)
    diagnostic = wanted if wanted in by_diagnostic else next(iter(by_diagnostic))
    return decoder or "", diagnostic, by_diagnostic[diagnostic]


def ranking_claims(results: RunResults) -> list[str]:
    """Which encoders differ significantly on the ranking diagnostic, and which do not."""
    found = _ranking(results)
    if found is None:
        return []
    decoder, diagnostic, ranking = found
    higher = higher_is_better(results).get(diagnostic, True)
    pairs = significant_pairs(ranking, higher)
    total = len(ranking.differences)
    where = f"On {diagnostic} (decoder {decoder}; {ranking_setup(ranking)})"
    if not total:
        return [f"{where}, no pairwise differences were recorded."]
    if not pairs:
        return [f"{where}, no two encoders differ significantly after Holm's correction: the "
                f"test set does not establish their order on {diagnostic}."]
    direction = "higher" if higher else "lower, which is better,"
    claims = "; ".join(f"{winner} scores significantly {direction} than {join_names(losers)}"
                       for winner, losers in wins(pairs).items())
    sentence = (f"{where}, {len(pairs)} of {plural(total, 'encoder pair')} differ "
                f"significantly after Holm's correction: {claims}.")
    won = set(pairs)
    level = [(d.a, d.b) for d in ranking.differences
             if (d.a, d.b) not in won and (d.b, d.a) not in won]
    if level and len(level) <= LISTED_PAIRS:
        sentence += f" {no_difference_sentence(level)}"
    elif level:
        sentence += f" The other {len(level)} pairs do not differ significantly."
    return [sentence]


def tracking_claims(results: RunResults) -> list[str]:
    """Which diagnostics track downstream performance. With a primary analysis (declared in the
    spec), its result is the claim and comes first; the matrix's sentences follow, labelled
    exploratory. The matrix's: only the diagnostic x task correlations whose p-value survives
    Holm's correction over every test of the matrix; every other diagnostic's mean rho is given
    with its interval across encoders and "not significant after correction"."""
    corr = results.correlations
    direction = higher_is_better(results)
    cells = [(d, t, c) for d, row in corr.matrix.items() for t, c in row.items()
             if c.p is not None and c.rho is not None]
    if not cells:
        return []
    adjusted = [c.p_holm if c.p_holm is not None else p_holm
                for (_, _, c), p_holm in zip(cells, holm_adjusted([c.p for _, _, c in cells]))]
    family = f"Holm's correction over the {plural(len(cells), 'diagnostic x task test')}"
    kept = [(d, t, c, adj) for (d, t, c), adj in zip(cells, adjusted) if adj <= ALPHA]
    lines = []
    if kept:
        parts = []
        for d, t, c, adj in kept:
            agrees = (c.rho > 0) == direction.get(d, True)
            how = f"{c.p_method} p" if c.p_method else "p"
            parts.append(f"{d} {'tracks' if agrees else 'tracks inversely'} {t} (rho "
                         f"{c.rho:.2f}, {how} {fmt_p(c.p)}, Holm-adjusted {fmt_p(adj)}, "
                         f"{c.n} encoders)")
        lines.append(f"Associations with downstream performance that survive {family}: "
                     f"{'; '.join(parts)}.")
    surviving = {d for d, _, _, _ in kept}
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


def caveats(results: RunResults) -> list[str]:
    """What limits the claims: low support, decoders still improving, few encoders, multiple
    comparisons, encoders without downstream scores, failed jobs."""
    notes = []
    threshold = min_support(results)
    low = [f"{name} of {pair_name(run)}" for run in results.runs
           for name in metric_order(results.runs) if low_support(run.metrics.get(name),
                                                                 threshold)]
    if low:
        notes.append(f"{join_names(low)} {'rests' if len(low) == 1 else 'rest'} on fewer than "
                     f"{threshold} sentences (low support).")
    empty = mostly_empty(results.runs)
    if empty:
        notes.append(f"more than {EMPTY_WARNING:.0%} of the outputs of {join_names(empty)} "
                     "are empty: those decoders have not learned to generate, and their scores "
                     "say little about the encoders.")
    improving = [pair_name(run) for run in results.runs if still_improving(run)[0]]
    if improving:
        one = len(improving) == 1
        notes.append(f"the decoder{'' if one else 's'} of {join_names(improving)} "
                     f"{'was' if one else 'were'} still improving when training stopped, so "
                     f"{'its' if one else 'their'} scores may understate the encoder"
                     f"{'' if one else 's'}.")
    ns = [cell.n for row in results.correlations.matrix.values() for cell in row.values()
          if cell.rho is not None]
    if ns:
        n = max(ns)
        exact = any(cell.p_method == "exact" for row in results.correlations.matrix.values()
                    for cell in row.values())
        smallest = 2 / math.factorial(n)
        if exact and smallest >= ALPHA:
            notes.append(f"with {n} encoders the smallest possible exact two-sided p-value is "
                         f"2/{n}! = {smallest:.3f}, so no correlation can reach p < {ALPHA:g}.")
        elif n < MANY_ENCODERS:
            notes.append(f"the correlations rest on only {n} encoders; one encoder more or less "
                         "can change rho a lot.")
        counts = multiplicity(results.correlations)
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
    if results.failures:
        notes.append(f"the jobs of {join_names(list(results.failures))} failed; their results "
                     "are missing.")
    return notes


def summary_section(results: RunResults) -> Section | None:
    """"What this run shows": the claims, then the caveats, as paragraphs."""
    claims = ranking_claims(results) + tracking_claims(results)
    lines = [" ".join(claims)] if claims else []
    notes = caveats(results)
    if notes:
        lines += ["Caveats:", *[f"- {note}" for note in notes]]
    if not lines:
        return None
    return Section("What this run shows", lines)
