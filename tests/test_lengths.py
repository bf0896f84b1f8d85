"""Diagnostics by reference length: bins that partition the test set, per-bin scores recomputed
from the bin's statistics (Id by hand, BLEU against sacrebleu), the spec option, and the report's
section and figure."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from sacrebleu import corpus_bleu
from scipy.stats import binomtest

from harness.analyses.lengths.breakdown import (
    MAX_BINS,
    auto_edges,
    bin_index,
    least_per_bin,
    length_bins,
    length_breakdown,
    reference_lengths,
)
from harness.analyses.lengths.report import (
    LENGTHS_FILE,
    bin_label,
    length_figures,
    length_panels,
    lengths_section,
    silent_panels,
)
from harness.analyses.lengths.results import LengthBin
from harness.analyses.lengths.spec import BreakdownSection
from harness.errors import SpecError
from harness.report.plots import length_figure
from harness.report.write import write_reports
from harness.results.model import RunResults, load_results
from harness.spec import load_spec
from harness.stages.base import RunContext
from harness.util.cache import Cache
from harness_plugins.metrics.bleu import BleuMetric
from harness_plugins.metrics.overlap import IdentityMetric
from tests.report_fixtures import ENCODERS, rich_data, section

# --------------------------------------------------------------------------------- the bins


def assert_partition(lengths: np.ndarray, edges: list[int]) -> list[LengthBin]:
    """Each sentence lies in exactly one bin, the one `bin_index` gives, and the counts add up."""
    bins = length_bins(lengths, edges)
    assert len(bins) == len(edges) + 1
    assert sum(b.n for b in bins) == len(lengths)
    inside = np.array([[(b.low is None or length >= b.low) and (b.high is None or length <= b.high)
                        for b in bins] for length in lengths]).reshape(len(lengths), len(bins))
    assert (inside.sum(axis=1) == 1).all()
    assert (inside.argmax(axis=1) == bin_index(lengths, edges)).all()
    assert [b.n for b in bins] == list(inside.sum(axis=0))
    return bins


@pytest.mark.parametrize("n", [1, 10, 59, 60, 61, 100, 149, 500, 2000, 10000])
@pytest.mark.parametrize("shape", ["poisson", "uniform", "one-length", "skewed"])
def test_automatic_bins_partition_the_test_set_and_hold_enough_sentences(n: int, shape: str):
    rng = np.random.default_rng(n)
    lengths = {"poisson": np.clip(rng.poisson(8, n), 1, 14),
               "uniform": rng.integers(1, 15, n),
               "one-length": np.full(n, 7),
               "skewed": np.where(rng.random(n) < 0.9, 3, rng.integers(4, 15, n))}[shape]
    edges = auto_edges(lengths)
    bins = assert_partition(lengths, edges)
    assert len(bins) <= MAX_BINS
    assert edges == sorted(set(edges))
    if len(bins) > 1:
        assert min(b.n for b in bins) >= least_per_bin(n) >= 30
    if n < 2 * least_per_bin(n) or shape == "one-length":
        assert edges == []


def test_automatic_bins_of_equal_lengths_are_the_quintiles():
    lengths = np.repeat(np.arange(1, 11), 100)
    assert auto_edges(lengths) == [3, 5, 7, 9]
    assert [(b.low, b.high, b.n) for b in length_bins(lengths, [3, 5, 7, 9])] == [
        (None, 2, 200), (3, 4, 200), (5, 6, 200), (7, 8, 200), (9, None, 200)]


def test_given_edges_partition_the_test_set_empty_bins_included():
    lengths = np.array([1, 2, 4, 5, 5, 9, 10, 13])
    bins = assert_partition(lengths, [5, 10, 12])
    assert [bin_label(b) for b in bins] == ["≤4", "5–9", "10–11", "≥12"]
    assert [b.n for b in bins] == [3, 3, 1, 1]
    assert [b.n for b in assert_partition(lengths, [20])] == [8, 0]
    assert bin_label(LengthBin(low=None, high=None)) == "all"
    assert bin_label(LengthBin(low=6, high=6)) == "6"


def test_reference_length_counts_whitespace_tokens_of_the_normalised_reference():
    assert list(reference_lengths(["the cat sat .", "  a  b ", "x"])) == [4, 2, 1]


# ------------------------------------------------------------------------- per-bin scores

REFS = ["a b", "c d", "e f", "g h",  # 2 tokens
        "a b c d", "e f g h", "i j k l", "m n o p",  # 4 tokens
        "a b c d e f", "g h i j k l", "m n o p q r"]  # 6 tokens
HYPS = ["a b", "c d", "e f", "x y",
        "a b c d", "e f g x", "l k j i", "m n o",
        "a b c d e f", "g h i j k", "m n o p q r s"]
# identical: 3 of 4, 1 of 4, 1 of 3


def component(name: str, metric: object) -> SimpleNamespace:
    """What the stage reads of a spec's metric component."""
    return SimpleNamespace(name=name, plugin="test-plugin", info=SimpleNamespace(kind="metric", needs=()),
                           identity=lambda: {"name": name},
                           build=lambda context, purpose="": metric)


