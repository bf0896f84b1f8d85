"""The report's "What this run shows": a few plain sentences generated from the numbers, never
written by hand. They say which encoders differ significantly on the ranking diagnostic, which
diagnostics track downstream performance, and what to be careful about."""

from __future__ import annotations

import math

from harness.report.downstream import missing_downstream
from harness.report.model import (
    ALPHA,
    Section,
    fmt,
    higher_is_better,
    join_names,
    low_support,
    metric_order,
    min_support,
    pair_name,
    plural,
    rank_by,
    still_improving,
)
from harness.report.multiplicity import holm, multiplicity
from harness.report.ranking import ranking_setup, significant_pairs, wins
from harness.results import DiagnosticRanking, RunResults

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
        return [f"{where}, no two encoders differ significantly: the test set does not "
                f"establish their order on {diagnostic}."]
    direction = "higher" if higher else "lower, which is better,"
    claims = "; ".join(f"{winner} scores significantly {direction} than {join_names(losers)}"
                       for winner, losers in wins(pairs).items())
    sentence = (f"{where}, {len(pairs)} of {plural(total, 'encoder pair')} differ "
                f"significantly: {claims}.")
    won = set(pairs)
    level = [f"{d.a} and {d.b}" for d in ranking.differences
             if (d.a, d.b) not in won and (d.b, d.a) not in won]
    if level and len(level) <= LISTED_PAIRS:
        sentence += f" No significant difference between {join_names(level)}."
    elif level:
        sentence += f" The other {len(level)} pairs do not differ significantly."
    return [sentence]


def tracking_claims(results: RunResults) -> list[str]:
    """Which diagnostics track downstream performance: by the mean rho's interval where it was
    recorded, else by mean rho and the per-task tests that survive Holm's correction."""
    corr = results.correlations
    direction = higher_is_better(results)
    means = {d: s for d, s in corr.summary.items() if s.mean is not None}
    if not means:
        return []

    def agreement(diagnostic: str) -> float:  # positive when the diagnostic agrees
        return (1 if direction.get(diagnostic, True) else -1) * float(means[diagnostic].mean or 0)

    ordered = sorted(means, key=agreement, reverse=True)
    tracks, against, unclear, plain = [], [], [], []
    for diagnostic in ordered:
        summary = means[diagnostic]
        interval = summary.mean_ci95
        tasks = f", {plural(summary.tasks, 'task')}" if summary.tasks else ""
        if interval is not None and None not in interval:
            low, high = interval
            text = (f"{diagnostic} (mean rho {summary.mean:.2f}, 95% interval {low:.2f} to "
                    f"{high:.2f}{tasks})")
            sign = 1 if direction.get(diagnostic, True) else -1
            low, high = sorted((sign * float(low), sign * float(high)))  # type: ignore[arg-type]
            (tracks if low > 0 else against if high < 0 else unclear).append(text)
        else:
            plain.append(diagnostic)
    lines = []
    if tracks:
        lines.append(f"Downstream performance is tracked by {join_names(tracks)}: the interval "
                     f"of {'its' if len(tracks) == 1 else 'their'} mean rho over tasks "
                     "excludes 0.")
    if against:
        lines.append(f"It is tracked inversely by {join_names(against)}: the interval of the "
                     "mean rho excludes 0 on the side of disagreement.")
    if unclear:
        lines.append(f"The evidence is inconclusive for {join_names(unclear)}: the interval of "
                     "the mean rho includes 0.")
    if plain:
        lines.append(_without_intervals(results, plain, alone=len(plain) == len(ordered)))
    lower = [d for d in means if not direction.get(d, True)]
    if lower:
        lines.append(f"For {join_names(lower)} lower is better, so a negative rho is agreement.")
    return lines


def _without_intervals(results: RunResults, diagnostics: list[str], alone: bool) -> str:
    """Mean rho per diagnostic with its tests under ALPHA, before and after Holm's correction
    over the whole matrix. `alone`: no diagnostic has an interval, so the first is the best."""
    matrix = results.correlations.matrix
    cells = [(d, cell.p) for d, row in matrix.items() for cell in row.values()
             if cell.p is not None]
    survived = holm([p for _, p in cells])
    parts = []
    kept_any = False
    for diagnostic in diagnostics:
        ps = [(p, kept) for (d, p), kept in zip(cells, survived) if d == diagnostic]
        below = sum(p < ALPHA for p, _ in ps)
        kept = sum(k for _, k in ps)
        kept_any = kept_any or kept > 0
        mean = results.correlations.summary[diagnostic].mean
        parts.append(f"{diagnostic} {fmt(mean, 2)} ({below} of {plural(len(ps), 'task')} with "
                     f"p < {ALPHA:g}, {kept} after Holm's correction)")
    text = ("Mean rho over tasks" + (", no interval recorded" if not alone else "")
            + f": {'; '.join(parts)}.")
    if alone:
        text += f" The highest is {diagnostics[0]}'s"
        text += "." if kept_any else ("; no single correlation of "
                                      + ("these diagnostics" if len(diagnostics) > 1 else "it")
                                      + " survives Holm's correction.")
    elif not kept_any:
        text += " None of these correlations survives Holm's correction."
    return text


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
                     f"{threshold} trials (low support).")
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
