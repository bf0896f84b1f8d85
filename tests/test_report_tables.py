"""The report's table of contents, and its main tables as CSV (`harness report --format csv`),
checked against the hand-made results of `report_fixtures`."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from click.testing import CliRunner

from harness.cli import main
from harness.report.render import anchor
from harness.report.write import render_html, render_markdown, write_reports
from tests.report_fixtures import (
    BLEU,
    DOWNSTREAM,
    ID,
    P_HOLM,
    P_VALUES,
    RANK_INTERVALS,
    TASKS,
    rich_results,
)


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_anchors_are_githubs() -> None:
    assert anchor("Gain over the floor") == "gain-over-the-floor"
    assert anchor("Correlation with downstream tasks (spearman)") == (
        "correlation-with-downstream-tasks-spearman")
    assert anchor("V2S diagnostics") == "v2s-diagnostics"


def test_markdown_and_html_open_with_a_table_of_contents() -> None:
    results = rich_results()
    markdown = render_markdown(results)
    headings = re.findall(r"^## (.+)$", markdown, flags=re.MULTILINE)
    assert len(headings) > 8
    contents = markdown.split("**Contents**\n\n")[1].split("\n\n")[0].splitlines()
    assert contents == [f"- [{h}](#{anchor(h)})" for h in headings]
    page = render_html(results)
    assert page.index("<nav id='contents'>") < page.index("<section id=")
    for heading in headings:
        assert f"<a href='#{anchor(heading)}'>" in page
        assert f"<section id='{anchor(heading)}'>" in page


def test_csv_tables_hold_the_reports_numbers(tmp_path: Path) -> None:
    results = rich_results()
    write_reports(tmp_path, results, ["csv"])
    written = sorted(p.name for p in (tmp_path / "tables").iterdir())
    assert written == ["correlations.csv", "diagnostics.csv", "downstream.csv", "ranks.csv"]
    assert not (tmp_path / "report.md").exists()  # csv alone writes only the tables

    diagnostics = rows((tmp_path / "tables" / "diagnostics.csv").read_text())
    laser_id = next(r for r in diagnostics if (r["encoder"], r["decoder"], r["diagnostic"])
                    == ("laser", "mos-lstm", "id"))
    assert float(laser_id["value"]) == ID["laser"]
    assert (float(laser_id["ci95_low"]), float(laser_id["ci95_high"])) == (ID["laser"] - 2,
                                                                         ID["laser"] + 2)
    assert (laser_id["support"], laser_id["seeds"], laser_id["empty_outputs"]) == ("500", "3", "")
    bleu = {r["encoder"]: float(r["value"]) for r in diagnostics
            if r["diagnostic"] == "bleu" and r["decoder"] == "mos-lstm"}
    assert bleu == BLEU
    assert len(diagnostics) == 5 * 3 + 3  # five mos-lstm pairs and avg / simple-lstm

    ranks = rows((tmp_path / "tables" / "ranks.csv").read_text())
    assert {r["encoder"]: [int(r["rank_low"]), int(r["rank_high"])] for r in ranks} == (
        RANK_INTERVALS)

    downstream = rows((tmp_path / "tables" / "downstream.csv").read_text())
    assert {(r["encoder"], r["task"]): float(r["score"]) for r in downstream} == {
        (e, t): s for e, tasks in DOWNSTREAM.items() for t, s in tasks.items()}
    assert {r["source"] for r in downstream if r["encoder"] == "laser"} == {"reference"}

    correlations = rows((tmp_path / "tables" / "correlations.csv").read_text())
    for diagnostic, values in P_VALUES.items():
        got = {r["task"]: (float(r["p"]), float(r["p_holm"])) for r in correlations
               if r["diagnostic"] == diagnostic}
        assert got == dict(zip(TASKS, zip(values, P_HOLM[diagnostic])))


def test_harness_report_format_csv(tmp_path: Path) -> None:
    rich_results().save(tmp_path)
    result = CliRunner().invoke(main, ["report", str(tmp_path), "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "tables" / "diagnostics.csv").stat().st_size > 100
