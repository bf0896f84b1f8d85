"""One scatter plot per diagnostic: each encoder's diagnostic value, with its interval, against
its overall downstream performance, with the correlation in the title. Control encoders are
drawn grey and hollow at their own values, and are not part of the correlation.

Downstream tasks are on different scales (accuracy in %, correlations in [-1, 1]), so their raw
mean would weigh the percentage tasks a hundredfold. Each task's scores are standardised across
the encoders that have it (z-scores: mean 0, standard deviation 1), and an encoder's downstream
performance is the mean of its z-scores over the tasks it has.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

from harness.analyses.correlation import stability
from harness.analyses.correlation.results import correlations_of
from harness.report.elements import Section, fmt, fmt_p, scatter_file
from harness.report.plots import ScatterPoint
from harness.results.model import RunResults

Y_LABEL = "mean downstream z-score"


def mean_z_scores(downstream: dict[str, dict[str, float]],
                  controls: Collection[str] = ()) -> dict[str, float]:
    """Encoder -> mean over its tasks of its z-score within each task.

    A task's z-scores use the mean and population standard deviation of the encoders other than
    `controls` that have a finite score on it (controls are placed on that scale, not part of
    it); a task with fewer than two such encoders, or no spread, is left out.
    """
    tasks = dict.fromkeys(t for scores in downstream.values() for t in scores)
    collected: dict[str, list[float]] = {}
    for task in tasks:
        values = {e: float(s[task]) for e, s in downstream.items()
                  if task in s and s[task] is not None and math.isfinite(float(s[task]))}
        studied = [v for e, v in values.items() if e not in controls]
        if len(studied) < 2:
            continue
        mean = sum(studied) / len(studied)
        std = math.sqrt(sum((v - mean) ** 2 for v in studied) / len(studied))
        if std == 0:
            continue
        for encoder, value in values.items():
            collected.setdefault(encoder, []).append((value - mean) / std)
    return {e: sum(z) / len(z) for e, z in collected.items()}


def diagnostic_values(results: RunResults) -> Mapping[str, Mapping[str, float | None]]:
    """Diagnostic -> encoder -> the value that was correlated: the correlations' own record,
    else (an older results.json) `harness.stability.diagnostic_values`: the published table's,
    or the runs of the decoder the correlations use."""
    return correlations_of(results).diagnostics or stability.diagnostic_values(results)


def scatter_points(results: RunResults) -> dict[str, dict[str, ScatterPoint]]:
    """Diagnostic -> encoder -> point (diagnostic value with its 95% interval, mean downstream
    z-score), for the diagnostics of the correlation matrix and the encoders with both, the
    control encoders included and marked; diagnostics with under two encoders left out."""
    controls = set(correlations_of(results).controls)
    performance = mean_z_scores(results.downstream, controls)
    values = diagnostic_values(results)
    decoder = results.primary_decoder()
    scores = {run.encoder: run.metrics for run in results.runs if run.decoder == decoder}
    points: dict[str, dict[str, ScatterPoint]] = {}
    for diagnostic in correlations_of(results).matrix:
        found: dict[str, ScatterPoint] = {}
        for encoder, y in performance.items():
            score = scores.get(encoder, {}).get(diagnostic)
            x = values.get(diagnostic, {}).get(encoder)
            if x is None and score is not None and encoder in controls:
                x = score.value
            if x is None or not math.isfinite(float(x)):
                continue
            found[encoder] = ScatterPoint(x=float(x), y=y, control=encoder in controls,
                                          x_interval=score.ci95 if score else (None, None))
        if sum(not p.control for p in found.values()) >= 2:
            points[diagnostic] = found
    return points


def scatter_title(results: RunResults, diagnostic: str,
                  points: dict[str, ScatterPoint]) -> str:
    """The plot's title: rho of the plotted encoders' values, controls left out (with p and
    n), and the diagnostic's mean rho over tasks from the correlation summary."""
    from harness.stats import correlate

    method = correlations_of(results).method
    studied = {e: p for e, p in points.items() if not p.control}
    plotted = correlate({e: p.x for e, p in studied.items()},
                        {e: p.y for e, p in studied.items()}, method)
    title = f"{diagnostic}: rho = {fmt(plotted.rho, 2)}"
    if plotted.rho is not None:
        title += f" (p {fmt_p(plotted.p)}, n {plotted.n})"
    summary = correlations_of(results).summary.get(diagnostic)
    if summary is not None and summary.mean is not None:
        title += f"; mean rho over tasks {summary.mean:.2f}"
    return title


def scatter_figures(results: RunResults) -> dict[str, bytes]:
    """File name -> PNG of each diagnostic's scatter plot."""
    from harness.report.plots import scatter_png

    return {scatter_file(diagnostic): scatter_png(points, title=scatter_title(
                results, diagnostic, points), xlabel=diagnostic, ylabel=Y_LABEL)
            for diagnostic, points in scatter_points(results).items()}


def scatter_section(results: RunResults, figures: dict[str, bytes]) -> Section | None:
    """The scatter plots, with how the downstream axis was made."""
    shown = [name for name in (scatter_file(d) for d in correlations_of(results).matrix)
             if name in figures]
    if not shown:
        return None
    method = correlations_of(results).method
    text = ["Each point is an encoder: its diagnostic value (x) against its overall downstream "
            "performance (y). Downstream tasks are on different scales (accuracy in %, "
            "correlations in [-1, 1]), so y is not a raw mean: each task's scores are "
            "standardised across the encoders that have it (z-scores), and y is the mean of an "
            "encoder's z-scores over the tasks it has. The title gives the "
            f"{method.capitalize()} rho of the plotted points (x against y) and the diagnostic's mean rho "
            "over the tasks taken one by one (the heatmap's mean column); the two need not agree. "
            "Bars are the diagnostic's 95% intervals (over test sentences). Control encoders, "
            "grey and hollow, are drawn for reference and left out of rho and of the z-scores' "
            "mean and spread."]
    return Section("Diagnostics against downstream performance", text, figures=shown)
