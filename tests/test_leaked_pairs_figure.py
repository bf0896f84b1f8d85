"""The report's leaked-pairs figure (`harness.analyses.privacy.report`): its lines join the
entries of one attack only (one registered name, options that differ in the number of leaked
pairs alone), a single point is no line, and the figure is shown under its own caption, not
the privacy-utility figure's."""

from __future__ import annotations

from html import escape

from harness.analyses.privacy.report import (
    FIGURE,
    LEAKED_FIGURE,
    leaked_pairs_curves,
    privacy_figures,
    privacy_sections,
)
from harness.analyses.privacy.results import AttackLeakage, Privacy, PrivacyPoint
from harness.report.render import markdown, page
from harness.results.model import RunResults
from harness.results.records import MetricScore

MEASURE = "token-f1:content"


def attack(name: str, leaked: int, value: float, ci95: tuple[float, float] | None = None,
           **options: object) -> AttackLeakage:
    """What attack `name` with `options` read back given `leaked` pairs: `value` on MEASURE."""
    score = MetricScore(value=value) if ci95 is None else MetricScore(value=value, ci95=ci95)
    return AttackLeakage(attack=name, threat=f"{leaked} leaked pairs", leaked=leaked,
                         options=options, leakage={MEASURE: score})


CLEAN = {
    "decoder": attack("decoder", 200, 30.0),  # one k: no line
    "align-20": attack("align", 20, 10.0, (8.0, 12.0), pairs=20, surrogate=None),
    "align-50": attack("align", 50, 15.0, (13.0, 17.0), pairs=50, surrogate=None),
    # one registered attack whose other option (the vote's k) differs: one line of the two
    # entries with votes 20, the third a single point
    "vote-5-of-20": attack("neighbour-vote", 20, 9.0, pairs=20, votes=5),
    "vote-20-of-50": attack("neighbour-vote", 50, 14.0, pairs=50, votes=20),
    "vote-20-of-100": attack("neighbour-vote", 100, 16.0, pairs=100, votes=20),
    # another attack at the same k as align: its own line
    "echo-20": attack("echo", 20, 11.0, pairs=20),
    "echo-50": attack("echo", 50, 21.0, pairs=50),
}

FLOOR_ATTACKS = {
    "align-20": attack("align", 20, 1.0, pairs=20, surrogate=None),
    "align-50": attack("align", 50, 2.0, pairs=50, surrogate=None),
    "vote-20-of-50": attack("neighbour-vote", 50, 0.5, pairs=50, votes=20),
    "vote-20-of-100": attack("neighbour-vote", 100, 0.7, pairs=100, votes=20),
    "echo-20": attack("echo", 20, 0.2, pairs=20),  # one k at the floor: no floor line for echo
}


def study() -> Privacy:
    """A privacy study of two encoders, by hand: `avg` attacked with every entry of CLEAN on
    its clean vectors (and, under noise, with other numbers the figure leaves out); `bow`
    attacked with align at one k only."""
    clean = PrivacyPoint(utility=1.0, leakage={MEASURE: MetricScore(value=30.0)}, attacks=CLEAN)
    noisy = PrivacyPoint(defence="gaussian", level=0.5, utility=0.9,
                         leakage={MEASURE: MetricScore(value=20.0)},
                         attacks={"align-20": attack("align", 20, 3.0, pairs=20),
                                  "align-50": attack("align", 50, 4.0, pairs=50)})
    alone = PrivacyPoint(utility=1.0, leakage={MEASURE: MetricScore(value=25.0)},
                         attacks={"align-20": attack("align", 20, 7.0, pairs=20)})
    return Privacy(attacker="mos-lstm", leakage=MEASURE, utility="u", matched_utility=0.95,
                   compare_on=MEASURE, points={"avg": [clean, noisy], "bow": [alone]},
                   floor_encoder="random", floor_attacks=FLOOR_ATTACKS)


def test_a_line_joins_the_entries_of_one_attack_whose_options_differ_in_k_alone() -> None:
    panels = leaked_pairs_curves(study())
    assert list(panels) == ["avg"]  # bow ran align at one k: a single point is no line
    assert panels["avg"] == {
        "align": [(20.0, 10.0, 8.0, 12.0), (50.0, 15.0, 13.0, 17.0)],
        "neighbour-vote": [(50.0, 14.0, None, None), (100.0, 16.0, None, None)],
        "echo": [(20.0, 11.0, None, None), (50.0, 21.0, None, None)],
        "align (floor)": [(20.0, 1.0, None, None), (50.0, 2.0, None, None)],
        "neighbour-vote (floor)": [(50.0, 0.5, None, None), (100.0, 0.7, None, None)],
    }


def test_one_attack_with_other_options_draws_lines_of_its_own() -> None:
    """Two align entries per surrogate: a line each, named by the options that tell them
    apart."""
    attacks = {"decoder": attack("decoder", 200, 30.0),
               "align-20": attack("align", 20, 10.0, pairs=20, surrogate="gem"),
               "align-50": attack("align", 50, 40.0, pairs=50, surrogate="sbert"),
               "align-100": attack("align", 100, 20.0, pairs=100, surrogate="gem"),
               "align-200": attack("align", 200, 45.0, pairs=200, surrogate="sbert")}
    privacy = Privacy(attacker="mos-lstm", leakage=MEASURE, utility="u", matched_utility=0.95,
                      compare_on=MEASURE, points={"avg": [PrivacyPoint(attacks=attacks)]})
    assert leaked_pairs_curves(privacy) == {"avg": {
        'align {"surrogate": "gem"}': [(20.0, 10.0, None, None), (100.0, 20.0, None, None)],
        'align {"surrogate": "sbert"}': [(50.0, 40.0, None, None), (200.0, 45.0, None, None)]}}


def test_without_a_compared_measure_or_a_second_k_there_is_no_figure() -> None:
    privacy = study()
    assert leaked_pairs_curves(privacy.model_copy(update={"compare_on": None})) == {}
    single = {label: found for label, found in CLEAN.items() if not label.endswith("-50")}
    privacy.points["avg"][0] = privacy.points["avg"][0].model_copy(update={"attacks": single})
    assert leaked_pairs_curves(privacy) == {}
    assert LEAKED_FIGURE not in privacy_figures(RunResults(privacy=privacy.model_dump()))


def test_the_figure_carries_its_own_caption_in_the_report() -> None:
    results = RunResults(privacy=study().model_dump())
    figures = privacy_figures(results)
    assert {FIGURE, LEAKED_FIGURE} <= set(figures)
    sections = privacy_sections(results, figures)
    caption = ("Privacy: each attack's token-f1:content against the number of leaked pairs k, "
               "clean vectors")
    assert [section.title for section in sections] == ["Privacy: leakage against utility",
                                                       caption]
    assert sections[0].figures == [FIGURE] and sections[1].figures == [LEAKED_FIGURE]
    report = markdown(results, sections)
    assert f"![{caption}](figures/{LEAKED_FIGURE})" in report
    assert f"![Privacy: leakage against utility](figures/{FIGURE})" in report
    assert f"![Privacy: leakage against utility](figures/{LEAKED_FIGURE})" not in report
    html = page(results, sections, figures)
    assert f"<img id='privacy-leaked-pairs' alt='{escape(caption)}'" in html
    # without the figure, no section for it
    assert [s.title for s in privacy_sections(results, {FIGURE: figures[FIGURE]})] == [
        "Privacy: leakage against utility"]