def context(tmp_path: Path, metrics: dict[str, object], bins: object) -> RunContext:
    section = BreakdownSection(length_bins=bins)
    spec = SimpleNamespace(seed=7, metrics=[component(n, m) for n, m in metrics.items()],
                           decoders=[SimpleNamespace(name="lstm")],
                           section=lambda key, kind: {"breakdown": section}[key])
    return RunContext(spec=spec, cache=Cache(root=tmp_path / "cache"))  # type: ignore[arg-type]


def test_id_per_bin_is_the_rate_of_each_bin_with_its_exact_interval(tmp_path):
    metric = IdentityMetric()
    statistics = {("lstm", "id"): {"avg": [metric.sentence_statistics(REFS, HYPS)]}}
    breakdown = length_breakdown(context(tmp_path, {"id": metric}, [3, 5]), statistics, REFS)
    assert breakdown is not None and not breakdown.auto and breakdown.edges == [3, 5]
    assert [b.n for b in breakdown.bins] == [4, 4, 3]
    (run,) = breakdown.runs
    assert (run.encoder, run.decoder) == ("avg", "lstm")
    for score, (k, n) in zip(run.metrics["id"], [(3, 4), (1, 4), (1, 3)]):
        exact = binomtest(k, n).proportion_ci(method="exact")
        assert score.value == pytest.approx(100 * k / n)
        assert score.ci95 == pytest.approx((100 * exact.low, 100 * exact.high))
        assert (score.support, score.interval) == (n, "clopper-pearson")


def test_bleu_per_bin_is_sacrebleus_corpus_bleu_of_the_bins_sentences(tmp_path):
    metric = BleuMetric()
    statistics = {("lstm", "bleu"): {"avg": [metric.sentence_statistics(REFS, HYPS)]}}
    breakdown = length_breakdown(context(tmp_path, {"bleu": metric}, [3, 5]), statistics, REFS)
    assert breakdown is not None
    index = bin_index(reference_lengths(REFS), [3, 5])
    for b, score in enumerate(breakdown.runs[0].metrics["bleu"]):
        rows = [i for i in range(len(REFS)) if index[i] == b]
        expected = corpus_bleu([HYPS[i] for i in rows], [[REFS[i] for i in rows]]).score
        assert score.value == pytest.approx(expected, abs=1e-9)
        assert score.interval == "bootstrap" and score.support == len(rows)
        assert score.ci95[0] <= score.value <= score.ci95[1]


