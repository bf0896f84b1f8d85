"""The report's main tables as CSV files (`harness report RUN --format csv`, or `csv` in the
spec's `report.formats`), for a spreadsheet or a plotting script: one row per value, the
interval and support beside it, nothing formatted.

- diagnostics.csv: encoder, decoder, diagnostic, value, its 95% interval, support (n), how the
  interval was got, decoder seeds, and the pair's empty outputs;
- ranks.csv: each decoder's ranks per diagnostic with their rank intervals (controls excluded);
- downstream.csv: each encoder's score per task, and where it came from;
- correlations.csv: the diagnostic x task correlations with p, Holm-adjusted p, n and interval.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

from harness.report.elements import empty_outputs
from harness.results.model import RunResults

TABLES_DIR = "tables"


def _csv(header: list[str], rows: Iterable[list[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([["" if cell is None else cell for cell in row] for row in rows])
    return buffer.getvalue()


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
    return _csv(["encoder", "decoder", "diagnostic", "value", "ci95_low", "ci95_high",
                 "support", "interval", "seeds", "empty_outputs", "outputs"], rows)


def ranks_csv(results: RunResults) -> str:
    """One row per decoder x diagnostic x ranked encoder."""
    rows = [[decoder, diagnostic, encoder, place.value, place.rank, *place.rank_ci95]
            for decoder, by_diagnostic in (results.rankings or {}).items()
            for diagnostic, ranking in by_diagnostic.items()
            for encoder, place in ranking.encoders.items()]
    return _csv(["decoder", "diagnostic", "encoder", "value", "rank", "rank_low", "rank_high"],
                rows)


def downstream_csv(results: RunResults) -> str:
    """One row per encoder x task."""
    origin = results.downstream_origin or {}
    rows = [[encoder, task, score, origin.get(encoder, results.downstream_source)]
            for encoder, tasks in results.downstream.items() for task, score in tasks.items()]
    return _csv(["encoder", "task", "score", "source"], rows)


def correlations_csv(results: RunResults) -> str:
    """One row per diagnostic x task of the correlation matrix."""
    corr = results.correlations
    rows = [[diagnostic, task, corr.method, cell.rho, cell.p, cell.p_method, cell.p_holm,
             cell.n, *(cell.ci95 or (None, None))]
            for diagnostic, row in corr.matrix.items() for task, cell in row.items()]
    return _csv(["diagnostic", "task", "method", "rho", "p", "p_method", "p_holm", "n",
                 "ci95_low", "ci95_high"], rows)


def csv_tables(results: RunResults) -> dict[str, str]:
    """File name -> CSV text of each table the results have rows for."""
    tables = {"diagnostics.csv": diagnostics_csv(results), "ranks.csv": ranks_csv(results),
              "downstream.csv": downstream_csv(results),
              "correlations.csv": correlations_csv(results)}
    return {name: text for name, text in tables.items() if text.count("\n") > 1}
