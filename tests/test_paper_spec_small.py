"""The paper's spec end to end on a CPU, small: `benchmarks/v2s.yaml` on a News-Crawl-like
fixture prepared through `harness data newscrawl`, with the README's `--set` overrides (a small
decoder, every encoder that runs offline). Marked `slow` (a minute or two on 2 cores)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks.newscrawl_fixture import write_fixture
from harness.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_thread")]

REPO = Path(__file__).resolve().parent.parent
OFFLINE = ["avg", "gem", "hier", "avg-max-hier", "sent2vec", "sbert"]


def overrides(data: Path) -> list[str]:
    """The README's `--set` overrides for the small run, with the fixture's folder."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("## The paper's protocol, small"):]
    start = block.index("harness run benchmarks/v2s.yaml")
    block = block[start:block.index("```", start)]
    values = re.findall(r"--set '([^']*)'|--set (\S+)", block)
    return [(quoted or plain).replace("$DATA", str(data)) for quoted, plain in values]


def test_the_paper_spec_runs_end_to_end_small(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "newscrawl"
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    write_fixture(data, 3000)
    for year, lines in ((2007, 2000), (2008, 100)):
        done = CliRunner().invoke(main, [
            "data", "newscrawl", "--year", str(year), "--lines", str(lines), "--dir", str(data),
            "--url", str(data / f"news.{year}.en.shuffled.gz"), "--quiet"])
        assert done.exit_code == 0, done.output
    sets = overrides(data)
    assert any(s.startswith("encoders=") for s in sets), "the README's block lost its overrides"
    args = ["run", str(REPO / "benchmarks" / "v2s.yaml"), "--out", str(tmp_path / "run")]
    for value in sets:
        args += ["--set", value]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert [run["encoder"] for run in results["runs"]] == OFFLINE
    assert results["provenance"]["corpus"] == {"train": 2000, "test": 100}
    for run in results["runs"]:
        assert set(run["metrics"]) == {"id", "perm", "id-perm", "bleu", "mover"}
        assert run["metrics"]["bleu"]["support"] == 100
    # the paper's Table 5 is the downstream reference of every offline encoder
    assert set(results["downstream"]) == set(OFFLINE)
    assert set(results["correlations"]["matrix"]) == {"id", "perm", "id-perm", "bleu", "mover"}