def test_per_bin_scores_over_seeds_are_their_mean_and_an_empty_bin_is_undefined(tmp_path):
    metric = IdentityMetric()
    other = list(HYPS)
    other[0] = "wrong"  # the second seed gets 2 of 4 in the first bin
    seeds = [metric.sentence_statistics(REFS, HYPS), metric.sentence_statistics(REFS, other)]
    ctx = context(tmp_path, {"id": metric}, [3, 5, 10])
    breakdown = length_breakdown(ctx, {("lstm", "id"): {"avg": seeds}}, REFS)
    assert breakdown is not None
    first, _, _, empty = breakdown.runs[0].metrics["id"]
    assert first.value == pytest.approx((75.0 + 50.0) / 2)
    assert first.seeds is not None and first.seeds.values == pytest.approx([75.0, 50.0])
    assert (empty.value, empty.support, breakdown.bins[-1].n) == (None, 0, 0)
    assert "lengths" in ctx.timings


def test_automatic_bins_are_recorded_with_their_least_size(tmp_path):
    metric = IdentityMetric()
    refs = [" ".join(["w"] * (1 + i % 10)) for i in range(300)]
    statistics = {("lstm", "id"): {"avg": [metric.sentence_statistics(refs, refs)]}}
    breakdown = length_breakdown(context(tmp_path, {"id": metric}, "auto"), statistics, refs)
    assert breakdown is not None and breakdown.auto and breakdown.least == 30
    assert breakdown.edges == auto_edges(reference_lengths(refs))
    assert all(s.value == 100.0 for s in breakdown.runs[0].metrics["id"])
    assert length_breakdown(context(tmp_path, {"id": metric}, "auto"), {}, refs) is None


# ------------------------------------------------------------------------------- the spec

SPEC = """\
name: t
corpus:
  train: {generate: quickstart, sentences: 100}
  test: {generate: quickstart, sentences: 20, seed: 2}
  max_tokens: 12
encoders: [avg]
"""


def load(tmp_path: Path, extra: str):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC + extra, encoding="utf-8")
    return load_spec(path)


def test_length_bins_default_to_auto_and_take_a_list_of_edges(tmp_path):
    assert load(tmp_path, "").breakdown.length_bins == "auto"
    assert load(tmp_path, "breakdown: {length_bins: [4, 8]}\n").breakdown.length_bins == [4, 8]


@pytest.mark.parametrize(("extra", "field", "words"), [
    ("breakdown:\n  length_bins: [8, 4]\n", "breakdown.length_bins", "increasing"),
    ("breakdown:\n  length_bins: [1]\n", "breakdown.length_bins", "at least 2"),
    ("breakdown:\n  length_bins: some\n", "breakdown.length_bins", "expected `auto`"),
    ("breakdown:\n  length_bins: [4, x]\n", "breakdown.length_bins.1", "integer"),
    ("breakdown:\n  length_bins: [4, 12]\n", "breakdown.length_bins", "max_tokens"),
    ("breakdown:\n  bins: [4]\n", "breakdown.bins", "unknown key"),
])
def test_bad_length_bins_name_file_line_and_field(tmp_path, extra: str, field: str, words: str):
    with pytest.raises(SpecError) as caught:
        load(tmp_path, extra)
    error = caught.value
    assert error.field == field and words in str(error)
    assert error.file.endswith("spec.yaml") and error.line in (7, 8)


# ----------------------------------------------------------------------------- the report


def with_lengths(data: dict) -> RunResults:
    """The report fixture with id and bleu of its mos-lstm pairs over three length bins."""
    bins = [{"low": None, "high": 4, "n": 150}, {"low": 5, "high": 8, "n": 200},
            {"low": 9, "high": None, "n": 150}]
    runs = [{"encoder": e, "decoder": "mos-lstm", "metrics": {
        "id": [{"value": 40.0 - 10 * b - i, "ci95": [35.0 - 10 * b - i, 45.0 - 10 * b - i],
                "support": bins[b]["n"], "interval": "clopper-pearson"} for b in range(3)],
        "id-perm": [{"value": 90.0, "ci95": [80.0, 95.0], "support": 12} for _ in range(3)]}}
        for i, e in enumerate(ENCODERS)]
    data["lengths"] = {"tokenisation": "whitespace", "auto": True, "least": 50,
                       "edges": [5, 9], "bins": bins, "runs": runs}
    return RunResults.model_validate(data)


