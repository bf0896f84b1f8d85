"""The report's main tables as CSV files (`harness report RUN --format csv`, or `csv` in the
spec's `report.formats`), for a spreadsheet or a plotting script: one row per value, the
interval and support beside it, nothing formatted.

- diagnostics.csv: encoder, decoder, diagnostic, value, its 95% interval, support (n), how the
  interval was got, decoder seeds, and the pair's empty outputs;
- downstream.csv: each encoder's score per task, and where it came from;

and each analysis's own (`csv_tables`, an analysis's optional part): the rankings' ranks.csv
(each decoder's ranks per diagnostic with their rank intervals, controls excluded), the
correlation's correlations.csv (the diagnostic x task correlations with p, Holm-adjusted p, n
and interval).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.report.elements import csv_text, empty_outputs
from harness.results.model import RunResults

TABLES_DIR = "tables"


def diagnostics_csv(results: RunResults) -> str:
    """One row per encoder x decoder x diagnostic."""
    rows = []
    for run in results.runs:
        empty, outputs = empty_outputs(run) or (None, None)
        seeds = len(run.seeds) if run.seeds else 1
        for name, score in run.metrics.items():
            low, high = score.ci95
            rows.append([run.encoder, run.decoder, name, score.value, low, high, score.support,
                         score.interval, seeds, empty, outputs])
    return csv_text(["encoder", "decoder", "diagnostic", "value", "ci95_low", "ci95_high",
                 "support", "interval", "seeds", "empty_outputs", "outputs"], rows)


def downstream_csv(results: RunResults) -> str:
    """One row per encoder x task."""
    origin = results.downstream_origin or {}
    rows = [[encoder, task, score, origin.get(encoder, results.downstream_source)]
            for encoder, tasks in results.downstream.items() for task, score in tasks.items()]
    return csv_text(["encoder", "task", "score", "source"], rows)


def csv_tables(results: RunResults, analyses: Sequence[Any] = ()) -> dict[str, str]:
    """File name -> CSV text of each table the results have rows for: the core's, then each
    analysis's (its optional `csv_tables(results)`)."""
    tables = {"diagnostics.csv": diagnostics_csv(results),
              "downstream.csv": downstream_csv(results)}
    for analysis in analyses:
        if hasattr(analysis, "csv_tables"):
            tables.update(analysis.csv_tables(results))
    return {name: text for name, text in tables.items() if text.count("\n") > 1}
