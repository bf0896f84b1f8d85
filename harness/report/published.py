"""Published tables beside the run's own numbers (`report.compare`): for the encoders in both,
ours and the publication's side by side. A comparison only: published numbers are never an
input to anything else in the report."""

from __future__ import annotations

from typing import Any

from harness.report.elements import Section, Table, fmt, join_names
from harness.results.model import PublishedTable, RunResults


def ours(results: RunResults, table: PublishedTable) -> dict[str, dict[str, float | None]]:
    """Encoder -> column -> this run's value for a published table's columns: the diagnostics
    of the decoder the correlations use, or the downstream scores."""
    if table.kind == "downstream":
        return {e: {c: scores.get(c) for c in table.columns}
                for e, scores in results.downstream.items()}
    decoder = results.primary_decoder()
    return {run.encoder: {c: run.metrics[c].value if c in run.metrics else None
                          for c in table.columns}
            for run in results.runs if run.decoder == decoder}


def _model(declared: dict[str, Any]) -> str:
    return str(declared.get("model") or ", ".join(f"{k}={v}" for k, v in declared.items()))


def _match(table: PublishedTable, encoder: str) -> str:
    if encoder not in table.matches:
        return "–"
    if table.matches[encoder]:
        return "yes"
    declared = table.models.get(encoder)
    return f"no (published: {_model(declared)})" if declared else "no"


def published_section(results: RunResults) -> Section | None:
    """One table per published table: encoder, whether the published row is the same model,
    then for each column this run's value and the published one."""
    if not results.published:
        return None
    text = ["Each table sets this run's numbers beside a published table's, for the encoders "
            "both have. It is a comparison, not a replication check: corpus, decoder, training "
            "size and metric implementations may differ (docs/metrics.md says where ours depart "
            "from the paper's code). \"same model\" says whether the published row's declared "
            "model is the encoder run here; where it is not, the two rows are different "
            "models under one name."]
    tables = []
    decoder = results.primary_decoder()
    for table in results.published:
        mine = ours(results, table)
        columns = [c for c in table.columns if any(mine.get(e, {}).get(c) is not None
                                                   for e in table.scores)]
        both = [e for e in table.scores if e in mine]
        what = ("downstream scores" if table.kind == "downstream"
                else f"diagnostics, decoder {decoder}")
        if not both or not columns:
            text.append(f"- {table.source}: no encoder of this run has a published row"
                        + ("" if both else f" (published: {join_names(list(table.scores))})")
                        + ".")
            continue
        header = ["encoder", "same model"]
        for column in columns:
            header += [f"{column} (this run)", f"{column} (published)"]
        rows = []
        for encoder in both:
            row = [encoder, _match(table, encoder)]
            for column in columns:
                row += [fmt(mine[encoder].get(column), 2), fmt(table.scores[encoder].get(column),
                                                               2)]
            rows.append(row)
        tables.append(Table(f"This run ({what}) vs {table.source}", header, rows))
    return Section("Comparison with published tables", text, tables=tables)
