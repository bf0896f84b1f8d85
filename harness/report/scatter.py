"""One scatter plot per diagnostic: each encoder's diagnostic value against its overall
downstream performance, with the correlation in the title.

Downstream tasks are on different scales (accuracy in %, correlations in [-1, 1]), so their raw
mean would weigh the percentage tasks a hundredfold. Each task's scores are standardised across
the encoders that have it (z-scores: mean 0, standard deviation 1), and an encoder's downstream
performance is the mean of its z-scores over the tasks it has.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from harness import compare
from harness.report.model import Section, fmt, fmt_p, scatter_file
from harness.results import RunResults

Y_LABEL = "mean downstream z-score"


def mean_z_scores(downstream: dict[str, dict[str, float]]) -> dict[str, float]:
    """Encoder -> mean over its tasks of its z-score within each task.

    A task's z-scores use the mean and population standard deviation of the encoders that have
    a finite score on it; a task with fewer than two such encoders, or no spread, is left out.
    """
    tasks = dict.fromkeys(t for scores in downstream.values() for t in scores)
    collected: dict[str, list[float]] = {}
    for task in tasks:
        values = {e: float(s[task]) for e, s in downstream.items()
                  if task in s and s[task] is not None and math.isfinite(float(s[task]))}
        if len(values) < 2:
            continue
        mean = sum(values.values()) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values.values()) / len(values))
        if std == 0:
            continue
        for encoder, value in values.items():
            collected.setdefault(encoder, []).append((value - mean) / std)
    return {e: sum(z) / len(z) for e, z in collected.items()}


def diagnostic_values(results: RunResults) -> Mapping[str, Mapping[str, float | None]]:
    """Diagnostic -> encoder -> the value that was correlated: the correlations' own record,
    else (an older results.json) `harness.compare.diagnostic_values`: the published table's,
    or the runs of the decoder the correlations use."""
    return results.correlations.diagnostics or compare.diagnostic_values(results)


def scatter_points(results: RunResults) -> dict[str, dict[str, tuple[float, float]]]:
    """Diagnostic -> encoder -> (diagnostic value, mean downstream z-score), for the diagnostics
    of the correlation matrix and the encoders with both; diagnostics with under two left out."""
    performance = mean_z_scores(results.downstream)
    values = diagnostic_values(results)
    points: dict[str, dict[str, tuple[float, float]]] = {}
    for diagnostic in results.correlations.matrix:
        pairs = {e: (float(v), performance[e]) for e, v in values.get(diagnostic, {}).items()
                 if v is not None and math.isfinite(float(v)) and e in performance}
        if len(pairs) >= 2:
            points[diagnostic] = pairs
    return points


def scatter_title(results: RunResults, diagnostic: str,
                  points: dict[str, tuple[float, float]]) -> str:
    """The plot's title: rho of the plotted values (with p and n) and the diagnostic's mean rho
    over tasks from the correlation summary."""
    from harness.stats import correlate

    method = results.correlations.method
    plotted = correlate({e: x for e, (x, _) in points.items()},
                        {e: y for e, (_, y) in points.items()}, method)
    title = f"{diagnostic}: rho = {fmt(plotted.rho, 2)}"
    if plotted.rho is not None:
        title += f" (p {fmt_p(plotted.p)}, n {plotted.n})"
    summary = results.correlations.summary.get(diagnostic)
    if summary is not None and summary.mean is not None:
        title += f"; mean rho over tasks {summary.mean:.2f}"
    return title


def scatter_figures(results: RunResults) -> dict[str, bytes]:
    """File name -> PNG of each diagnostic's scatter plot."""
    from harness.figures import scatter_png

    return {scatter_file(diagnostic): scatter_png(points, title=scatter_title(
                results, diagnostic, points), xlabel=diagnostic, ylabel=Y_LABEL)
            for diagnostic, points in scatter_points(results).items()}


def scatter_section(results: RunResults, figures: dict[str, bytes]) -> Section | None:
    """The scatter plots, with how the downstream axis was made."""
    shown = [name for name in (scatter_file(d) for d in results.correlations.matrix)
             if name in figures]
    if not shown:
        return None
    method = results.correlations.method
    text = ["Each point is an encoder: its diagnostic value (x) against its overall downstream "
            "performance (y). Downstream tasks are on different scales (accuracy in %, "
            "correlations in [-1, 1]), so y is not a raw mean: each task's scores are "
            "standardised across the encoders that have it (z-scores), and y is the mean of an "
            "encoder's z-scores over the tasks it has. The title gives the "
            f"{method.capitalize()} rho of the plotted points (x against y) and the diagnostic's mean rho "
            "over the tasks taken one by one (the heatmap's mean column); the two need not agree."]
    return Section("Diagnostics against downstream performance", text, figures=shown)
