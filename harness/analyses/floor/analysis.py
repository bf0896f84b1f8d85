"""The floor analysis: what each encoder adds over its floor, the decoder's score from a vector
carrying no information (a `random-gaussian` encoder) or, for a diagnostic in the encoder's own
space, the encoder's chance level."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.analyses.floor.gains import floor_gains
from harness.analyses.floor.report import floor_section
from harness.analyses.run import AnalysisRun
from harness.report.elements import Section
from harness.results.model import RunResults


class FloorAnalysis:
    """Fills `floor` (`FloorGains`), or nothing without a floor."""

    def run(self, run: AnalysisRun) -> Mapping[str, Any]:
        statistics, chance = run.statistics
        return {"floor": floor_gains(run.ctx, statistics, chance)}

    def sections(self, results: RunResults, figures: Mapping[str, bytes]) -> list[Section]:
        return [s for s in [floor_section(results)] if s is not None]

    def figures(self, results: RunResults) -> dict[str, bytes]:
        return {}
