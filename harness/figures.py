"""The report's figures as PNG bytes: the Figure-2 heatmap and training curves.

Drawn with matplotlib's object API on an Agg canvas (no pyplot, no global backend state, no
display needed); matplotlib is imported only when a figure is drawn.
"""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.results import Correlations, PairResult

HEATMAP_COLORMAP = "RdBu_r"
"""Diverging: negative correlations blue, positive red, zero white."""

_UNDEFINED_COLOUR = "#d9d9d9"


def _png(figure: Any) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    # No "Software" entry: the same figure gives the same bytes across matplotlib patch versions.
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight",
                   metadata={"Software": None})
    return buffer.getvalue()


def heatmap_png(correlations: Correlations, *, title: str | None = None) -> bytes:
    """Return a PNG heatmap of rho, diagnostics x tasks, as in Kerscher & Eger 2020, Figure 2.

    Undefined cells are grey. With a summary (each diagnostic's mean and min over tasks), two
    more columns follow the tasks, as the paper's text summarises each diagnostic by them.
    Every cell is annotated.
    """
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
    for row in range(len(diagnostics)):
        for column in range(len(columns)):
            value = values[row, column]
            text = "–" if math.isnan(value) else f"{value:.2f}"
            colour = "white" if not math.isnan(value) and abs(value) > 0.6 else "black"
            axes.text(column, row, text, ha="center", va="center", fontsize=8, color=colour)
    if summary and tasks:
        axes.axvline(len(tasks) - 0.5, color="white", linewidth=4)
    figure.colorbar(image, ax=axes, fraction=0.03, pad=0.02, label=f"{method} rho")
    axes.set_title(title or f"{method.capitalize()} correlation of V2S diagnostics with "
                            "downstream tasks across encoders", fontsize=10)
    return _png(figure)


def training_curves_png(runs: list[PairResult]) -> bytes | None:
    """Return a PNG of training and validation loss per epoch for each run, or None if no run
    has a training curve."""
    curves = [(f"{run.encoder} / {run.decoder}", run.train.curve) for run in runs
              if run.train.curve]
    if not curves:
        return None
    from matplotlib import colormaps
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(7.0, 4.0))
    axes = figure.add_subplot()
    palette = colormaps["tab10"]
    for index, (label, points) in enumerate(curves):
        colour = palette(index % 10)
        for key, style, suffix in (("val_loss", "-", "validation"), ("train_loss", "--", "train")):
            pairs = [(p.epoch, getattr(p, key)) for p in points if getattr(p, key) is not None]
            if pairs:
                epochs, losses = zip(*pairs)
                axes.plot(epochs, losses, style, color=colour, marker=".",
                          label=f"{label} ({suffix})")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("epoch")
    axes.set_ylabel("loss (nats per token)")
    axes.set_title("Decoder training curves", fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7, loc="upper right")
    return _png(figure)
