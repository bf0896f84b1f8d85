"""Write the run directory: results.json, samples/*.jsonl, figures, report.md/.html.

The reports show what Kerscher & Eger (2020) show, with what a reader needs to cite it: the run
(corpus, vocabulary, decoders, encoders, provenance), a generated summary of what the numbers
support, the diagnostics' definitions, the diagnostics with their intervals, support and seed
spread (Table 4), rank stability, the downstream scores, the correlation heatmap with
significance and multiple-comparison counts (Figure 2), one scatter plot per diagnostic,
downstream rank against V2S rank (Table 1), published tables beside ours, one input decoded
from every encoder (Table 2, left), and the decoders' training curves. report.html is
self-contained (figures embedded as base64 PNG); report.md links the same figures under
figures/. The sections are built by `harness.report`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from harness.report.elements import CURVES_FILE, FIGURES_DIR, HEATMAP_FILE, scatter_file
from harness.report.render import markdown, page
from harness.report.sections import analyses_of, report_figures, report_sections
from harness.report.tables import TABLES_DIR, csv_tables
from harness.results.model import RunResults
from harness.text.outputs import sample_file_name

__all__ = ["CURVES_FILE", "FIGURES_DIR", "HEATMAP_FILE", "render_html", "render_markdown",
           "report_figures", "sample_file_name", "scatter_file", "write_reports", "write_run"]


def _write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _write_text(path: Path, text: str) -> None:
    _write_bytes(path, text.encode("utf-8"))


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
    """Write figures/*.png and report.md and/or report.html, and with "csv" the main tables
    as tables/*.csv (`harness.report.tables`), from a run's results."""
    if not {"md", "html", "csv"} & set(formats):
        return
    analyses = analyses_of(results)  # built once for the tables, figures and renderings
    if "csv" in formats:
        tables = csv_tables(results, analyses)
        (out / TABLES_DIR).mkdir(parents=True, exist_ok=True)
        for name, text in tables.items():
            _write_text(out / TABLES_DIR / name, text)
        _remove_stale(out / TABLES_DIR, "*.csv", set(tables))
    if not {"md", "html"} & set(formats):
        return
    figures = report_figures(results, analyses)
    if figures:
        (out / FIGURES_DIR).mkdir(parents=True, exist_ok=True)
        for name, data in figures.items():
            _write_bytes(out / FIGURES_DIR / name, data)
    _remove_stale(out / FIGURES_DIR, "*.png", set(figures))
    if "md" in formats:
        _write_text(out / "report.md", render_markdown(results, figures, analyses=analyses))
    if "html" in formats:
        _write_text(out / "report.html", render_html(results, figures, analyses=analyses))


def _remove_stale(directory: Path, pattern: str, keep: set[str]) -> None:
    """Delete the files matching `pattern` in `directory` whose names are not in `keep`."""
    if directory.is_dir():
        for path in directory.glob(pattern):
            if path.name not in keep:
                path.unlink()


def render_markdown(results: RunResults, figures: dict[str, bytes] | None = None, *,
                    docs: str | None = None, analyses: list[Any] | None = None) -> str:
    """Return the Markdown report of a run; figures are linked from figures/. `docs` is the
    link to docs/metrics.md (plain text without one); `analyses` the run's analyses
    (`analyses_of`, built when not given)."""
    analyses = analyses_of(results) if analyses is None else analyses
    figures = report_figures(results, analyses) if figures is None else figures
    return markdown(results, report_sections(results, figures, docs, analyses))


def render_html(results: RunResults, figures: dict[str, bytes] | None = None, *,
                docs: str | None = None, analyses: list[Any] | None = None) -> str:
    """Return a self-contained HTML report of a run: figures embedded as base64 PNG. `docs` is
    the link to docs/metrics.md (plain text without one); `analyses` the run's analyses
    (`analyses_of`, built when not given)."""
    analyses = analyses_of(results) if analyses is None else analyses
    figures = report_figures(results, analyses) if figures is None else figures
    return page(results, report_sections(results, figures, docs, analyses), figures)
