"""How the diagnostics change with the decoders' training data (the spec's `curve`): a figure
with one panel per diagnostic and one line per encoder over the number of training sentences,
and a table of every point with its interval: whether a small run predicts a larger one, and
whether the encoders' order changes with data."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.report.elements import (
    FLAG,
    Section,
    Table,
    digits_for,
    excluded_controls,
    fmt,
    fmt_interval,
    join_names,
    plural,
    split_silent,
)
from harness.results.model import PairResult, RunResults

if TYPE_CHECKING:
    from harness.report.plots import Curve

SIZES_FILE = "training-size.png"


def size_runs(results: RunResults) -> list[PairResult]:
    """The pairs of the first decoder with a learning curve (the one correlated, normally)."""
    curved = [run for run in results.runs if run.by_size]
    if not curved:
        return []
    decoder = curved[0].decoder
    return [run for run in curved if run.decoder == decoder]


def size_panels(results: RunResults, *, silent: bool = False) -> dict[str, dict[str, Curve]]:
    """Diagnostic -> encoder -> (training sentences, value, low, high) per point; panels with
    nothing to show (zero or undefined at every size for every encoder) left out, or with
    `silent`, only those."""
    panels: dict[str, dict[str, Curve]] = {}
    for run in size_runs(results):
        for point in run.by_size or []:
            for metric, score in point.metrics.items():
                panels.setdefault(metric, {}).setdefault(run.encoder, []).append(
                    (float(point.sentences), score.value, *score.ci95))
    shown, left_out = split_silent(panels, value=1)
    return {name: panels[name] for name in left_out} if silent else shown


def size_figures(results: RunResults) -> dict[str, bytes]:
    """{SIZES_FILE: PNG} when the run has learning curves."""
    panels = size_panels(results)
    if not panels:
        return {}
    from harness.report.plots import curves_png

    return {SIZES_FILE: curves_png(
        panels, xlabel="training sentences (log scale)", log_x=True,
        dashed=frozenset(excluded_controls(results)),
        title="Diagnostics by the decoder's training-set size (95% intervals)")}


def sizes_section(results: RunResults, figures: dict[str, bytes]) -> Section | None:
    """The learning curves: the figure and a table of every point."""
    runs = size_runs(results)
    if not runs:
        return None
    sizes = sorted({p.sentences for run in runs for p in run.by_size or []})
    text = [f"The decoder `{runs[0].decoder}` of each encoder was also trained on the first "
            f"{', '.join(f'{n:,}' for n in sizes[:-1])} training sentences (`curve."
            f"train_sizes`; the last column is the whole split, {sizes[-1]:,}), each with the "
            "decoder's seeds and settings, and scored on the same test sentences. Intervals "
            "are 95%, over test sentences (and seeds, where the decoder has several; with one, "
            f"training variance is not in them). {FLAG} marks a point whose decoder was still "
            "improving when its training stopped: it understates what that much data gives."]
    if controls := excluded_controls(results):
        text.append(f"Controls ({', '.join(controls)}) are drawn grey and dashed.")
    silent = list(size_panels(results, silent=True))
    if silent and SIZES_FILE in figures:
        text.append(f"Left out of the figure, being zero or undefined at every size for every "
                    f"encoder: {join_names(silent)} (the table has them).")
    rows = []
    for run in runs:
        points = {p.sentences: p for p in run.by_size or []}
        for metric in run.metrics:
            digits = digits_for(run.metrics[metric].higher_is_better)
            cells = []
            for size in sizes:
                point = points.get(size)
                score = point.metrics.get(metric) if point is not None else None
                if score is None:
                    cells.append("–")
                    continue
                flag = f" {FLAG}" if point.train.still_improving else ""
                cells.append(f"{fmt(score.value, digits)} "
                             f"{fmt_interval(score.ci95, digits)}{flag}".strip())
            rows.append([run.encoder, metric, *cells])
    header = ["encoder", "diagnostic", *[f"{n:,}" for n in sizes]]
    caption = f"Each diagnostic by training sentences ({plural(len(runs), 'encoder')})"
    tables = [Table(caption, header, rows)]
    fits = fit_rows(runs)
    if fits:
        text.append("Power-law fits, value = c N^b by least squares on log value against log "
                    "N over the points above 0 (at least three: no two-point extrapolation); "
                    "b's 95% interval is the regression's t interval on m - 2 degrees of "
                    "freedom, which few points make wide (`harness.stats.curves`).")
        tables.append(Table("Growth with training sentences: the exponent b",
                            ["encoder", "diagnostic", "points", "b", "b's 95% interval"], fits))
    return Section("Training-set size", text,
                   [SIZES_FILE] if SIZES_FILE in figures else [], tables)


def fit_rows(runs: list[PairResult]) -> list[list[str]]:
    """Per pair and diagnostic with a power-law fit (`fit_power_law`), its exponent and
    interval."""
    from harness.stats.curves import fit_power_law

    rows = []
    for run in runs:
        for metric in run.metrics:
            points = [(p.sentences, p.metrics[metric].value) for p in run.by_size or []
                      if metric in p.metrics and p.metrics[metric].value is not None]
            fit = fit_power_law([n for n, _ in points], [v for _, v in points])
            if fit is not None:
                rows.append([run.encoder, metric, str(fit.points), f"{fit.slope:.2f}",
                             fmt_interval(fit.slope_ci95, 2)])
    return rows
