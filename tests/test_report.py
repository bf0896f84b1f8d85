"""Tests of the report stage: report.md, a self-contained report.html, figures, rebuilding."""

from __future__ import annotations

import base64
import io
import json
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from harness.analyses.correlation.heatmap import HEATMAP_COLORMAP, heatmap_png
from harness.analyses.correlation.results import Correlations
from harness.cli import main
from harness.errors import DataError
from harness.report.plots import training_curves_png
from harness.report.write import (
    CURVES_FILE,
    HEATMAP_FILE,
    render_markdown,
    write_reports,
    write_run,
)
from harness.results.model import SCHEMA, PairResult, RunResults, load_results

REPO = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TASKS = ["MR", "CR", "TREC"]


def cell(rho: float | None, p: float | None = None, n: int = 4) -> dict:
    return {"rho": rho, "p": p, "p_method": "exact" if p is not None else None, "n": n}


def hand_made_results(curves: bool = True) -> RunResults:
    return RunResults.model_validate(hand_made_data(curves))


def hand_made_data(curves: bool = True) -> dict:
    """A results.json as a run would write it, by hand."""
    def run(encoder: str, id_value: float, low: float, high: float, curve: bool) -> dict:
        train = {"epochs": 3, "train_loss": 2.5, "val_loss": 2.75, "tokens_per_s": 1234.0}
        if curve:
            train["curve"] = [{"epoch": e, "train_loss": 4.0 - e * 0.5, "val_loss": 4.2 - e * 0.5}
                              for e in (1, 2, 3)]
        return {"encoder": encoder, "decoder": "mos-lstm",
                "metrics": {"id": {"value": id_value, "ci95": [low, high]},
                            "bleu": {"value": 40.25, "ci95": [38.0, 42.5],
                                     "signature": "nrefs:1|case:mixed"}},
                "train": train, "generate": {"sentences_per_s": 88.8}}

    return {
        "schema": SCHEMA,
        "spec": {"name": "hand-made", "correlation": {"rank_by": "id"}},
        "provenance": {"harness_version": "0.1.0", "device": "cpu", "seed": 1,
                       "spec_sha256": "abcdef0123456789"},
        "runs": [run("avg", 15.2, 14.1, 16.3, curves), run("laser", 40.0, 38.5, 41.5, False),
                 run("gem", 1.2, 0.5, 2.0, False), run("sbert", 3.3, 2.1, 4.4, False)],
        "downstream": {},
        "correlations": {
            "method": "spearman", "decoder": "mos-lstm",
            "matrix": {"id": {"MR": cell(0.9, 0.083), "CR": cell(-0.8, 0.2), "TREC": cell(None)},
                       "bleu": {"MR": cell(0.4, 0.6), "CR": cell(0.2, 0.9), "TREC": cell(None)}},
            "summary": {"id": {"mean": 0.05, "min": -0.8}, "bleu": {"mean": 0.3, "min": 0.2}},
            "ranks": {"downstream": {"sbert": 1, "laser": 2, "avg": 3, "gem": 4},
                      "id": {"laser": 1, "avg": 2, "sbert": 3, "gem": 4}},
            "notes": ["no downstream scores for: qt (not in Table 5)"]},
        "examples": [{"reference": "the point is , stoller adds | i 'm not sure .",
                      "outputs": [{"encoder": "avg", "decoder": "mos-lstm",
                                   "hypothesis": "i 'm sure , it is the <point>"},
                                  {"encoder": "laser", "decoder": "mos-lstm",
                                   "hypothesis": "the point is , inger adds"}]}],
    }


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def pixels(data: bytes) -> np.ndarray:
    from matplotlib.image import imread

    return imread(io.BytesIO(data), format="png")[..., :3]


def embedded_images(page: str) -> dict[str, bytes]:
    found = re.findall(r"<img id='([\w-]+)'[^>]*src='data:image/png;base64,([A-Za-z0-9+/=]+)'",
                       page)
    return {name: base64.b64decode(data) for name, data in found}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run")
    write_reports(out, hand_made_results(), ["md", "html"])
    return out


