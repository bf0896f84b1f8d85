"""Stage 10: write the run directory: results.json, samples/*.jsonl, figures, report.md/.html.

The reports show what Kerscher & Eger (2020) show: the diagnostics with their intervals
(Table 4), the correlation heatmap of diagnostics x downstream tasks with mean and min (Figure 2),
downstream rank against V2S rank (Table 1), one input decoded from every encoder (Table 2, left),
and the decoders' training curves. report.html is self-contained (figures embedded as base64
PNG); report.md links the same figures under figures/.
"""

from __future__ import annotations

import base64
import html
import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.results import MetricScore, RunResults

FIGURES_DIR = "figures"
HEATMAP_FILE = "heatmap.png"
CURVES_FILE = "training-curves.png"


def _write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _write_text(path: Path, text: str) -> None:
    _write_bytes(path, text.encode("utf-8"))


def sample_file_name(encoder: str, decoder: str) -> str:
    """Return `<encoder>__<decoder>.jsonl`, with a view suffix `:` made file-safe."""
    return f"{encoder}__{decoder}.jsonl".replace(":", "_").replace("/", "_")


def write_run(out: Path, results: RunResults, samples: dict[tuple[str, str], Path],
              formats: list[str]) -> None:
    """Write results, samples, figures and the reports into `out`, each file atomically.

    Samples and figures an earlier run left in `out` that this run does not write are removed,
    so a reused run directory describes this run only.
    """
    (out / "samples").mkdir(parents=True, exist_ok=True)
    written = set()
    for (encoder, decoder), path in samples.items():
        target = out / "samples" / sample_file_name(encoder, decoder)
        tmp = target.with_name(f".{target.name}.tmp")
        shutil.copyfile(path, tmp)
        os.replace(tmp, target)
        written.add(target.name)
    _remove_stale(out / "samples", "*.jsonl", written)
    results.save(out)
    write_reports(out, results, formats)


def write_reports(out: Path, results: RunResults, formats: list[str]) -> None:
    """Write figures/*.png and report.md and/or report.html from a run's results."""
    if not {"md", "html"} & set(formats):
        return
    figures = report_figures(results)
    if figures:
        (out / FIGURES_DIR).mkdir(parents=True, exist_ok=True)
        for name, data in figures.items():
            _write_bytes(out / FIGURES_DIR / name, data)
    _remove_stale(out / FIGURES_DIR, "*.png", set(figures))
    if "md" in formats:
        _write_text(out / "report.md", render_markdown(results, figures))
    if "html" in formats:
        _write_text(out / "report.html", render_html(results, figures))


def _remove_stale(directory: Path, pattern: str, keep: set[str]) -> None:
    """Delete the files matching `pattern` in `directory` whose names are not in `keep`."""
    if directory.is_dir():
        for path in directory.glob(pattern):
            if path.name not in keep:
                path.unlink()


# ------------------------------------------------------------------------------- content


@dataclass
class Section:
    """A part of the report: a heading, lines of text, an optional figure and tables."""

    title: str
    text: list[str] = field(default_factory=list)
    figure: str | None = None          # file name under figures/
    tables: list[tuple[str, list[str], list[list[str]]]] = field(default_factory=list)


def _fmt(value: Any, digits: int = 1) -> str:
    """A number for a table; "–" for a missing or undefined one."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _p(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


def _span(counts: list[int]) -> str:
    if not counts:
        return "–"
    return str(counts[0]) if counts[0] == counts[-1] else f"{counts[0]}–{counts[-1]}"


def report_figures(results: RunResults) -> dict[str, bytes]:
    """Return the report's figures as file name -> PNG bytes (only those with something to show)."""
    from harness.figures import heatmap_png, training_curves_png

    figures: dict[str, bytes] = {}
    if results.correlations.defined():
        figures[HEATMAP_FILE] = heatmap_png(results.correlations)
    curves = training_curves_png(results.runs)
    if curves is not None:
        figures[CURVES_FILE] = curves
    return figures


def _score_cell(score: MetricScore | None) -> str:
    """A corpus score with its interval; perplexities near 1 need two decimals, 0-100 scores
    one."""
    if score is None or score.value is None:
        return "–"
    digits = 1 if score.higher_is_better else 2
    low, high = score.ci95
    return f"{_fmt(score.value, digits)} [{_fmt(low, digits)}, {_fmt(high, digits)}]"


