"""Diagnostics by reference length: a figure (one line per encoder across the length bins, one
panel per diagnostic) and a table of every pair's scores per bin with their intervals."""

from __future__ import annotations

from typing import Any

from harness.analyses.lengths.results import LengthBin, LengthBreakdown
from harness.report.elements import (
    Section,
    Table,
    digits_for,
    fmt,
    fmt_interval,
    join_names,
    plural,
    split_silent,
)
from harness.results.model import MetricScore, RunResults

LENGTHS_FILE = "lengths.png"


def bin_label(length_bin: LengthBin) -> str:
    """"≤4", "5–7", "8", "≥11" tokens; "all" for a single bin."""
    low, high = length_bin.low, length_bin.high
    if low is None:
        return "all" if high is None else f"≤{high}"
    if high is None:
        return f"≥{low}"
    return str(low) if low == high else f"{low}–{high}"


def _decoders(lengths: LengthBreakdown) -> list[str]:
    return list(dict.fromkeys(run.decoder for run in lengths.runs))


Panels = dict[str, dict[str, list[tuple[float | None, float | None, float | None]]]]
"""Panel title -> encoder -> (value, low, high) per bin."""


def length_panels(results: RunResults) -> tuple[Panels, dict[str, str]]:
    """The figure's panels, one per decoder and diagnostic (titled by the diagnostic alone when
    the run has one decoder), and each panel's diagnostic (panels of one diagnostic share their
    y-axis). Panels with nothing to show (zero or undefined in every bin for every encoder) are
    left out: `silent_panels` names them."""
    found = _all_panels(results)
    panels, _ = split_silent({title: series for title, _, series in found}, value=0)
    return panels, {title: metric for title, metric, _ in found if title in panels}


def silent_panels(results: RunResults) -> list[str]:
    """The panels `length_panels` leaves out."""
    return split_silent({title: series for title, _, series in _all_panels(results)}, 0)[1]


def _all_panels(results: RunResults) -> list[tuple[str, str, dict[str, Any]]]:
    lengths = results.lengths
    if lengths is None:
        return []
    decoders = _decoders(lengths)
    found = []
    for decoder in decoders:
        runs = [run for run in lengths.runs if run.decoder == decoder]
        for metric in dict.fromkeys(m for run in runs for m in run.metrics):
            title = metric if len(decoders) == 1 else f"{decoder}: {metric}"
            found.append((title, metric, {run.encoder: [(s.value, *s.ci95)
                                                        for s in run.metrics[metric]]
                                          for run in runs if metric in run.metrics}))
    return found


def length_figures(results: RunResults) -> dict[str, bytes]:
    """{LENGTHS_FILE: PNG} when the run broke its diagnostics down into two or more bins."""
    lengths = results.lengths
    if lengths is None or len(lengths.bins) < 2 or not lengths.runs:
        return {}
    from harness.report.plots import length_png

    floor = results.floor.encoder if results.floor is not None else None  # None: no floor encoder
    bins = [f"{bin_label(b)}\nn={b.n}" for b in lengths.bins]
    panels, diagnostic = length_panels(results)
    if not panels:
        return {}
    return {LENGTHS_FILE: length_png(bins, panels, floor=floor, share=diagnostic)}


def _cell(score: MetricScore, length_bin: LengthBin) -> str:
    """value [low, high], and the support when it is not the bin's sentences (id-perm)."""
    if score.value is None:
        return "–"
    digits = digits_for(score.higher_is_better)
    text = f"{fmt(score.value, digits)} {fmt_interval(score.ci95, digits)}".rstrip()
    if score.support is not None and score.support != length_bin.n:
        text += f" n={score.support}"
    return text


def _how(lengths: LengthBreakdown, sentences: int) -> str:
    if not lengths.auto:
        return "the bins are those of `breakdown.length_bins`"
    least = plural(lengths.least or 0, "sentence")
    if len(lengths.bins) < 2:
        return (f"the {plural(sentences, 'test sentence')} are too few to split into bins of "
                f"at least {least} (`breakdown.length_bins: auto`)")
    return ("the bins were chosen from the test set's length quantiles, each holding at least "
            f"{least} (`breakdown.length_bins: auto`)")


def lengths_section(results: RunResults, figures: dict[str, bytes]) -> Section | None:
    """Every pair's diagnostics per bin of reference length, with the figure."""
    lengths = results.lengths
    if lengths is None or not lengths.runs:
        return None
    sentences = sum(b.n for b in lengths.bins)
    text = ["Each diagnostic recomputed on the test sentences of each bin of reference length, "
            "counted in whitespace tokens of the normalised reference (the tokens "
            f"`corpus.max_tokens` counts); {_how(lengths, sentences)}. A corpus-level score "
            "(BLEU) is recomputed from the bin's summed sufficient statistics, not averaged "
            "over sentences; its interval is got as in the diagnostics table, on the bin's "
            "sentences (exact for a rate, a bootstrap otherwise). n in the header is the bin's "
            "sentences; n in a cell, the trials of a rate counted otherwise (id-perm: the "
            "permutations found)."]
    empty = [bin_label(b) for b in lengths.bins if b.n == 0]
    if empty:
        text.append(f"No test sentence falls in {join_names(empty)}: – there.")
    if LENGTHS_FILE in figures:
        text.append("The figure draws one line per encoder across the bins, with 95% intervals"
                    + (f"; the floor encoder {results.floor.encoder} dashed grey"
                       if results.floor is not None and results.floor.encoder else "")
                    + ". Panels of one diagnostic share their y-axis.")
        silent = silent_panels(results)
        if silent:
            text.append(f"Left out of the figure, being zero or undefined in every bin for "
                        f"every encoder: {join_names(silent)} (the table has them).")
    header = ["decoder", "diagnostic", "encoder",
              *[f"{bin_label(b)} (n={b.n})" for b in lengths.bins]]
    rows = []
    for decoder in _decoders(lengths):
        runs = [run for run in lengths.runs if run.decoder == decoder]
        for metric in dict.fromkeys(m for run in runs for m in run.metrics):
            rows += [[decoder, metric, run.encoder,
                      *[_cell(score, b) for score, b in zip(run.metrics[metric], lengths.bins)]]
                     for run in runs if metric in run.metrics]
    return Section("Diagnostics by reference length", text,
                   figures=[LENGTHS_FILE] if LENGTHS_FILE in figures else [],
                   tables=[Table("", header, rows)])