def test_html_embeds_the_heatmap_as_png(written: Path):
    page = (written / "report.html").read_text(encoding="utf-8")
    images = embedded_images(page)
    assert set(images) == {"heatmap", "training-curves"}
    width, height = png_size(images["heatmap"])
    assert width > 400 and height > 150
    assert images["heatmap"] == (written / "figures" / HEATMAP_FILE).read_bytes()
    # self-contained: nothing is fetched (no source but data:, no stylesheet, no script, no link)
    assert not re.search(r"src=['\"](?!data:)", page)
    # nothing fetched: links only within the page (the table of contents)
    assert "<link" not in page and "<script" not in page
    assert not re.search(r"href=['\"](?!#)", page)


def test_heatmap_shows_positive_red_negative_blue_and_undefined_grey():
    from matplotlib import colormaps

    data = heatmap_png(Correlations.model_validate(
        {"matrix": {"id": {"MR": cell(0.9), "CR": cell(-0.8), "TREC": cell(None)}}}))
    rgb = pixels(data)

    def near(colour) -> np.ndarray:
        return np.abs(rgb - np.asarray(colour)[:3]).max(axis=-1) < 0.02

    # rho in [-1, 1] maps linearly onto the diverging colour map
    red = near(colormaps[HEATMAP_COLORMAP]((0.9 + 1) / 2))
    blue = near(colormaps[HEATMAP_COLORMAP]((-0.8 + 1) / 2))
    grey = near([0xd9 / 255] * 3)
    assert red.any() and rgb[red][:, 0].mean() > rgb[red][:, 2].mean() + 0.3      # red
    assert blue.any() and rgb[blue][:, 2].mean() > rgb[blue][:, 0].mean() + 0.3   # blue
    # each cell is tens of pixels wide and high
    assert red.sum() > 1000 and blue.sum() > 1000 and grey.sum() > 1000
    # the red cell (MR) lies left of the blue one (CR), the grey one (TREC) right of both
    assert np.nonzero(red)[1].mean() < np.nonzero(blue)[1].mean() < np.nonzero(grey)[1].mean()


def test_heatmap_adds_mean_and_min_columns():
    from matplotlib import colormaps

    colour = np.asarray(colormaps[HEATMAP_COLORMAP]((0.5 + 1) / 2))[:3]
    matrix = {"id": {"MR": cell(0.5), "CR": cell(-0.5)}}

    def coloured(data: bytes) -> int:
        return int((np.abs(pixels(data) - colour).max(axis=-1) < 0.02).sum())

    alone = coloured(heatmap_png(Correlations.model_validate({"matrix": matrix})))
    with_summary = coloured(heatmap_png(Correlations.model_validate(
        {"matrix": matrix, "summary": {"id": {"mean": 0.5, "min": 0.5}}})))
    # 1 of 2 cells has that colour, then 3 of 4 in a heatmap as wide: 1.5 times the area
    assert with_summary > 1.4 * alone > 0


def test_markdown_has_the_tables_figures_and_notes(written: Path):
    text = (written / "report.md").read_text(encoding="utf-8")
    assert text.startswith("# V2S report: hand-made")
    assert "## Notes" in text and "- no downstream scores for: qt (not in Table 5)" in text
    assert "| avg | mos-lstm | 15.2 [14.1, 16.3] | 40.2 [38.0, 42.5] |" in text
    assert f"![Correlation with downstream tasks (spearman)](figures/{HEATMAP_FILE})" in text
    assert f"(figures/{CURVES_FILE})" in text
    assert "| id | 0.90 | -0.80 | – | 0.05 | -0.80 | 4 |" in text      # rho, mean, min, n
    assert "| id | 0.083 | 0.200 | – |" in text                        # p-values
    assert "exact two-sided permutation p-values" in text
    # rank table sorted by downstream rank, with the difference
    ranks = text[text.index("## Ranks"):]
    assert ranks.index("| sbert | 1 | 3 | 2 |") < ranks.index("| laser | 2 | 1 | -1 |")
    assert "Spearman correlation of the two rankings over 4 encoders: 0.40" in ranks
    # samples: the input, then each encoder's output; a pipe in text is escaped
    assert "| input |  | the point is , stoller adds \\| i 'm not sure . |" in text
    assert "| avg | mos-lstm | i 'm sure , it is the <point> |" in text
    assert "| avg | mos-lstm | 3 | 2.500 | 2.750 | 1234 | 88.8 |" in text