def test_the_report_shows_the_length_table_and_figure(tmp_path):
    results = with_lengths(rich_data())
    write_reports(tmp_path, results, ["md", "html"])
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    part = section(text, "Diagnostics by reference length")
    assert "whitespace tokens of the normalised reference" in part
    assert "each holding at least 50 sentences" in part
    assert f"![Diagnostics by reference length](figures/{LENGTHS_FILE})" in part
    assert "| decoder | diagnostic | encoder | ≤4 (n=150) | 5–8 (n=200) | ≥9 (n=150) |" in part
    assert "| mos-lstm | id | laser | 40.0 [35.0, 45.0] | 30.0 [25.0, 35.0] |" in part
    assert "| mos-lstm | id-perm | gem | 90.0 [80.0, 95.0] n=12 |" in part
    assert (tmp_path / "figures" / LENGTHS_FILE).stat().st_size > 1000
    assert "<img id='lengths'" in (tmp_path / "report.html").read_text(encoding="utf-8")
    # results.json keeps the breakdown as written
    results.save(tmp_path)
    assert load_results(tmp_path).lengths == results.lengths


def test_the_length_figure_has_a_panel_per_diagnostic_and_a_line_per_encoder():
    results = with_lengths(rich_data())
    panels, diagnostic = length_panels(results)
    assert list(panels) == ["id", "id-perm"] and diagnostic == {"id": "id", "id-perm": "id-perm"}
    assert list(panels["id"]) == ENCODERS
    assert panels["id"]["laser"][0] == (40.0, 35.0, 45.0)
    figure = length_figure(["a", "b", "c"], panels)
    shown = [axes for axes in figure.axes if axes.get_visible()]
    assert len(shown) == 2
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ENCODERS


def test_panels_of_one_diagnostic_share_their_y_axis_and_silent_panels_are_left_out():
    points = [(1.0, 0.5, 1.5), (2.0, 1.5, 2.5)]
    panels = {"a: bleu": {"e": points}, "b: bleu": {"e": [(v * 10, lo * 10, hi * 10)
                                                         for v, lo, hi in points]},
              "a: cosine": {"e": [(99.0, 98.9, 99.1), (99.5, 99.4, 99.6)]}}
    figure = length_figure(["x", "y"], panels,
                           share={"a: bleu": "bleu", "b: bleu": "bleu", "a: cosine": "cosine"})
    first, second, cosine = figure.axes[:3]
    assert first.get_ylim() == second.get_ylim() and first.get_ylim()[1] >= 25.0
    assert cosine.get_ylim()[1] < 100.0  # its own range: not stretched to bleu's
    data = rich_data()
    results = with_lengths(data)
    zero = results.model_dump(mode="json")
    for run in zero["lengths"]["runs"]:  # id at the floor for every encoder in every bin
        run["metrics"]["id"] = [{"value": 0.0, "ci95": [0.0, 2.0], "support": 50}] * 3
    results = RunResults.model_validate(zero)
    panels, _ = length_panels(results)
    assert list(panels) == ["id-perm"] and silent_panels(results) == ["id"]
    part = lengths_section(results, {LENGTHS_FILE: b""})
    assert part is not None and ("Left out of the figure, being zero or undefined in every bin "
                                 "for every encoder: id (the table has them).") in part.text


def test_no_breakdown_no_section_and_no_figure():
    results = RunResults.model_validate(rich_data())
    assert lengths_section(results, {}) is None and length_figures(results) == {}
    one_bin = rich_data()
    one_bin["lengths"] = {"auto": True, "least": 30, "bins": [{"low": None, "high": None,
                                                               "n": 20}],
                          "runs": [{"encoder": "avg", "decoder": "mos-lstm",
                                    "metrics": {"id": [{"value": 5.0}]}}]}
    results = RunResults.model_validate(one_bin)
    assert length_figures(results) == {}
    shown = lengths_section(results, {})
    assert shown is not None and "too few to split into bins of at least 30" in shown.text[0]