def _diagnostics_section(results: RunResults) -> Section | None:
    runs = results.runs
    if runs:
        metrics = list(dict.fromkeys(m for run in runs for m in run.metrics))
        rows = [[run.encoder, run.decoder, *[_score_cell(run.metrics.get(m)) for m in metrics]]
                for run in runs]
        direction = {m: next(run.metrics[m].higher_is_better for run in runs
                             if m in run.metrics) for m in metrics}
        higher = [m for m in metrics if direction[m]]
        lower = [m for m in metrics if not direction[m]]
        notes = ["Corpus scores with percentile-bootstrap 95% intervals over test sentences"
                 + (f"; higher is better for {', '.join(higher)}" if higher else "")
                 + (f"; lower is better for {', '.join(lower)}" if lower else "")
                 + ". – marks an undefined score (a ratio with nothing to count, such as id-perm "
                 "when no output is a permutation)."]
        return Section("V2S diagnostics", notes,
                       tables=[("", ["encoder", "decoder", *metrics], rows)])
    values = results.published_diagnostics()
    if not values:
        return None
    encoders = list(dict.fromkeys(e for column in values.values() for e in column))
    rows = [[e, *[_fmt(values[d].get(e), 2) for d in values]] for e in encoders]
    source = results.published_source()
    return Section("V2S diagnostics", [f"As published{f' ({source})' if source else ''}; no "
                                       "intervals."], tables=[("", ["encoder", *values], rows)])


def _correlation_section(results: RunResults, figures: dict[str, bytes]) -> Section | None:
    corr = results.correlations
    matrix = corr.matrix
    tasks = list(dict.fromkeys(t for row in matrix.values() for t in row))
    if not tasks:  # no downstream scores: nothing to correlate with
        return None
    rho_rows, p_rows = [], []
    for diag, row in matrix.items():
        summary = corr.summary.get(diag)
        ns = sorted({cell.n for cell in row.values()})
        rho_rows.append([diag, *[_fmt(row[t].rho if t in row else None, 2) for t in tasks],
                         _fmt(summary.mean if summary else None, 2),
                         _fmt(summary.min if summary else None, 2), _span(ns)])
        p_rows.append([diag, *[_p(row[t].p if t in row else None) for t in tasks]])
    methods = sorted({c.p_method for row in matrix.values() for c in row.values()
                      if c.p_method})
    how = {"exact": "exact two-sided permutation p-values (all n! pairings)",
           "scipy": "scipy's p-values"}
    downstream = corr.sources.get("downstream") or results.downstream_source
    published = results.published_source()
    origin = f"diagnostics: {published}" if published else f"decoder {corr.decoder}"
    text = [f"{corr.method.capitalize()} correlation across encoders between each diagnostic and "
            f"each downstream task (Kerscher & Eger 2020, Figure 2); {origin}"
            + (f"; downstream scores: {downstream}" if downstream else "") + ". Mean and min are "
            "over tasks; n is the number of encoders with both values (pairwise deletion)."]
    if methods:
        text.append("p: " + "; ".join(how.get(m, m) for m in methods) + ".")
    return Section(f"Correlation with downstream tasks ({corr.method})", text,
                   figure=HEATMAP_FILE if HEATMAP_FILE in figures else None,
                   tables=[("rho", ["diagnostic", *tasks, "mean", "min", "n"], rho_rows),
                           ("p-values", ["diagnostic", *tasks], p_rows)])


def _rank_section(results: RunResults) -> Section | None:
    ranks = results.correlations.ranks
    if not ranks:
        return None
    wanted = results.correlations.rank_by
    by = wanted if wanted in ranks else next((k for k in ranks if k != "downstream"), "")
    downstream, v2s = ranks.get("downstream", {}), ranks.get(by, {})
    encoders = sorted(set(downstream) | set(v2s),
                      key=lambda e: (downstream.get(e, 10**6), v2s.get(e, 10**6), e))
    rows = [[e, _fmt(downstream.get(e)), _fmt(v2s.get(e)),
             _fmt(v2s[e] - downstream[e]) if e in v2s and e in downstream else "–"]
            for e in encoders]
    text = ["Rank 1 is best. Downstream rank: encoders ranked within each task, ranks averaged "
            f"over tasks, the averages ranked; V2S rank by {by or 'a diagnostic'} "
            "(Kerscher & Eger 2020, Table 1)."]
    common = [e for e in encoders if e in downstream and e in v2s]
    if len(common) >= 3 and by:
        from harness.stats import correlate

        agreement = correlate({e: -downstream[e] for e in common}, {e: -v2s[e] for e in common})
        if agreement.rho is not None:
            text.append(f"Spearman correlation of the two rankings over {agreement.n} encoders: "
                        f"{agreement.rho:.2f} (p {_p(agreement.p)}).")
    return Section("Ranks", text, tables=[("", ["encoder", "downstream rank",
                                                f"V2S rank ({by})", "V2S - DS"], rows)])


def _samples_section(results: RunResults) -> Section | None:
    if not results.examples:
        return None
    tables = []
    for number, example in enumerate(results.examples, start=1):
        rows = [["input", "", example.reference]]
        rows += [[o.encoder, o.decoder, o.hypothesis] for o in example.outputs]
        tables.append((f"Sample {number}", ["encoder", "decoder", "sentence"], rows))
    return Section("Samples", ["One test input and what the decoder regenerated from each "
                               "encoder's vector (Kerscher & Eger 2020, Table 2, left)."],
                   tables=tables)


