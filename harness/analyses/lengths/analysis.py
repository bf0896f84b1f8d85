"""The lengths analysis: every diagnostic per bin of reference length (`breakdown:` section of
the spec), with one figure of small multiples."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.analyses.lengths.breakdown import length_breakdown
from harness.analyses.lengths.report import length_figures, lengths_section
from harness.analyses.run import AnalysisRun
from harness.report.elements import Section
from harness.results.model import RunResults


class LengthsAnalysis:
    """Fills `lengths` (`LengthBreakdown`)."""

    def run(self, run: AnalysisRun) -> Mapping[str, Any]:
        statistics, _ = run.statistics
        return {"lengths": length_breakdown(run.ctx, statistics, run.corpus.test)}

    def sections(self, results: RunResults, figures: Mapping[str, bytes]) -> list[Section]:
        return [s for s in [lengths_section(results, dict(figures))] if s is not None]

    def figures(self, results: RunResults) -> dict[str, bytes]:
        return length_figures(results)
