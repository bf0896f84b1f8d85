"""The correlation analysis: the V2S diagnostics against the downstream scores across encoders
(Kerscher & Eger 2020, section 3, Figure 2 and Table 1), with the primary analysis the spec
declared (the claim), the heatmap, one scatter plot per diagnostic and the two rankings side
by side."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from harness.analyses.correlation.correlate import correlate_diagnostics, support_notes
from harness.analyses.correlation.families import family_analysis
from harness.analyses.correlation.heatmap import heatmap_png
from harness.analyses.correlation.primary_report import primary_section
from harness.analyses.correlation.registration import registration
from harness.analyses.correlation.report import correlation_section
from harness.analyses.correlation.results import correlations_of, ranked_by
from harness.analyses.correlation.scatter import scatter_figures, scatter_section
from harness.analyses.correlation.spec import correlation_settings
from harness.analyses.correlation.summary import correlation_caveats, tracking_claims
from harness.analyses.correlation.table1 import table1_section
from harness.analyses.downstream.scores import Downstream
from harness.analyses.run import AnalysisRun
from harness.report.elements import HEATMAP_FILE, Section, csv_text
from harness.results.model import RunResults

log = logging.getLogger("harness.run")


class CorrelationAnalysis:
    """Fills `correlations` from the primary decoder's diagnostics and the downstream
    analysis's scores (`correlation:` section of the spec)."""

    def run(self, run: AnalysisRun) -> Mapping[str, Any]:
        spec, runs = run.spec, run.runs
        diagnostics = {m.name: {r.encoder: r.metrics[m.name].value
                                for r in runs if r.decoder == run.primary}
                       for m in spec.components("metric")}
        lower_is_better = frozenset(name for r in runs for name, score in r.metrics.items()
                                    if not score.higher_is_better)
        studied = spec.studied(run.encoders)
        section = correlation_settings(spec)
        correlations = correlate_diagnostics(
            diagnostics, _downstream(run), method=section.method, decoder=run.primary,
            rank_by=section.rank_by, lower_is_better=lower_is_better,
            controls=tuple(name for name in run.encoders if name not in studied),
            primary=section.primary, seed=spec.seed)
        joined = spec.joined_labels()
        if joined and correlations.primary is not None:
            # The registered test was over the bundle's encoders: computed here over those
            # alone, beside the exploratory one over every encoder of the run.
            alone = correlate_diagnostics(
                {name: {e: v for e, v in values.items() if e in joined}
                 for name, values in diagnostics.items()},
                _downstream(run, keep=joined), method=section.method, decoder=run.primary,
                rank_by=section.rank_by, lower_is_better=lower_is_better,
                controls=tuple(name for name in joined if name not in studied),
                primary=section.primary, seed=spec.seed)
            correlations = correlations.model_copy(update={"primary_reference": alone.primary})
        families = {name: d.family for name, d in run.descriptions.items() if d.family}
        if families and correlations.primary is not None:
            correlations = correlations.model_copy(update={"families": family_analysis(
                correlations.primary, families, diagnostics, _downstream(run).scores,
                section.primary, method=section.method, lower_is_better=lower_is_better,
                seed=spec.seed)})
        correlations = correlations.model_copy(update={
            "registration": registration(spec.source, spec.document),
            "notes": [*correlations.notes, *support_notes(runs, section.rank_by, run.primary,
                                                          spec.comparison.min_support)]})
        for note in correlations.notes:
            log.warning("%s", note)
        return {"correlations": correlations}

    def sections(self, results: RunResults, figures: Mapping[str, bytes]) -> list[Section]:
        found = [primary_section(results), correlation_section(results, dict(figures)),
                 scatter_section(results, dict(figures)), table1_section(results)]
        return [section for section in found if section is not None]

    def figures(self, results: RunResults) -> dict[str, bytes]:
        if not correlations_of(results).defined():
            return {}
        return {HEATMAP_FILE: heatmap_png(correlations_of(results)), **scatter_figures(results)}

    def claims(self, results: RunResults) -> list[str]:
        return tracking_claims(results)

    def caveats(self, results: RunResults) -> list[str]:
        return correlation_caveats(results)

    def notes(self, results: RunResults) -> list[str]:
        """What the correlation could not do as asked (too few encoders, thin support)."""
        return correlations_of(results).notes

    def header_rows(self, results: RunResults) -> list[list[str]]:
        """The run table's row: how the diagnostics are correlated and ranked."""
        corr = correlations_of(results)
        if not (results.runs or corr.matrix):
            return []
        return [["correlation", f"{corr.method}, rank by {ranked_by(results) or '–'}"]]

    def csv_tables(self, results: RunResults) -> dict[str, str]:
        """correlations.csv: one row per diagnostic x task of the correlation matrix."""
        corr = correlations_of(results)
        rows = [[diagnostic, task, corr.method, cell.rho, cell.p, cell.p_method, cell.p_holm,
                 cell.n, *(cell.ci95 or (None, None))]
                for diagnostic, row in corr.matrix.items() for task, cell in row.items()]
        return {"correlations.csv": csv_text(["diagnostic", "task", "method", "rho", "p",
                                              "p_method", "p_holm", "n", "ci95_low",
                                              "ci95_high"], rows)}


def _downstream(run: AnalysisRun, keep: list[str] | None = None) -> Downstream:
    """The downstream analysis's scores, as the correlation reads them (of the encoders of
    `keep` only, when given)."""
    encoders = [name for name in run.encoders if keep is None or name in keep]
    scores = {name: row for name, row in (run.fields.get("downstream") or {}).items()
              if name in encoders}
    return Downstream(source=run.fields.get("downstream_source", ""), tasks=[],
                      scores=scores,
                      missing=[name for name in encoders if name not in scores],
                      reasons=run.fields.get("downstream_missing") or {})
