"""The correlation heatmap: rho of every diagnostic x task, as in Kerscher & Eger (2020),
Figure 2. Drawn with matplotlib's object API (`harness.report.plots`), imported on first use."""

from __future__ import annotations

import math
from typing import Any

from harness.analyses.correlation.results import Correlations
from harness.report.elements import ALPHA
from harness.report.plots import png

HEATMAP_COLORMAP = "RdBu_r"
"""Diverging: negative correlations blue, positive red, zero white."""

_UNDEFINED_COLOUR = "#d9d9d9"

SIGNIFICANCE = ALPHA
"""A heatmap cell whose p-value is under this is marked "*" (uncorrected), as in the report's
tables."""

def heatmap_figure(correlations: Correlations, *, title: str | None = None) -> Any:
    """The heatmap of rho, diagnostics x tasks, as a matplotlib Figure (see `heatmap_png`)."""
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    matrix, summary, method = correlations.matrix, correlations.summary, correlations.method
    diagnostics = list(matrix)
    tasks = list(dict.fromkeys(task for row in matrix.values() for task in row))
    columns = tasks + (["mean", "min"] if summary else [])

    def cell(diagnostic: str, column: str) -> float:
        value: float | None = None
        if column in tasks:
            if column in matrix[diagnostic]:
                value = matrix[diagnostic][column].rho
        elif diagnostic in summary:
            value = getattr(summary[diagnostic], column)
        return math.nan if value is None else float(value)

    def marked(diagnostic: str, column: str) -> bool:
        found = matrix[diagnostic].get(column) if column in tasks else None
        return found is not None and found.p is not None and found.p < SIGNIFICANCE

    values = np.array([[cell(d, c) for c in columns] for d in diagnostics], dtype=float)
    width = max(4.0, 0.62 * len(columns) + 2.2)
    height = max(2.2, 0.5 * len(diagnostics) + 1.6)
    figure = Figure(figsize=(width, height))
    axes = figure.add_subplot()
    colormap = colormaps[HEATMAP_COLORMAP].with_extremes(bad=_UNDEFINED_COLOUR)
    image = axes.imshow(np.ma.masked_invalid(values), cmap=colormap, vmin=-1.0, vmax=1.0,
                        aspect="auto")
    axes.set_xticks(range(len(columns)), labels=columns, rotation=45, ha="right")
    axes.set_yticks(range(len(diagnostics)), labels=diagnostics)
    any_mark = False
    for row, diagnostic in enumerate(diagnostics):
        for column, name in enumerate(columns):
            value = values[row, column]
            text = "–" if math.isnan(value) else f"{value:.2f}"
            if marked(diagnostic, name):
                text += "*"
                any_mark = True
            colour = "white" if not math.isnan(value) and abs(value) > 0.6 else "black"
            axes.text(column, row, text, ha="center", va="center", fontsize=8, color=colour)
    if summary and tasks:
        axes.axvline(len(tasks) - 0.5, color="white", linewidth=4)
    figure.colorbar(image, ax=axes, fraction=0.03, pad=0.02, label=f"{method} rho")
    heading = title or (f"{method.capitalize()} correlation of V2S diagnostics with "
                        "downstream tasks across encoders")
    if any_mark:
        heading += f"\n* p < {SIGNIFICANCE:g}, uncorrected for multiple tests"
    axes.set_title(heading, fontsize=10)
    return figure


def heatmap_png(correlations: Correlations, *, title: str | None = None) -> bytes:
    """Return a PNG heatmap of rho, diagnostics x tasks, as in Kerscher & Eger 2020, Figure 2.

    Undefined cells are grey. With a summary (each diagnostic's mean and min over tasks), two
    more columns follow the tasks, as the paper's text summarises each diagnostic by them.
    Every cell is annotated; a task cell with p < 0.05 (uncorrected) carries a "*".
    """
    return png(heatmap_figure(correlations, title=title))


