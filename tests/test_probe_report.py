"""Probe results in results.json (`probes`, round trip) and in the report: analogy accuracy per
encoder and relation type, examples (Table 2, right), interpolation, noise with its figure."""

from __future__ import annotations

import json
from pathlib import Path

from harness.analyses.probes.analogies import AnalogyItem, AnalogySet, score_analogies
from harness.analyses.probes.interpolation import summarise_path, summarise_paths
from harness.analyses.probes.noise import score_noise
from harness.analyses.probes.report import NOISE_FILE
from harness.analyses.probes.results import PairProbes
from harness.report.plots import curves_png
from harness.report.write import render_markdown, write_reports
from harness.results.model import RunResults, load_results
from tests.test_report import embedded_images, hand_made_data, png_size

ITEMS = (AnalogyItem("he saw it .", "he sees it .", "she sees me .", "she saw me .", "tense"),
         AnalogyItem("he sees it .", "it sees him .", "she sees me .", "me sees her .", "swap"),
         AnalogyItem("a .", "b .", "c .", "d .", "swap"))


def pair_probes(encoder: str, outputs: list[str], noise: list[list[str]]) -> PairProbes:
    analogies, _ = score_analogies(AnalogySet("mine.tsv", "/sets/mine.tsv", "paper", ITEMS),
                                   outputs)
    path = summarise_path("x y .", "z w .", [1.0, 0.5, 0.0], ["x y .", "q .", "z w ."])
    references = ["a b c d .", "e f g h ."]
    return PairProbes(encoder=encoder, decoder="mos-lstm", analogies=[analogies],
                      interpolation=summarise_paths([path], 3),
                      noise=score_noise(references, noise, [0.0, 0.5, 1.0], seed=1))


def probed_results() -> RunResults:
    refs = ["a b c d .", "e f g h ."]
    data = hand_made_data()
    data["probes"] = [
        pair_probes("avg", ["she saw me .", "me sees her .", "d ."], [refs, refs, ["", ""]]),
        pair_probes("laser", ["x .", "me sees her .", "c ."], [refs, [refs[0], ""], ["", ""]]),
    ]
    data["probes"] = [p.model_dump(mode="json") for p in data["probes"]]
    return RunResults.model_validate(data)


def test_probes_round_trip_through_results_json(tmp_path: Path) -> None:
    results = probed_results()
    results.save(tmp_path)
    on_disk = json.loads((tmp_path / "results.json").read_text())
    (avg, _) = on_disk["probes"]
    assert set(avg) == {"encoder", "decoder", "analogies", "interpolation", "noise"}
    (solved,) = avg["analogies"]
    assert solved["overall"]["accuracy"] == {
        "value": 100.0, "ci95": solved["overall"]["accuracy"]["ci95"], "successes": 3,
        "support": 3, "interval": "clopper-pearson"}
    assert solved["relations"]["swap"]["items"] == 2
    assert avg["noise"]["points"][2]["id"]["value"] == 0.0
    assert avg["interpolation"]["paths"][0]["first_change"] == 0.5
    again = load_results(tmp_path)
    assert again.probes == results.probes
    assert again.to_json() == results.to_json()


def test_a_run_without_probes_has_no_probes_key(tmp_path: Path) -> None:
    results = RunResults.model_validate(hand_made_data())
    assert "probes" not in results.to_json()
    text = render_markdown(results)
    assert "## Probes" not in text and NOISE_FILE not in text


def test_the_report_shows_analogies_interpolation_and_noise_with_the_plot(tmp_path: Path) -> None:
    write_reports(tmp_path, probed_results(), ["md", "html"])
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    section = text[text.index("## Probes: analogies, interpolation, noise"):]
    assert f"![Probes: analogies, interpolation, noise](figures/{NOISE_FILE})" in section
    assert "| encoder | decoder | all (n=3) | tense (n=1) | swap (n=2) | BLEU | new |" in section
    assert "| avg | mos-lstm | 100.0 [29.2, 100.0] | 100.0 [2.5, 100.0] | 100.0 [15.8, 100.0] |" \
        in section
    assert "| laser | mos-lstm | 33.3 [0.8, 90.6] | 0.0 [0.0, 97.5] | 50.0 [1.3, 98.7] |" in section
    assert "| avg | mos-lstm | 1 | 3 | 3.0 | 100.0 [15.8, 100.0] | 1/1 | 0.50 |" in section
    assert "| s=0: Id / BLEU | s=0.5: Id / BLEU | s=1: Id / BLEU |" in section
    assert "| laser | mos-lstm | 100.0 [15.8, 100.0] / 100.0 | 50.0 [1.3, 98.7] /" in section
    examples = text[text.index("## Probe examples"):]
    assert "**he saw it . : he sees it . :: z : she sees me . [tense]**" in examples
    assert "| expected |  | she saw me . |" in examples
    assert "| laser | mos-lstm | x . |" in examples
    assert "| avg | mos-lstm | 0.50 | q . |" in examples
    figure = (tmp_path / "figures" / NOISE_FILE).read_bytes()
    width, height = png_size(figure)
    assert width > 500 and height > 200
    images = embedded_images((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert images["noise-robustness"] == figure


def test_the_noise_plot_draws_one_line_per_encoder() -> None:
    """Two encoders, two colours of the palette, on both panels."""
    import io

    import numpy as np
    from matplotlib import colormaps
    from matplotlib.image import imread

    curves = {"avg": [(0.0, 90.0, 80.0, 95.0), (1.0, 10.0, 5.0, 20.0)],
              "laser": [(0.0, 50.0, None, None), (1.0, 45.0, None, None)]}
    data = curves_png({"Id (%)": curves, "BLEU": curves}, xlabel="scale", title="t")
    rgb = imread(io.BytesIO(data), format="png")[..., :3]
    for index in (0, 1):
        colour = np.asarray(colormaps["tab10"](index))[:3]
        assert (np.abs(rgb - colour).max(axis=-1) < 0.05).sum() > 100


def test_a_noise_panel_at_zero_everywhere_is_left_out() -> None:
    from harness.analyses.probes.report import probe_figures

    refs = ["a b c d .", "e f g h ."]
    wrong = ["a b c x .", "e f g x ."]  # near, never equal: Id 0, BLEU above 0
    data = hand_made_data()
    data["probes"] = [pair_probes(e, ["x .", "y .", "z ."], [wrong, wrong, wrong]
                                  ).model_dump(mode="json") for e in ("avg", "laser")]
    results = RunResults.model_validate(data)
    assert all(pt.id.value == 0.0 for p in results.probes or [] for pt in p.noise.points)
    figure = probe_figures(results)[NOISE_FILE]
    width_bleu_only, _ = png_size(figure)
    data["probes"][0] = pair_probes("avg", ["x .", "y .", "z ."], [refs, refs, wrong]
                                    ).model_dump(mode="json")
    both = probe_figures(RunResults.model_validate(data))[NOISE_FILE]
    assert png_size(both)[0] > width_bleu_only  # two panels side by side: wider
