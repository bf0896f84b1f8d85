"""The citable report, section by section, on a hand-made results.json whose conclusions are
known (tests/report_fixtures.py): run header, definitions, diagnostics with support, seeds and
flags, rank stability, downstream scores, correlations with significance and multiple
comparisons, scatter plots, published tables, the generated summary, training curves."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from harness.analyses.correlation.heatmap import heatmap_figure
from harness.analyses.correlation.multiplicity import benjamini_hochberg, holm, multiplicity
from harness.analyses.correlation.scatter import mean_z_scores, scatter_points, scatter_title
from harness.analyses.correlation.summary import tracking_claims
from harness.analyses.rankings.report import no_difference_sentence
from harness.analyses.rankings.summary import ranking_claims
from harness.report.elements import scatter_file
from harness.report.plots import scatter_figure, training_curves_figure
from harness.report.sections import analyses_of
from harness.report.summary import caveats, summary_section
from harness.report.write import render_markdown, write_reports
from harness.results.model import RunResults, load_results
from tests.report_fixtures import ID_PERM, P_VALUES, rich_data, rich_results, section

REPO = Path(__file__).resolve().parents[1]
DIAGNOSTICS = ["id-perm", "id", "bleu", "perm"]


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rich")
    write_reports(out, rich_results(), ["md", "html"])
    return out


@pytest.fixture(scope="module")
def text(written: Path) -> str:
    return (written / "report.md").read_text(encoding="utf-8")


def variant(**changes) -> RunResults:
    data = rich_data()
    data.update(changes)
    return RunResults.model_validate(data)


# ------------------------------------------------------------------------------------- header


def test_header_names_corpus_vocab_decoders_encoders_and_provenance(text: str):
    first = text.splitlines()[2]
    assert first == ("harness 0.2.0, commit 0123456789ab, spec sha256 feedbeeffeed, seed 1, "
                     "device cuda (NVIDIA H100 80GB HBM3), threads torch 8, 3600 s")
    run = section(text, "Run")
    assert ("| corpus | train: 19,876 sentences, generated (quickstart, 20000 asked); test: 500 "
            "sentences, file newscrawl.2008.txt (first 500); fewer than 15 tokens; "
            "lower-cased, digits as 0 |") in run
    assert "| vocabulary | trained BPE, 1000 pieces, 100-d vectors, fastText 25 epochs |" in run
    assert "| decoder mos-lstm | layers=1, hidden=256; 3 seeds |" in run
    assert "| decoder simple-lstm | hidden=128; 1 seed; for avg only |" in run
    assert "| comparison | min support 30, 1000 bootstrap resamples |" in run
    assert "| correlation | spearman, rank by id-perm |" in run  # the correlation analysis's
    assert "| packages | torch 2.3.0, numpy 2.1.0 |" in run
    assert "| laser | harness_plugins 0.2.0 | 1024 | model=LASER (93 languages) | defaults |" in run
    assert "| avg | harness_plugins | 100 | – | pooling=mean |" in run


def test_definitions_name_the_metrics_doc(written: Path, text: str):
    part = section(text, "What the diagnostics measure")
    for name in ("Id:", "Id/PERM: 100 x Id / PERM", "BLEU:"):  # the runs' diagnostics
        assert f"- {name}" in part
    # named in plain text: a report is shared without the harness's checkout beside it
    assert "docs/metrics.md in the v2s-harness documentation" in part and "](" not in part


# -------------------------------------------------------------------------------- diagnostics


def test_diagnostics_show_seeds_support_flags_and_interval_methods(text: str):
    part = section(text, "V2S diagnostics")
    assert "| encoder | decoder | seeds | id | id-perm | bleu | training |" in part
    assert ("| laser | mos-lstm | 3 | 40.0 ± 0.5 [38.0, 42.0] n=500 | 96.5 ± 1.5 [94.5, 98.5] "
            "n=207 | 52.9 ± 0.2 [50.9, 54.9] n=500 | ⚠ still improving (1 of 3 seeds) |") in part
    # id-perm of gem rests on 4 permutations: flagged; 86 for hier is not
    assert "84.0 ± 1.5 [82.0, 86.0] n=4 ⚠" in part
    assert "86.6 ± 1.5 [84.6, 88.6] n=86 |" in part
    assert ("| avg | simple-lstm | 1 | 9.0 [7.0, 11.0] n=500 | 30.0 [28.0, 32.0] n=150 | "
            "30.0 [28.0, 32.0] n=500 | ⚠ still improving (best epoch 10 of 10) |") in part
    assert "| avg | mos-lstm | 3 |" in part and "| best epoch 7 of 10 |" in part
    assert ("- mos-lstm: id, id-perm by the exact Clopper-Pearson bounds at the summed success "
            "fractions over seeds, n sentences (Korn & Graubard 1998, design effect truncated "
            "at 1), plus a seed component") in part
    assert ("- mos-lstm: bleu by a percentile bootstrap over test sentences, each with all its "
            "seeds, plus a seed component (Student t over the seeds' values, combined by "
            "MOVER): seed variance included.") in part
    assert "- simple-lstm: id, id-perm by the exact Clopper-Pearson interval" in part
    assert "- simple-lstm: bleu by a percentile bootstrap over test sentences." in part
    assert ("⚠ support under 30 (comparison.min_support): id-perm of sbert / mos-lstm (n=12), "
            "id-perm of gem / mos-lstm (n=4).") in part
    assert "laser / mos-lstm and avg / simple-lstm was lowest in the last epoch" in part
    assert "id-perm of gem / mos-lstm is undefined in 17 bootstrap resamples" in part


def test_min_support_comes_from_the_spec():
    data = rich_data()
    data["spec"]["correlation"]["min_support"] = 100
    part = section(render_markdown(RunResults.model_validate(data), figures={}),
                   "V2S diagnostics")
    assert "n=86 ⚠" in part and "n=207 |" in part and "support under 100" in part


# ------------------------------------------------------------------------------------ ranking


def test_rank_stability_table_with_intervals_and_significant_differences(text: str):
    part = section(text, "Rank stability")
    assert "**Decoder mos-lstm**" in part
    assert "survives Holm's correction over all the pairs of the diagnostic" in part
    rows = [line for line in part.splitlines() if line.startswith("| id-perm |")]
    assert rows == ["| id-perm | laser | 96.5 | 1 | 1–3 | 1 | avg, gem |",
                    "| id-perm | sbert | 94.8 | 2 | 1–4 | 1 | gem |",
                    "| id-perm | hier | 86.6 | 3 | 1–5 | 1 | – |",
                    "| id-perm | gem | 84.0 | 4 | 3–5 | 1 | – |",
                    "| id-perm | avg | 35.1 | 5 | 2–5 | 1 | – |"]
    assert ("- mos-lstm, id-perm: 3 of 10 pairs differ significantly after Holm's correction "
            "(500 test sentences; the paired permutation test; seeds averaged per sentence: "
            "these decoders compared, seed variance not included); some encoder's score was "
            "undefined in 17 bootstrap resamples") in part
    assert "Seed variance included" not in part


def test_lower_is_better_reverses_who_wins():
    data = rich_data()
    for run in data["runs"]:
        run["metrics"]["id-perm"]["higher_is_better"] = False
    results = RunResults.model_validate(data)
    part = section(render_markdown(results, figures={}), "Rank stability")
    assert "| id-perm | avg | 35.1 | 5 | 2–5 | 1 | laser |" in part.replace("35.10", "35.1")
    assert "lower, which is better, than laser" in ranking_claims(results)[0]


# --------------------------------------------------------------------------------- downstream


def test_downstream_table_marks_origin_and_lists_missing_encoders(text: str):
    part = section(text, "Downstream scores")
    assert "| encoder | origin | MR | CR | STSB |" in part
    assert "| laser | reference table | 80.00 | 83.00 | 0.70 |" in part
    assert "| gem | computed | 63.50 | 72.60 | 0.47 |" in part
    assert "- qt: weights not found" in part
    assert "Source: Kerscher & Eger 2020, Table 5; computed by the harness." in part


def test_an_encoder_without_scores_or_reason_is_listed_as_missing():
    data = rich_data()
    del data["downstream"]["hier"]
    del data["downstream_missing"]
    part = section(render_markdown(RunResults.model_validate(data), figures={}),
                   "Downstream scores")
    assert "- hier: no reason recorded" in part


# ------------------------------------------------------------------------------ correlations


def test_correlation_tables_mark_significance_and_show_intervals(text: str):
    part = section(text, "Correlation with downstream tasks (spearman)")
    assert ("| id-perm | 0.90* [0.60, 1.00] | 0.80* [0.50, 1.00] | 0.70* [0.40, 1.00] | "
            "0.80 [0.50, 0.95] | 0.70 | 5 |") in part
    assert "| perm | 0.10 [-0.20, 0.40] | 0.60 [0.30, 0.90] | 0.40 [0.10, 0.70] | 0.37 |" in part
    assert "| bleu | -0.90* [-1.00, -0.60] |" in part
    assert "| id | 0.200 | 0.040 | 0.500 |" in part
    assert ("Multiple comparisons: the matrix holds 12 tests; 5 have p < 0.05, where about 0.6 "
            "would by chance alone if no diagnostic tracked any task; 1 survives Holm's "
            "correction (family-wise error 0.05) and 3 Benjamini-Hochberg's") in part


def test_holm_and_benjamini_hochberg_against_known_values():
    pvalues = [p for ps in P_VALUES.values() for p in ps]
    assert sum(holm(pvalues)) == 1 and holm(pvalues)[0]  # only 0.004 <= 0.05 / 12
    assert [p for p, kept in zip(pvalues, benjamini_hochberg(pvalues)) if kept] == [
        0.004, 0.008, 0.012]
    # BH is step-up: 0.04 at rank 4 of 4 passes (0.04 <= 0.05) and takes every smaller one along
    assert benjamini_hochberg([0.04, 0.03, 0.045, 0.02]) == [True] * 4
    assert holm([0.04, 0.03, 0.045, 0.02]) == [False] * 4
    assert holm([]) == [] and benjamini_hochberg([]) == []
    scipy_stats = pytest.importorskip("scipy.stats")
    if hasattr(scipy_stats, "false_discovery_control"):
        adjusted = scipy_stats.false_discovery_control(pvalues)
        assert benjamini_hochberg(pvalues) == [bool(a <= 0.05) for a in adjusted]
    counts = multiplicity(rich_results().correlations)
    assert (counts.tests, counts.significant, counts.holm, counts.bh) == (12, 5, 1, 3)
    assert counts.expected == pytest.approx(0.6)


def test_heatmap_marks_significant_cells():
    figure = heatmap_figure(rich_results().correlations)
    labels = [t.get_text() for t in figure.axes[0].texts]
    assert labels[:5] == ["0.90*", "0.80*", "0.70*", "0.80", "0.70"]  # mean, min unmarked
    assert labels[5:8] == ["0.50", "0.90*", "0.10"]
    assert "* p < 0.05" in figure.axes[0].get_title()


# ----------------------------------------------------------------------------------- scatter


def test_mean_z_scores_put_tasks_on_one_scale():
    z = mean_z_scores({"a": {"acc": 70.0, "sts": 0.5}, "b": {"acc": 90.0, "sts": 0.7},
                       "c": {"acc": 80.0}})
    # acc: mean 80, sd sqrt(200/3); sts: mean 0.6, sd 0.1 (a and b only)
    sd = (200 / 3) ** 0.5
    assert z["a"] == pytest.approx((-10 / sd - 1) / 2)
    assert z["b"] == pytest.approx((10 / sd + 1) / 2)
    assert z["c"] == pytest.approx(0.0)
    # a task with no spread or a single encoder says nothing
    assert mean_z_scores({"a": {"x": 1.0, "y": 3.0}, "b": {"x": 1.0}}) == {}


def test_scatter_plots_one_per_diagnostic_with_rho_in_the_title(written: Path, text: str):
    for diagnostic in DIAGNOSTICS:
        assert (written / "figures" / scatter_file(diagnostic)).is_file()
        assert f"(figures/{scatter_file(diagnostic)})" in text
    results = rich_results()
    points = scatter_points(results)["id-perm"]
    assert set(points) == set(ID_PERM) and points["laser"].x == 96.5
    assert points["laser"].x_interval == (94.5, 98.5) and not points["laser"].control
    title = scatter_title(results, "id-perm", points)
    # mean z-scores rank sbert 1, laser 2, avg 3, hier 4, gem 5; id-perm ranks laser 1,
    # sbert 2, hier 3, gem 4, avg 5: rho = 1 - 6 * (1 + 1 + 4 + 1 + 1) / (5 * 24) = 0.6
    assert title.startswith("id-perm: rho = 0.60 (p ")
    assert title.endswith("n 5); mean rho over tasks 0.80")
    figure = scatter_figure(points, title=title, xlabel="id-perm", ylabel="z")
    assert {t.get_text() for t in figure.axes[0].texts} == set(ID_PERM)
    assert len(figure.axes[0].collections) >= 2 * len(ID_PERM)  # a bar and a marker each
    assert "mean of an encoder's z-scores" in section(
        text, "Diagnostics against downstream performance")
    assert scatter_file("id-perm:raw") == "scatter-id-perm_raw.png"


# --------------------------------------------------------------------------------- published


def test_published_tables_beside_ours(text: str):
    part = section(text, "Comparison with published tables")
    assert "It is a comparison, not a replication check" in part
    assert ("| encoder | same model | bleu (this run) | bleu (published) | id (this run) | "
            "id (published) | id-perm (this run) | id-perm (published) |") in part
    assert "| avg | yes | 33.50 | 33.51 | 15.20 | 15.18 | 35.10 | 35.12 |" in part
    assert "| sbert | no (published: bert-base-nli-mean-tokens) | 21.50 | 21.50 |" in part
    assert "infersent" not in part  # not in this run
    assert "**This run (downstream scores) vs Kerscher & Eger 2020, Table 5**" in part
    assert "| avg | yes | 72.20 | 72.18 | 74.50 | 74.49 |" in part


# ----------------------------------------------------------------------------------- summary


def test_summary_states_the_known_conclusions(text: str):
    part = section(text, "What this run shows")
    assert ("On id-perm (decoder mos-lstm; 500 test sentences; the paired permutation test; "
            "seeds averaged per sentence: these decoders compared, seed variance not included), "
            "3 of 10 encoder pairs differ significantly after Holm's correction: laser scores "
            "significantly higher than avg and gem; sbert scores significantly higher than gem. "
            "The other 7 pairs do not differ significantly.") in part
    # one cell survives Holm over the 12 tests; nothing else is called an association
    assert ("Associations with downstream performance that survive Holm's correction over the "
            "12 diagnostic x task tests: id-perm tracks MR (rho 0.90, exact p 0.004, "
            "Holm-adjusted 0.048, 5 encoders).") in part
    assert ("not significant after correction: id 0.50 [-0.20, 0.80]; bleu -0.50 [-0.90, "
            "-0.10]; perm 0.37.") in part
    assert "tracked by" not in part and "bleu tracks" not in part
    notes = caveats(rich_results(), analyses_of(rich_results()))
    assert notes[0] == ("id-perm of sbert / mos-lstm and id-perm of gem / mos-lstm rest on "
                        "fewer than 30 sentences (low support).")
    assert notes[1].startswith("the decoders of laser / mos-lstm and avg / simple-lstm were "
                               "still improving")
    assert "only 5 encoders" in notes[2]
    assert notes[3] == ("5 of 12 correlations have p < 0.05, where about 0.6 would by chance; "
                        "1 survives Holm's correction.")
    assert notes[4] == "qt has no downstream scores and is left out of the correlations."
    assert all(f"- {note}" in part for note in notes)


def test_summary_names_the_pairs_that_do_not_differ_when_few():
    data = rich_data()
    ranking = data["rankings"]["mos-lstm"]["id-perm"]
    ranking["differences"] = [d for d in ranking["differences"]
                              if {d["a"], d["b"]} <= {"laser", "avg", "gem"}]
    claim = ranking_claims(RunResults.model_validate(data))[0]
    assert "2 of 3 encoder pairs differ significantly" in claim
    assert claim.endswith("No significant difference between avg and gem.")
    for d in ranking["differences"]:
        d["significant"] = False
    claim = ranking_claims(RunResults.model_validate(data))[0]
    assert "no two encoders differ significantly" in claim


def test_summary_names_several_pairs_that_do_not_differ_pair_by_pair():
    """Three pairs without a significant difference are named as pairs, not as one list of
    encoders that would read as six encoders ("between a and b and c and d")."""
    data = rich_data()
    ranking = data["rankings"]["mos-lstm"]["id-perm"]
    ranking["differences"] = [d for d in ranking["differences"]
                              if {d["a"], d["b"]} <= {"laser", "avg", "sbert", "gem"}]
    claim = ranking_claims(RunResults.model_validate(data))[0]
    assert "3 of 6 encoder pairs differ significantly" in claim
    assert claim.endswith("No significant difference within the pairs: laser and sbert; "
                          "avg and sbert; avg and gem.")
    assert "between" not in claim.split("Holm's correction:")[-1]
    assert no_difference_sentence([("avg", "avg-max-hier"), ("sent2vec", "multiview-d")]) == (
        "No significant difference within the pairs: avg and avg-max-hier; sent2vec and "
        "multiview-d.")
    one = no_difference_sentence([("avg", "gem")])
    assert one == "No significant difference between avg and gem."


def test_summary_claims_only_what_survives_holm_even_with_a_narrow_interval():
    """Per-task rho 0.46 and 0.36 (exact p 0.30 and 0.44) with an interval that excludes 0 (as
    the old sentence bootstrap gave, "0.41 to 0.41"): no association is claimed."""
    data = rich_data()
    data["correlations"]["matrix"] = {"token-f1": {
        "MR": {"rho": 0.46, "p": 0.30, "p_method": "exact", "n": 7},
        "CR": {"rho": 0.36, "p": 0.44, "p_method": "exact", "n": 7}}}
    data["correlations"]["summary"] = {"token-f1": {"mean": 0.41, "min": 0.36, "tasks": 2,
                                                    "mean_ci95": [0.41, 0.41]}}
    claims = tracking_claims(RunResults.model_validate(data))
    assert claims[0].startswith("No association between a diagnostic and a downstream task "
                                "survives Holm's correction over the 2 diagnostic x task tests")
    assert "not significant after correction: token-f1 0.41" in claims[0]
    assert "tracks" not in " ".join(claims)


def test_summary_computes_holm_when_results_lack_it():
    data = rich_data()
    for row in data["correlations"]["matrix"].values():
        for cell in row.values():
            cell.pop("p_holm")
    assert tracking_claims(RunResults.model_validate(data)) == tracking_claims(rich_results())


def test_summary_with_four_encoders_says_no_p_can_reach_the_level():
    data = rich_data()
    for row in data["correlations"]["matrix"].values():
        for cell in row.values():
            cell["n"] = 4
    results = RunResults.model_validate(data)
    notes = caveats(results, analyses_of(results))
    assert ("with 4 encoders the smallest possible exact two-sided p-value is 2/4! = 0.083, so "
            "no correlation can reach p < 0.05.") in notes


def test_an_analysis_of_a_plugin_adds_its_claims_and_caveats_to_the_summary():
    """"What this run shows" asks every analysis of the run: a plugin's claim follows the
    first-party ones, its caveat follows theirs."""
    class Mine:
        def claims(self, results: RunResults) -> list[str]:
            return ["Mine finds that avg leads."]

        def caveats(self, results: RunResults) -> list[str]:
            return ["mine rests on five sentences."]

    results = rich_results()
    analyses = analyses_of(results)
    before = summary_section(results, analyses)
    section = summary_section(results, [*analyses, Mine()])
    assert before is not None and section is not None
    assert section.text[0] == before.text[0] + " Mine finds that avg leads."
    assert section.text[1:] == [*before.text[1:], "- mine rests on five sentences."]


def test_summary_absent_when_nothing_to_say():
    assert summary_section(RunResults(spec={"name": "empty"})) is None


# ---------------------------------------------------------------------------------- training


def test_training_curves_are_small_multiples_with_the_legend_outside():
    figure = training_curves_figure(rich_results().runs)
    panels = [axes for axes in figure.axes if axes.get_visible()]
    assert len(panels) == 6  # 5 encoders x mos-lstm, avg x simple-lstm
    assert len(figure.axes) == 8  # a 2 x 4 grid, the last two hidden
    assert all(axes.get_legend() is None for axes in figure.axes)
    assert len(figure.legends) == 1
    labels = [t.get_text() for t in figure.legends[0].get_texts()]
    assert labels == ["validation", "train", "seed 1", "seed 2", "seed 3"]
    assert len(panels[0].lines) == 6 and len(panels[5].lines) == 2  # 3 seeds, or one, x 2
    assert panels[0].get_title() == "laser / mos-lstm\n(still improving)"
    assert panels[1].get_title() == "avg / mos-lstm"


# -------------------------------------------------------------------------------- rendering


def test_html_embeds_every_figure_and_the_new_tables(written: Path):
    page = (written / "report.html").read_text(encoding="utf-8")
    found = dict(re.findall(r"<img id='([\w-]+)'[^>]*src='data:image/png;base64,([^']+)'", page))
    expected = {"heatmap", "training-curves", *(f"scatter-{d}" for d in DIAGNOSTICS)}
    assert set(found) == expected
    for name in expected:
        assert base64.b64decode(found[name]) == (written / "figures" / f"{name}.png").read_bytes()
    assert "<td>84.0 ± 1.5 [82.0, 86.0] n=4 ⚠</td>" in page
    assert "<td>avg, gem</td>" in page
    assert "<h2>What this run shows</h2>" in page and "<li>qt: weights not found</li>" in page
    assert not re.search(r"src=['\"](?!data:)", page)


def test_results_json_round_trip_renders_the_same(tmp_path: Path):
    results = rich_results()
    results.save(tmp_path)
    again = load_results(tmp_path)
    assert render_markdown(again, figures={}) == render_markdown(results, figures={})


def test_an_older_results_json_renders_without_the_new_sections():
    data = rich_data()
    for key in ("encoders", "rankings", "published", "downstream_missing", "downstream_origin"):
        del data[key]
    for run in data["runs"]:
        run.pop("seeds", None)
        for score in run["metrics"].values():
            for key in ("support", "interval", "seeds", "undefined_resamples"):
                score.pop(key, None)
    text = render_markdown(RunResults.model_validate(data), figures={})
    for title in ("Rank stability", "Comparison with published tables"):
        assert f"## {title}" not in text
    assert "| laser | mos-lstm | 40.0 [38.0, 42.0] |" in text
    assert "method not recorded" in text
    assert "| laser |  | 80.00 | 83.00 | 0.70 |" not in text  # origin column says –
    assert "| laser | – | 80.00 | 83.00 | 0.70 |" in text


def test_scatter_draws_controls_apart_and_keeps_them_out_of_rho():
    data = rich_data()
    data["runs"].append({"encoder": "random-gaussian", "decoder": "mos-lstm",
                         "metrics": {"id-perm": {"value": 50.0, "ci95": [40.0, 60.0]}}})
    data["downstream"]["random-gaussian"] = {"MR": 50.0, "CR": 60.0, "STSB": 0.0}
    data["correlations"]["controls"] = ["random-gaussian"]
    results = RunResults.model_validate(data)
    points = scatter_points(results)["id-perm"]
    assert points["random-gaussian"].control and points["random-gaussian"].x == 50.0
    # the control takes no part in rho, nor in the z-scores' scale
    assert scatter_title(results, "id-perm", points) == scatter_title(
        rich_results(), "id-perm", scatter_points(rich_results())["id-perm"])
    assert {e: p.y for e, p in points.items() if e != "random-gaussian"} == pytest.approx(
        {e: p.y for e, p in scatter_points(rich_results())["id-perm"].items()})
    figure = scatter_figure(points, title="t", xlabel="x", ylabel="y")
    labels = {t.get_text(): t for t in figure.axes[0].texts}
    assert labels["random-gaussian (control)"].get_color() == "#8c8c8c"


def test_scatter_labels_do_not_collide():
    from harness.report.plots import ScatterPoint

    # five encoders within a label's height of each other: default placement would overlap
    crowded = {f"encoder-{i}": ScatterPoint(x=50.0 + 0.2 * i, y=0.01 * i) for i in range(5)}
    crowded["far"] = ScatterPoint(x=10.0, y=1.0)
    figure = scatter_figure(crowded, title="t", xlabel="x", ylabel="y")
    renderer = figure.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in figure.axes[0].texts]
    assert len(boxes) == 6
    overlaps = [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if a.overlaps(b)]
    assert overlaps == []
