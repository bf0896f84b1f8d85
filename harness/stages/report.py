"""Stage 10: write the run directory: results.json, samples/*.jsonl, report.md, report.html."""

from __future__ import annotations

import html
import json
import os
import shutil
from pathlib import Path
from typing import Any

from harness.errors import DataError

RESULTS_FILE = "results.json"
SCHEMA = "v2s-harness/results/1"


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def sample_file_name(encoder: str, decoder: str) -> str:
    """Return `<encoder>__<decoder>.jsonl`, with a view suffix `:` made file-safe."""
    return f"{encoder}__{decoder}.jsonl".replace(":", "_").replace("/", "_")


def write_run(out: Path, results: dict[str, Any], samples: dict[tuple[str, str], Path],
              formats: list[str]) -> None:
    """Write results, samples and the reports into `out`, each file atomically."""
    (out / "samples").mkdir(parents=True, exist_ok=True)
    for (encoder, decoder), path in samples.items():
        target = out / "samples" / sample_file_name(encoder, decoder)
        tmp = target.with_name(f".{target.name}.tmp")
        shutil.copyfile(path, tmp)
        os.replace(tmp, target)
    _write_text(out / RESULTS_FILE, json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    write_reports(out, results, formats)


def write_reports(out: Path, results: dict[str, Any], formats: list[str]) -> None:
    """Write report.md and/or report.html from a results dictionary."""
    if "md" in formats:
        _write_text(out / "report.md", render_markdown(results))
    if "html" in formats:
        _write_text(out / "report.html", render_html(results))


def load_results(run_dir: Path) -> dict[str, Any]:
    """Return the results.json of a run directory, checking its schema."""
    path = run_dir / RESULTS_FILE
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: not found; is {run_dir} a run directory?") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: malformed JSON: {exc.msg}") from None
    if results.get("schema") != SCHEMA:
        raise DataError(f"{path}: schema {results.get('schema')!r}, expected {SCHEMA!r}")
    return results


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _tables(results: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """The report's tables as (title, header, rows), shared by Markdown and HTML."""
    tables = []
    metrics = sorted({m for run in results["runs"] for m in run["metrics"]})
    rows = []
    for run in results["runs"]:
        cells = [run["encoder"], run["decoder"]]
        for m in metrics:
            entry = run["metrics"].get(m)
            cells.append("–" if entry is None else
                         f"{entry['value']:.1f} [{entry['ci95'][0]:.1f}, {entry['ci95'][1]:.1f}]")
        rows.append(cells)
    tables.append(("V2S diagnostics (0-100, bootstrap 95% interval)",
                   ["encoder", "decoder", *metrics], rows))
    rows = [[r["encoder"], r["decoder"], _fmt(r["train"].get("epochs")),
             _fmt(r["train"].get("train_loss"), 3), _fmt(r["train"].get("tokens_per_s"), 0),
             _fmt(r["generate"].get("sentences_per_s"), 1)] for r in results["runs"]]
    tables.append(("Training and generation",
                   ["encoder", "decoder", "epochs", "train loss", "tokens/s", "sentences/s"],
                   rows))
    corr = results.get("correlations") or {}
    if corr.get("matrix"):
        tasks = sorted({t for row in corr["matrix"].values() for t in row})
        rows = [[diag, *[_fmt(row.get(t, {}).get("rho"), 2) for t in tasks],
                 _fmt(corr["summary"].get(diag, {}).get("mean"), 2),
                 _fmt(corr["summary"].get(diag, {}).get("min"), 2)]
                for diag, row in corr["matrix"].items()]
        tables.append((f"{corr['method'].capitalize()} correlation with downstream tasks "
                       f"(decoder {corr.get('decoder', '')})",
                       ["diagnostic", *tasks, "mean", "min"], rows))
    if corr.get("ranks"):
        encoders = sorted({e for ranks in corr["ranks"].values() for e in ranks})
        columns = list(corr["ranks"])
        rows = [[e, *[_fmt(corr["ranks"][c].get(e)) for c in columns]] for e in encoders]
        tables.append(("Ranks (1 = best)", ["encoder", *columns], rows))
    return tables


def _notes(results: dict[str, Any]) -> list[str]:
    return list((results.get("correlations") or {}).get("notes", []))


def render_markdown(results: dict[str, Any]) -> str:
    """Return the Markdown report of a run."""
    spec = results.get("spec", {})
    lines = [f"# V2S report: {spec.get('name', '')}", ""]
    prov = results.get("provenance", {})
    lines += [f"harness {prov.get('harness_version', '?')}, device {prov.get('device', '?')}, "
              f"seed {prov.get('seed', '?')}, spec sha256 {str(prov.get('spec_sha256', ''))[:12]}",
              ""]
    for title, header, rows in _tables(results):
        lines += [f"## {title}", "", "| " + " | ".join(header) + " |",
                  "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(cells) + " |" for cells in rows]
        lines.append("")
    notes = _notes(results)
    if notes:
        lines += ["## Notes", ""] + [f"- {note}" for note in notes] + [""]
    examples = results.get("examples", [])
    if examples:
        lines += ["## Samples", ""]
        for example in examples:
            lines.append(f"- input: `{example['reference']}`")
            for output in example["outputs"]:
                lines.append(f"  - {output['encoder']} / {output['decoder']}: "
                             f"`{output['hypothesis']}`")
        lines.append("")
    return "\n".join(lines)


def render_html(results: dict[str, Any]) -> str:
    """Return a self-contained HTML report of a run."""
    esc = html.escape
    parts = [f"<h1>V2S report: {esc(str(results.get('spec', {}).get('name', '')))}</h1>"]
    for title, header, rows in _tables(results):
        parts.append(f"<h2>{esc(title)}</h2><table><tr>"
                     + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>")
        parts += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>"
                  for cells in rows]
        parts.append("</table>")
    notes = _notes(results)
    if notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes)
                     + "</ul>")
    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>V2S report</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>\n")
