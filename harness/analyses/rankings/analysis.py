"""The rankings analysis: how firmly the test set orders the studied encoders on each
diagnostic (paired tests over the test sentences, Holm-corrected; rank intervals)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.analyses.rankings.rank import rank_stability
from harness.analyses.rankings.report import stability_section
from harness.analyses.rankings.summary import ranking_claims
from harness.analyses.run import AnalysisRun
from harness.report.elements import Section, csv_text
from harness.results.model import RunResults


class RankingsAnalysis:
    """Fills `rankings` (decoder -> diagnostic -> `DiagnosticRanking`)."""

    def run(self, run: AnalysisRun) -> Mapping[str, Any]:
        statistics, _ = run.statistics
        return {"rankings": rank_stability(run.ctx, statistics) or None}

    def sections(self, results: RunResults, figures: Mapping[str, bytes]) -> list[Section]:
        return [s for s in [stability_section(results)] if s is not None]

    def figures(self, results: RunResults) -> dict[str, bytes]:
        return {}

    def claims(self, results: RunResults) -> list[str]:
        return ranking_claims(results)

    def csv_tables(self, results: RunResults) -> dict[str, str]:
        """ranks.csv: one row per decoder x diagnostic x ranked encoder."""
        rows = [[decoder, diagnostic, encoder, place.value, place.rank, *place.rank_ci95]
                for decoder, by_diagnostic in (results.rankings or {}).items()
                for diagnostic, ranking in by_diagnostic.items()
                for encoder, place in ranking.encoders.items()]
        return {"ranks.csv": csv_text(["decoder", "diagnostic", "encoder", "value", "rank",
                                       "rank_low", "rank_high"], rows)}
