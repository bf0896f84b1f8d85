"""The report's plotting primitives, as PNG bytes: scatter plots with labelled points, training
curves and other small multiples (the analyses draw their figures with them; the correlation
heatmap is the correlation analysis's own, `harness.analyses.correlation.heatmap`).

Drawn with matplotlib's object API on an Agg canvas (no pyplot, no global backend state, no
display needed); matplotlib is imported only when a figure is drawn.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.results.model import CurvePoint, PairResult

_SINGLE_COLOUR = "#1f4e79"
"""The colour of a pair trained with one seed."""

SCATTER_COLOUR = "#6a3d9a"
"""The scatter plots' points: a purple no other figure uses."""

PANEL_COLUMNS = 4
"""Training-curve panels per row."""


def png(figure: Any) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    # No "Software" entry: the same figure gives the same bytes across matplotlib patch versions.
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight",
                   metadata={"Software": None})
    return buffer.getvalue()


@dataclass(frozen=True)
class ScatterPoint:
    """One encoder in a scatter plot: x with its 95% interval (None ends: none drawn), y, and
    whether it is a control (drawn grey and hollow, left out of the plot's rho)."""

    x: float
    y: float
    x_interval: tuple[float | None, float | None] = (None, None)
    control: bool = False


CONTROL_COLOUR = "#8c8c8c"
"""Controls in every figure: a grey no encoder uses."""

_LABEL_OFFSETS = ((5, 4), (5, -11), (-5, 4), (-5, -11), (5, 14), (5, -21), (-5, 14),
                  (-5, -21), (12, -3), (-12, -3))
"""Where a point's label may go, in points from the point: tried in order until one overlaps
no label placed before it and no other point."""


def scatter_figure(points: dict[str, ScatterPoint], *, title: str, xlabel: str,
                   ylabel: str) -> Any:
    """A scatter plot of encoder -> point: encoders in `SCATTER_COLOUR` with their x interval
    as a bar, controls grey and hollow, each point labelled where its label collides with no
    other label or point."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(4.6, 3.6))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for point in points.values():
        colour = CONTROL_COLOUR if point.control else SCATTER_COLOUR
        low, high = point.x_interval
        if low is not None and high is not None:
            axes.errorbar([point.x], [point.y], xerr=[[max(point.x - low, 0.0)],
                                                      [max(high - point.x, 0.0)]],
                          fmt="none", ecolor=colour, elinewidth=1, capsize=2, alpha=0.7,
                          zorder=2)
        axes.scatter([point.x], [point.y], s=28, zorder=3, linewidths=1.2,
                     facecolors="none" if point.control else colour, edgecolors=colour)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_title(title, fontsize=9)
    axes.grid(alpha=0.3)
    axes.margins(0.15)
    _place_labels(figure, axes, points)
    return figure


def _place_labels(figure: Any, axes: Any, points: dict[str, ScatterPoint]) -> None:
    """Label each point at the first of `_LABEL_OFFSETS` whose text box overlaps no earlier
    label and no other point's marker; the least overlapping one when none is free."""
    figure.canvas.draw()  # fixes the axis limits, so display positions are final
    renderer = figure.canvas.get_renderer()
    to_display = axes.transData.transform
    markers = {name: to_display((p.x, p.y)) for name, p in points.items()}
    placed: list[Any] = []
    for name, point in sorted(points.items(), key=lambda item: (item[1].x, item[1].y)):
        text = f"{name} (control)" if point.control else name
        best, best_overlap = None, math.inf
        for dx, dy in _LABEL_OFFSETS:
            label = axes.annotate(text, (point.x, point.y), textcoords="offset points",
                                  xytext=(dx, dy), fontsize=8,
                                  ha="left" if dx > 0 else "right",
                                  color=CONTROL_COLOUR if point.control else "black")
            box = label.get_window_extent(renderer).expanded(1.05, 1.1)
            overlap = sum(_area(box, other) for other in placed) + sum(
                _area(box, _marker_box(xy)) for other, xy in markers.items() if other != name)
            if overlap < best_overlap:
                if best is not None:
                    best.remove()
                best, best_overlap = label, overlap
            else:
                label.remove()
            if overlap == 0:
                break
        placed.append(best.get_window_extent(renderer))


def _marker_box(xy: Any) -> Any:
    from matplotlib.transforms import Bbox

    x, y = xy
    return Bbox.from_extents(x - 4, y - 4, x + 4, y + 4)


def _area(a: Any, b: Any) -> float:
    """The overlap of two display boxes, in square pixels."""
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return max(width, 0.0) * max(height, 0.0)


def scatter_png(points: dict[str, ScatterPoint], *, title: str, xlabel: str,
                ylabel: str) -> bytes:
    """Return a PNG scatter plot of encoder -> point (`scatter_figure`)."""
    return png(scatter_figure(points, title=title, xlabel=xlabel, ylabel=ylabel))


