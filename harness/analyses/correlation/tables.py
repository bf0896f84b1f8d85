"""The correlation analysis from published tables alone (a spec with `diagnostics:`, the paper's
Figure 2 and Table 1 from its Tables 4 and 5): its `AnalysisParts.tables` part."""

from __future__ import annotations

import logging
from typing import Any

from harness.analyses.correlation.correlate import correlations_from_tables
from harness.analyses.correlation.spec import correlation_settings
from harness.analyses.downstream.scores import downstream_scores
from harness.errors import HarnessError
from harness.results.declarations import read_table, row_declarations
from harness.spec.schema import TableSpec

log = logging.getLogger("harness.run")


def table_results(spec: TableSpec) -> dict[str, Any]:
    """The results fields of correlating `spec`'s published diagnostics table with its
    downstream table: the diagnostics, the downstream scores (each bound to the model its row
    declares) and the correlations."""
    if spec.downstream.reference is None:
        raise HarnessError(f"{spec.source}: downstream.reference: a table spec needs a "
                           "downstream table to correlate with")
    section = correlation_settings(spec)
    correlations = correlations_from_tables(spec.diagnostics.reference,
                                            spec.downstream.reference, section.method,
                                            rank_by=section.rank_by, primary=section.primary,
                                            seed=spec.seed)
    for note in correlations.notes:
        log.warning("%s", note)
    rows = row_declarations(read_table(spec.diagnostics.reference))
    downstream = downstream_scores(spec.downstream.reference,
                                   sorted({e for row in correlations.diagnostics.values()
                                           for e in row}), declared=rows)
    return {"diagnostics": correlations.diagnostics,
            "diagnostics_source": correlations.sources.get("diagnostics", ""),
            "downstream": downstream.scores, "downstream_source": downstream.source,
            "downstream_missing": downstream.reasons or None, "correlations": correlations}
