"""The report's "What this run shows": a few plain sentences generated from the numbers, never
written by hand. The analyses give their claims and caveats (an analysis's optional `claims`
and `caveats`, in the run's order of the analyses: the rankings say which encoders differ
significantly on the ranking diagnostic, the correlation which diagnostics track downstream
performance); the report adds what to be careful about in any run. Every claim is one
that survives the correction it names (Holm's, over the pairs of a diagnostic, over the
diagnostics of the primary analysis declared in the spec, or over the diagnostic x task
matrix); anything else is stated as not significant after correction. With a primary analysis
its result is the claim on downstream performance, and the matrix's sentences are labelled
exploratory."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.report.elements import (
    EMPTY_WARNING,
    Section,
    join_names,
    low_support,
    metric_order,
    min_support,
    mostly_empty,
    pair_name,
    still_improving,
)
from harness.results.model import RunResults


def claims(results: RunResults, analyses: Sequence[Any]) -> list[str]:
    """Every analysis's claims (its `claims(results)`, when it has one), in order."""
    return [line for analysis in analyses if hasattr(analysis, "claims")
            for line in analysis.claims(results)]


def caveats(results: RunResults, analyses: Sequence[Any] = ()) -> list[str]:
    """What limits the claims: low support, empty outputs, decoders still improving, then
    each analysis's caveats (its `caveats(results)`, in order), then failed jobs."""
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
    notes += [note for analysis in analyses if hasattr(analysis, "caveats")
              for note in analysis.caveats(results)]
    if results.failures:
        notes.append(f"the jobs of {join_names(list(results.failures))} failed; their results "
                     "are missing.")
    return notes


def summary_section(results: RunResults, analyses: Sequence[Any] = ()) -> Section | None:
    """"What this run shows": the analyses' claims, then the caveats, as paragraphs."""
    found = claims(results, analyses)
    lines = [" ".join(found)] if found else []
    notes = caveats(results, analyses)
    if notes:
        lines += ["Caveats:", *[f"- {note}" for note in notes]]
    if not lines:
        return None
    return Section("What this run shows", lines)