def _seed_curves(run: PairResult) -> list[tuple[int | None, list[CurvePoint]]]:
    """(seed, curve) of each of a pair's decoders that recorded a curve."""
    if run.seeds:
        return [(seed.seed, seed.train.curve) for seed in run.seeds if seed.train.curve]
    return [(None, run.train.curve)] if run.train.curve else []


def training_curves_figure(runs: list[PairResult]) -> Any | None:
    """Small multiples of training and validation loss per epoch: one panel per encoder x
    decoder pair with a curve, one colour per seed, the legend outside the panels; None when no
    pair recorded a curve."""
    panels = [(run, curves) for run in runs if (curves := _seed_curves(run))]
    if not panels:
        return None
    from matplotlib import colormaps
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    columns = min(PANEL_COLUMNS, len(panels))
    rows = math.ceil(len(panels) / columns)
    figure = Figure(figsize=(3.0 * columns + 0.4, 2.3 * rows + 0.8), layout="constrained")
    grid = figure.subplots(rows, columns, sharey=True, squeeze=False)
    palette = colormaps["tab10"]
    seeds: dict[int, Any] = {}
    for index, (run, curves) in enumerate(panels):
        axes = grid[index // columns][index % columns]
        for seed, points in curves:
            colour = (_SINGLE_COLOUR if seed is None
                      else seeds.setdefault(seed, palette(len(seeds) % 10)))
            for key, style in (("val_loss", "-"), ("train_loss", "--")):
                pairs = [(p.epoch, getattr(p, key)) for p in points
                         if getattr(p, key) is not None]
                if pairs:
                    epochs, losses = zip(*pairs)
                    axes.plot(epochs, losses, style, color=colour, marker=".", markersize=3)
        improving = run.train.still_improving or any(s.train.still_improving
                                                     for s in run.seeds or [])
        axes.set_title(f"{run.encoder} / {run.decoder}"
                       + ("\n(still improving)" if improving else ""), fontsize=8,
                       color="#b35900" if improving else "black")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.tick_params(labelsize=7)
        axes.grid(alpha=0.3)
        if index % columns == 0:
            axes.set_ylabel("loss (nats/token)", fontsize=8)
        if index // columns == rows - 1 or index + columns >= len(panels):
            axes.set_xlabel("epoch", fontsize=8)
    for index in range(len(panels), rows * columns):
        grid[index // columns][index % columns].set_visible(False)
    handles = [Line2D([], [], color="black", linestyle="-", label="validation"),
               Line2D([], [], color="black", linestyle="--", label="train")]
    if seeds:
        handles += [Line2D([], [], color=colour, linewidth=3, label=f"seed {seed}")
                    for seed, colour in seeds.items()]
    figure.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 6),
                  fontsize=8, frameon=False)
    figure.suptitle("Decoder training curves", fontsize=10)
    return figure


def training_curves_png(runs: list[PairResult]) -> bytes | None:
    """Return a PNG of the training curves as small multiples (`training_curves_figure`), or
    None if no run has a training curve."""
    figure = training_curves_figure(runs)
    return None if figure is None else png(figure)


Series = list[tuple[float | None, float | None, float | None]]
"""One encoder's (value, interval low, interval high) per bin; None where undefined."""


