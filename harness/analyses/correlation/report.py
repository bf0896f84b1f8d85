"""The correlation of each diagnostic with each downstream task across encoders (Kerscher &
Eger 2020, Figure 2): the heatmap, rho with its bootstrap interval and significance mark, the
p-values, and the note on multiple comparisons."""

from __future__ import annotations

from harness.analyses.correlation.multiplicity import multiplicity
from harness.analyses.correlation.results import CorrelationCell, correlations_of
from harness.report.elements import (
    ALPHA,
    HEATMAP_FILE,
    Section,
    Table,
    fmt,
    fmt_interval,
    fmt_p,
    fmt_span,
    join_names,
)
from harness.results.model import RunResults

P_METHODS = {"exact": "exact two-sided permutation p-values (all n! pairings)",
             "scipy": "scipy's p-values"}

INTERVALS = {"fisher-z": "Fisher-z interval across encoders (for Spearman variance "
                         "(1 + rho^2/2)/(n-3), Bonett & Wright 2000, and Student's t with n-2 "
                         "degrees of freedom)"}
"""How a correlation's interval was got (`Correlations.interval`), in words."""


def _reference_points(results: RunResults) -> str:
    """Each control's rank-by diagnostic and downstream scores, as a phrase."""
    corr = correlations_of(results)
    by = corr.rank_by
    parts = []
    for control in corr.controls:
        value = next((run.metrics[by].value for run in results.runs
                      if run.encoder == control and run.decoder == corr.decoder
                      and by in run.metrics), None)
        tasks = results.downstream.get(control, {})
        downstream = ", ".join(f"{task} {fmt(score, 1)}" for task, score in tasks.items())
        parts.append(f"{control}: {by} {fmt(value, 1)}"
                     + (f"; {downstream}" if downstream else ""))
    return "; ".join(parts)


def mark(cell: CorrelationCell | None, alpha: float = ALPHA) -> str:
    """"*" for a correlation with p < `alpha` (uncorrected), "" otherwise."""
    return "*" if cell is not None and cell.p is not None and cell.p < alpha else ""


def rho_cell(cell: CorrelationCell | None) -> str:
    """rho with its significance mark and, where recorded, its bootstrap interval."""
    if cell is None or cell.rho is None:
        return "–"
    interval = fmt_interval(cell.ci95, 2)
    return f"{cell.rho:.2f}{mark(cell)}" + (f" {interval}" if interval else "")


def correlation_section(results: RunResults, figures: dict[str, bytes]) -> Section | None:
    """The heatmap and the rho and p tables, or None without downstream tasks."""
    corr = correlations_of(results)
    matrix = corr.matrix
    tasks = list(dict.fromkeys(t for row in matrix.values() for t in row))
    if not tasks:  # no downstream scores: nothing to correlate with
        return None
    rho_rows, p_rows, holm_rows = [], [], []
    for diag, row in matrix.items():
        summary = corr.summary.get(diag)
        ns = sorted({cell.n for cell in row.values()})
        mean = fmt(summary.mean if summary else None, 2)
        if summary is not None and summary.mean is not None and (
                interval := fmt_interval(summary.mean_ci95, 2)):
            mean += f" {interval}"
        rho_rows.append([diag, *[rho_cell(row.get(t)) for t in tasks], mean,
                         fmt(summary.min if summary else None, 2),
                         fmt_span(ns[0], ns[-1]) if ns else "–"])
        p_rows.append([diag, *[fmt_p(row[t].p if t in row else None) for t in tasks]])
        holm_rows.append([diag, *[fmt_p(row[t].p_holm if t in row else None) for t in tasks]])
    methods = sorted({c.p_method for row in matrix.values() for c in row.values()
                      if c.p_method})
    downstream = corr.sources.get("downstream") or results.downstream_source
    published = results.published_source()
    origin = f"diagnostics: {published}" if published else f"decoder {corr.decoder}"
    text = [f"{corr.method.capitalize()} correlation across encoders between each diagnostic and "
            f"each downstream task (Kerscher & Eger 2020, Figure 2); {origin}"
            + (f"; downstream scores: {downstream}" if downstream else "") + ". Mean and min are "
            "over tasks; n is the number of encoders with both values (pairwise deletion). "
            f"* marks p < {ALPHA:g}, uncorrected."]
    if corr.primary is not None:
        text.append("Cell by cell these correlations are exploratory: the claim is the primary "
                    "analysis declared in the spec (above).")
    if corr.interval and (any(c.ci95 for row in matrix.values() for c in row.values()) or any(
            s.mean_ci95 for s in corr.summary.values())):
        text.append(f"Brackets: 95% {INTERVALS.get(corr.interval, corr.interval)}: the "
                    "uncertainty of rho over which encoders were evaluated. The mean's interval "
                    "is that of one correlation over as many encoders, conservative for a mean "
                    "of correlated estimates.")
    elif any(c.ci95 for row in matrix.values() for c in row.values()):
        text.append("Brackets: 95% percentile-bootstrap interval of rho over test sentences "
                    "(results.json of an older harness): encoders and downstream scores held "
                    "fixed, so it does not reflect the uncertainty across encoders.")
    if corr.controls:
        text.append(f"Control encoders ({join_names(corr.controls)}) are not in the "
                    "correlations or the ranks (comparison.controls: exclude); they are "
                    "reference points: " + _reference_points(results) + ".")
    if methods:
        text.append("p: " + "; ".join(P_METHODS.get(m, m) for m in methods) + ".")
    text.append(multiplicity(corr).sentence())
    return Section(f"Correlation with downstream tasks ({corr.method})", text,
                   figures=[HEATMAP_FILE] if HEATMAP_FILE in figures else [],
                   tables=[Table("rho", ["diagnostic", *tasks, "mean", "min", "n"], rho_rows),
                           Table("p-values", ["diagnostic", *tasks], p_rows),
                           *([Table("p-values after Holm's correction over the matrix",
                                    ["diagnostic", *tasks], holm_rows)]
                             if any(c.p_holm is not None for row in matrix.values()
                                    for c in row.values()) else [])])
