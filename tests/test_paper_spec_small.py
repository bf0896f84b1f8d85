"""The paper's spec end to end on a CPU, small: `benchmarks/v2s.yaml` on a News-Crawl-like
fixture prepared through `harness data newscrawl`, with the README's `--set` overrides (a small
decoder, every encoder that runs offline, synthetic downstream tasks), then once more with the
spec's own SentEval tasks on a tiny copy of SentEval's data. The paper's Tables 4 and 5 are
shown beside the results and never used: no encoder run here is a model they measured. Marked
`slow` (a few minutes on 2 cores)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from benchmarks.newscrawl_fixture import write_fixture
from harness.cli import main
from tests.test_downstream_fixtures import write_senteval_fixture

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
    # Table 5 measured other models: every offline encoder's scores are computed here
    assert results["downstream_origin"] == dict.fromkeys(OFFLINE, "computed")
    assert set(results["correlations"]["matrix"]) == {"id", "perm", "id-perm", "bleu", "mover"}
    assert results["encoders"]["avg"]["declares"] == {"vectors": "run-trained bpe1000 100d",
                                                      "dim": 100}
    assert results["encoders"]["sbert"]["declares"] == {"model": "all-MiniLM-L6-v2", "dim": 384,
                                                        "normalise": False}
    assert [t["source"] for t in results["published"]] == ["Kerscher & Eger 2020, Table 4",
                                                           "Kerscher & Eger 2020, Table 5"]
    assert not any(match for table in results["published"] for match in table["matches"].values())

    # The spec's own downstream section: SentEval's tasks on SentEval's layout (a tiny copy;
    # MR and the STS years, for time), with everything else taken from the cache.
    write_senteval_fixture(tmp_path / "senteval")
    senteval = [s for s in sets if not s.startswith("downstream=")] + [
        f"downstream.data_dir={tmp_path / 'senteval'}", "downstream.config=prototyping",
        "downstream.tasks=[MR, STS12, STS13, STS14, STS15, STS16]"]
    args = ["run", str(REPO / "benchmarks" / "v2s.yaml"), "--out", str(tmp_path / "senteval-run")]
    for value in senteval:
        args += ["--set", value]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    results = json.loads((tmp_path / "senteval-run" / "results.json").read_text())
    assert results["downstream_origin"] == dict.fromkeys(OFFLINE, "computed")
    table5 = yaml.safe_load((REPO / "benchmarks" / "paper" / "senteval-table5.yaml").read_text())
    for encoder, row in results["downstream"].items():
        assert {"MR", "STS"} <= set(row)  # STS: the mean of the five years, as Table 5's column
        assert row["MR"] != table5["scores"][encoder]["MR"]