def length_figure(bins: list[str], panels: dict[str, dict[str, Series]], *,
                  floor: str | None = None, title: str = "",
                  share: dict[str, str] | None = None) -> Any:
    """Small multiples of diagnostics per bin of reference length: one panel per entry of
    `panels` (title -> encoder -> `Series`), x the `bins` (their labels), one line per encoder
    with its 95% intervals as error bars (nudged apart so they do not hide each other), the
    `floor` encoder grey and dashed, the legend outside the panels. Panels `share` maps to the
    same group (their diagnostic) get one y-range, so equal heights mean equal values."""
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    encoders = list(dict.fromkeys(e for series in panels.values() for e in series))
    columns = min(PANEL_COLUMNS, len(panels))
    rows = math.ceil(len(panels) / columns)
    figure = Figure(figsize=(3.2 * columns + 1.8, 2.6 * rows + 0.8), layout="constrained")
    grid = figure.subplots(rows, columns, squeeze=False)
    palette = colormaps["tab10"]
    colours = {e: "#7f7f7f" if e == floor else palette(i % 10) for i, e in enumerate(encoders)}
    width = 0.3 / max(1, len(encoders))
    for index, (name, series) in enumerate(panels.items()):
        axes = grid[index // columns][index % columns]
        for number, (encoder, points) in enumerate(series.items()):
            shift = (number - (len(series) - 1) / 2) * width
            x = [b + shift for b in range(len(points))]
            y = [math.nan if v is None else v for v, _, _ in points]
            low = [0.0 if v is None or lo is None else max(0.0, v - lo) for v, lo, _ in points]
            high = [0.0 if v is None or hi is None else max(0.0, hi - v) for v, _, hi in points]
            axes.errorbar(x, y, yerr=[low, high], color=colours[encoder], marker="o",
                          markersize=3, linewidth=1.2, capsize=2, elinewidth=0.8,
                          linestyle="--" if encoder == floor else "-", label=encoder)
        if all(v is None for points in series.values() for v, _, _ in points):
            axes.text(0.5, 0.5, "undefined in every bin", transform=axes.transAxes,
                      ha="center", va="center", fontsize=8, color="#7f7f7f")
            axes.set_yticks([])
        axes.set_xticks(range(len(bins)), labels=bins, fontsize=7)
        axes.tick_params(labelsize=7)
        axes.set_title(name, fontsize=9)
        axes.grid(alpha=0.3)
        if index // columns == rows - 1 or index + columns >= len(panels):
            axes.set_xlabel("reference length (tokens)", fontsize=8)
    for index in range(len(panels), rows * columns):
        grid[index // columns][index % columns].set_visible(False)
    _share_y([grid[i // columns][i % columns] for i in range(len(panels))],
             [(share or {}).get(name, name) for name in panels])
    legend: dict[str, Any] = {}
    for axes in grid.flat:
        for handle, label in zip(*axes.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    figure.legend(list(legend.values()), list(legend), loc="outside right upper", fontsize=8,
                  frameon=False)
    figure.suptitle(title or "Diagnostics by reference length", fontsize=10)
    return figure


def _share_y(axes: list[Any], groups: list[str]) -> None:
    """Give the axes of each group the union of their y-ranges."""
    for group in set(groups):
        members = [a for a, g in zip(axes, groups) if g == group]
        lows, highs = zip(*(a.get_ylim() for a in members))
        for a in members:
            a.set_ylim(min(lows), max(highs))


def length_png(bins: list[str], panels: dict[str, dict[str, Series]], *,
               floor: str | None = None, title: str = "",
               share: dict[str, str] | None = None) -> bytes:
    """Return a PNG of the diagnostics per length bin (`length_figure`)."""
    return png(length_figure(bins, panels, floor=floor, title=title, share=share))


Curve = list[tuple[float, float | None, float | None, float | None]]
"""One encoder's (x, value, interval low, interval high) per point; None where undefined."""


def curves_figure(panels: dict[str, dict[str, Curve]], *, xlabel: str, title: str,
                  log_x: bool = False, dashed: frozenset[str] = frozenset()) -> Any:
    """Panels side by side (title -> encoder -> `Curve`), one line per encoder over x (the
    noise scale, the training-set size), intervals as error bars where given, the `dashed`
    encoders (controls) grey and dashed; the legend below the panels (a legend beside two
    short panels would outgrow them with many encoders)."""
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    encoders = list(dict.fromkeys(e for curves in panels.values() for e in curves))
    legend_rows = math.ceil(len(encoders) / 5)
    figure = Figure(figsize=(max(4.2 * len(panels), 7.5), 3.0 + 0.25 * legend_rows),
                    layout="constrained")
    grid = figure.subplots(1, len(panels), squeeze=False)
    palette = colormaps["tab10"]
    for axes, (name, curves) in zip(grid[0], panels.items()):
        for encoder, points in curves.items():
            x = [p[0] for p in points]
            y = [math.nan if p[1] is None else p[1] for p in points]
            low = [0.0 if v is None or lo is None else max(0.0, v - lo) for _, v, lo, _ in points]
            high = [0.0 if v is None or hi is None else max(0.0, hi - v) for _, v, _, hi in points]
            control = encoder in dashed
            axes.errorbar(x, y, yerr=[low, high],
                          color="#7f7f7f" if control else palette(encoders.index(encoder) % 10),
                          marker="o", markersize=3, linewidth=1.2, capsize=2, elinewidth=0.8,
                          linestyle="--" if control else "-", label=encoder)
        if log_x:
            axes.set_xscale("log")
        axes.set_ylim(bottom=0.0)
        axes.set_title(name, fontsize=9)
        axes.set_xlabel(xlabel, fontsize=8)
        axes.tick_params(labelsize=7)
        axes.grid(alpha=0.3)
    handles, labels = grid[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 5),
                  fontsize=8, frameon=False)
    figure.suptitle(title, fontsize=10)
    return figure


def curves_png(panels: dict[str, dict[str, Curve]], *, xlabel: str, title: str,
               log_x: bool = False, dashed: frozenset[str] = frozenset()) -> bytes:
    """Return a PNG of curves over x (`curves_figure`): the noise-robustness curves, the
    learning curves."""
    return png(curves_figure(panels, xlabel=xlabel, title=title, log_x=log_x, dashed=dashed))