def _training_section(results: RunResults, figures: dict[str, bytes]) -> Section | None:
    if not results.runs:
        return None
    rows = [[r.encoder, r.decoder, _fmt(r.train.epochs), _fmt(r.train.train_loss, 3),
             _fmt(r.train.val_loss, 3), _fmt(r.train.tokens_per_s, 0),
             _fmt(r.generate.sentences_per_s, 1)] for r in results.runs]
    text = [] if CURVES_FILE in figures else ["No training curves were recorded."]
    return Section("Training and generation", text,
                   figure=CURVES_FILE if CURVES_FILE in figures else None,
                   tables=[("", ["encoder", "decoder", "epochs", "train loss", "val loss",
                                 "tokens/s", "sentences/s"], rows)])


def report_sections(results: RunResults, figures: dict[str, bytes]) -> list[Section]:
    """Return the report's sections in order, shared by the Markdown and HTML renderings."""
    notes = results.correlations.notes
    sections = [Section("Notes", [f"- {note}" for note in notes])] if notes else []
    for section in (_diagnostics_section(results), _correlation_section(results, figures),
                    _rank_section(results), _samples_section(results),
                    _training_section(results, figures)):
        if section is not None:
            sections.append(section)
    return sections


def _provenance(results: RunResults) -> str:
    prov = results.provenance
    return (f"harness {prov.harness_version or '?'}, device {prov.device or '?'}, "
            f"seed {'?' if prov.seed is None else prov.seed}, "
            f"spec sha256 {prov.spec_sha256[:12]}")


# ----------------------------------------------------------------------------- rendering


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_markdown(results: RunResults, figures: dict[str, bytes] | None = None) -> str:
    """Return the Markdown report of a run; figures are linked from figures/."""
    figures = report_figures(results) if figures is None else figures
    lines = [f"# V2S report: {results.name}", "",
             _provenance(results), ""]
    for section in report_sections(results, figures):
        lines += [f"## {section.title}", ""]
        for line in section.text:
            # notes form one list; other lines are paragraphs of their own
            lines += [line] if line.startswith("- ") else [line, ""]
        if section.text and section.text[-1].startswith("- "):
            lines.append("")
        if section.figure:
            lines += [f"![{section.title}]({FIGURES_DIR}/{section.figure})", ""]
        for caption, header, rows in section.tables:
            if caption:
                lines += [f"**{caption}**", ""]
            lines += ["| " + " | ".join(_md_cell(h) for h in header) + " |",
                      "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(_md_cell(c) for c in cells) + " |" for cells in rows]
            lines.append("")
    return "\n".join(lines)


_STYLE = ("body{font-family:sans-serif;margin:2em;max-width:1400px}"
          "table{border-collapse:collapse;margin:0.5em 0 1.5em}"
          "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
          "td:first-child,th:first-child{text-align:left}"
          "table.samples td:last-child{text-align:left;font-family:monospace}"
          "img{max-width:100%;height:auto;display:block;margin:0.5em 0}"
          "caption{text-align:left;font-weight:bold;padding:0.3em 0}"
          ".scroll{overflow-x:auto}")


def render_html(results: RunResults, figures: dict[str, bytes] | None = None) -> str:
    """Return a self-contained HTML report of a run: figures embedded as base64 PNG."""
    figures = report_figures(results) if figures is None else figures
    esc = html.escape
    parts = [f"<h1>V2S report: {esc(results.name)}</h1>",
             f"<p>{esc(_provenance(results))}</p>"]
    for section in report_sections(results, figures):
        parts.append(f"<section><h2>{esc(section.title)}</h2>")
        if section.title == "Notes":
            parts.append("<ul>" + "".join(f"<li>{esc(line[2:])}</li>" for line in section.text)
                         + "</ul>")
        else:
            parts += [f"<p>{esc(line)}</p>" for line in section.text]
        if section.figure:
            data = base64.b64encode(figures[section.figure]).decode("ascii")
            parts.append(f"<img id='{esc(section.figure.split('.')[0])}' "
                         f"alt='{esc(section.title)}' src='data:image/png;base64,{data}'>")
        for caption, header, rows in section.tables:
            kind = " class='samples'" if section.title == "Samples" else ""
            parts.append(f"<div class='scroll'><table{kind}>"
                         + (f"<caption>{esc(caption)}</caption>" if caption else "")
                         + "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>")
            parts += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>"
                      for cells in rows]
            parts.append("</table></div>")
        parts.append("</section>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>V2S report: "
            f"{esc(results.name)}</title>"
            f"<style>{_STYLE}</style></head><body>{''.join(parts)}</body></html>\n")
