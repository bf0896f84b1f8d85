"""Empty outputs: counted per pair (results.json), flagged above one in twenty in the report,
and shown as "(empty)" wherever an output is shown; a tiny spec whose decoders have not learned
to generate yields them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.analyses.probes.analogies import AnalogyItem, AnalogySet, score_analogies
from harness.analyses.probes.queries import AnalogySetRun, SolvedSet
from harness.analyses.probes.text import render_analogy_run
from harness.registry.loader import load_registry
from harness.report.elements import empty_cell, empty_outputs, mostly_empty
from harness.results.model import GenerateSummary, PairResult, SeedRun
from harness.runner import run_spec
from harness.spec import load_spec
from harness.text.outputs import EMPTY, count_empty, is_empty, shown
from harness.util.cache import Cache


def test_empty_means_no_token() -> None:
    assert [is_empty(t) for t in ["", "  ", "\t\n", "a", " . "]] == [True] * 3 + [False] * 2
    assert shown("") == EMPTY == "(empty)" and shown("the cat") == "the cat"
    assert count_empty(["", "x", " ", "y y"]) == 2


def pair(*counts: tuple[int, int]) -> PairResult:
    summaries = [GenerateSummary(sentences_per_s=1.0, sentences=n, empty=e) for e, n in counts]
    seeds = [SeedRun(seed=i, generate=s) for i, s in enumerate(summaries)]
    return PairResult(encoder="enc", decoder="dec", generate=summaries[0],
                      seeds=seeds if len(seeds) > 1 else None)


def test_the_cell_counts_every_seed_and_flags_above_one_in_twenty() -> None:
    assert empty_outputs(pair((3, 10), (1, 10))) == (4, 20)
    assert empty_cell(pair((0, 500))) == "0 of 500 (0.0%)"
    assert empty_cell(pair((25, 500))) == "25 of 500 (5.0%)"  # exactly one in twenty: not over
    assert empty_cell(pair((26, 500))) == "26 of 500 (5.2%) ⚠"
    assert mostly_empty([pair((26, 500)), pair((25, 500))]) == ["enc / dec (26 of 500 empty)"]


def test_older_results_without_the_count_show_a_dash() -> None:
    old = PairResult(encoder="e", decoder="d", generate=GenerateSummary(sentences_per_s=2.0))
    assert empty_outputs(old) is None and empty_cell(old) == "–" and not mostly_empty([old])
    assert "empty" not in old.model_dump(mode="json")["generate"]


def test_analogy_labels_tell_empty_from_copied() -> None:
    items = (AnalogyItem(a="a b", b="c d", c="e f", expected="g h"),
             AnalogyItem(a="a b", b="c d", c="e f"), AnalogyItem(a="a b", b="c d", c="e f"))
    analogy_set = AnalogySet(name="set", source="test", form="paper", items=items)
    outputs = ["", "e f", "new one"]
    result, scored = score_analogies(analogy_set, outputs)
    text = render_analogy_run(AnalogySetRun(analogy_set, [SolvedSet("enc", "dec", result,
                                                                    scored)]))
    lines = [line for line in text.splitlines() if line.startswith("   enc -> dec")]
    assert lines == ["   enc -> dec  (empty)  (wrong, BLEU 0.0, empty)",
                     "   enc -> dec  e f  (copies a, b or c)",
                     "   enc -> dec  new one  (new)"]
    assert result.overall.novel.successes == 1


SPEC = """
name: empty
seed: 1
device: cpu
corpus:
  train: {generate: quickstart, sentences: 1000}
  test: {generate: quickstart, sentences: 60, seed: 9}
vocab: {bpe_size: 200, dim: 16, epochs: 2}
encoders: [{name: random-gaussian, dim: 16}]
decoders: [{name: mos-lstm, hidden: 32, epochs: 1, batch_size: 64}]
generation: {beam: 1, max_len: 20}
metrics: [id, bleu]
report: {formats: [md]}
"""


@pytest.fixture(scope="module")
def empty_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("empty")
    (root / "empty.yaml").write_text(SPEC)
    run_spec(load_spec(root / "empty.yaml", registry=load_registry()), root / "run",
             cache=Cache(root / "cache"))
    return root / "run"


def test_a_decoder_that_has_not_learned_yields_empty_outputs_and_the_warning(
        empty_run: Path) -> None:
    samples = [json.loads(line) for line in
               (empty_run / "samples" / "random-gaussian__mos-lstm.jsonl").read_text().splitlines()]
    empty = count_empty(s["hypothesis"] for s in samples)
    assert empty > 0.05 * len(samples)
    results = json.loads((empty_run / "results.json").read_text())
    assert results["runs"][0]["generate"]["empty"] == empty
    assert results["runs"][0]["generate"]["sentences"] == len(samples) == 60
    report = (empty_run / "report.md").read_text()
    assert f"{empty} of 60 ({100 * empty / 60:.1f}%) ⚠" in report
    assert "⚠ empty outputs: more than 5% of the outputs of random-gaussian / mos-lstm" in report
    assert "random-gaussian / mos-lstm (" in report.split("## What this run shows")[1]
    sample_rows = report.split("## Samples")[1]
    assert ("| random-gaussian | mos-lstm | (empty) |" in sample_rows) == (
        samples[0]["hypothesis"].strip() == "")