def test_html_has_the_same_tables_escaped(written: Path):
    page = (written / "report.html").read_text(encoding="utf-8")
    assert "<li>no downstream scores for: qt (not in Table 5)</li>" in page
    assert "<td>15.2 [14.1, 16.3]</td>" in page
    assert "i &#x27;m sure , it is the &lt;point&gt;" in page
    assert "<th>V2S rank (id)</th>" in page
    # run, diagnostics, rho, p, ranks, 1 sample, training
    assert page.count("<table") == 7


def test_training_curves_absent_are_said_and_not_drawn(tmp_path: Path):
    write_reports(tmp_path, hand_made_results(curves=False), ["md", "html"])
    assert not (tmp_path / "figures" / CURVES_FILE).exists()
    assert (tmp_path / "figures" / HEATMAP_FILE).exists()
    assert "No training curves were recorded." in (tmp_path / "report.md").read_text()
    assert set(embedded_images((tmp_path / "report.html").read_text())) == {"heatmap"}
    assert training_curves_png([PairResult(encoder="a", decoder="b")]) is None


def test_training_curves_png():
    data = training_curves_png(hand_made_results().runs)
    assert data is not None and png_size(data)[0] > 300


def test_no_heatmap_without_a_defined_correlation(tmp_path: Path):
    data = hand_made_data()
    data["correlations"]["matrix"] = {"id": {"MR": cell(None, n=2)}}
    write_reports(tmp_path, RunResults.model_validate(data), ["md"])
    assert not (tmp_path / "figures" / HEATMAP_FILE).exists()
    assert "figures/heatmap.png" not in (tmp_path / "report.md").read_text()


def test_report_of_published_tables_shows_their_values():
    results = RunResults.model_validate(
        {"schema": SCHEMA, "spec": {"name": "paper"}, "runs": [],
         "diagnostics": {"id": {"avg": 15.18, "laser": 18.52}},
         "diagnostics_source": "Kerscher & Eger 2020, Table 4",
         "correlations": {"method": "spearman", "decoder": "", "matrix": {}, "ranks": {}}})
    text = render_markdown(results, figures={})
    assert "As published (Kerscher & Eger 2020, Table 4); no intervals." in text
    assert "| laser | 18.52 |" in text
    assert "## Training" not in text


def test_write_run_then_harness_report_rebuilds(tmp_path: Path):
    sample = tmp_path / "cache-samples.jsonl"
    sample.write_text(json.dumps({"reference": "a", "hypothesis": "a"}) + "\n")
    out = tmp_path / "run"
    out.mkdir()
    write_run(out, hand_made_results(), {("avg", "mos-lstm"): sample}, ["md"])
    assert (out / "samples" / "avg__mos-lstm.jsonl").read_text() == sample.read_text()
    assert load_results(out).name == "hand-made"
    assert not (out / "report.html").exists()
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 0, result.output
    assert embedded_images((out / "report.html").read_text())["heatmap"] == (
        out / "figures" / HEATMAP_FILE).read_bytes()


def test_a_reused_run_directory_keeps_only_this_runs_samples_and_figures(tmp_path: Path):
    sample = tmp_path / "cache-samples.jsonl"
    sample.write_text(json.dumps({"reference": "a", "hypothesis": "a"}) + "\n")
    out = tmp_path / "run"
    (out / "samples").mkdir(parents=True)
    (out / "figures").mkdir()
    (out / "samples" / "hier__mos-lstm.jsonl").write_text("{}\n")  # an earlier run's
    (out / "figures" / "old-curve.png").write_bytes(b"png")
    (out / "notes.txt").write_text("mine\n")
    write_run(out, hand_made_results(), {("avg", "mos-lstm"): sample}, ["md"])
    assert sorted(p.name for p in (out / "samples").iterdir()) == ["avg__mos-lstm.jsonl"]
    assert "old-curve.png" not in {p.name for p in (out / "figures").iterdir()}
    assert (out / "notes.txt").read_text() == "mine\n"  # not the harness's to remove


def test_load_results_errors_name_the_file(tmp_path: Path):
    with pytest.raises(DataError, match="results.json: not found"):
        load_results(tmp_path)
    (tmp_path / "results.json").write_text("{\n  oops")
    with pytest.raises(DataError, match=r"results.json:2: malformed JSON"):
        load_results(tmp_path)
    (tmp_path / "results.json").write_text('{"schema": "other/1"}')
    with pytest.raises(DataError, match="expected 'v2s-harness/results/1'"):
        load_results(tmp_path)
