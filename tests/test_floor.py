"""Gain over the floor: an encoder's diagnostic minus the random-gaussian control's, same
decoder (or, for cosine, minus the encoder's own chance level), tested on the same sentences
and Holm-corrected over the encoders, and its report section."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import binomtest

from harness.analyses.floor.gains import FLOOR_ENCODER, floor_encoder, gains_over_floor
from harness.analyses.floor.report import floor_section
from harness.report.write import write_reports
from harness.results.model import RunResults, load_results
from harness.stats import holm_adjusted
from harness_plugins.metrics.cosine import CosineMetric
from harness_plugins.metrics.overlap import IdentityMetric
from tests.report_fixtures import ENCODERS, rich_data, section

N = 200
FLOOR = "floor"


def hits(*ranges: tuple[int, int]) -> np.ndarray:
    """Id statistics (N, 1): 1 on the sentences of the given [start, stop) ranges."""
    column = np.zeros((N, 1))
    for start, stop in ranges:
        column[start:stop] = 1.0
    return column


STATISTICS = {
    FLOOR: [hits((0, 20))],  # 10%
    "good": [hits((0, 80))],  # 40%: 30 points over the floor
    "level": [hits((100, 120))],  # 10%, on other sentences: no gain
}


METRICS = {"id": IdentityMetric(), "cosine": CosineMetric()}


def gains(statistics: dict, chance: dict | None = None, floor: str | None = FLOOR):
    return gains_over_floor(METRICS, {("lstm", "id"): statistics}, chance or {}, floor,
                            resamples=1000, permutations=999, seed=3)


def test_an_encoder_that_beats_the_floor_gains_a_known_amount_significantly():
    found = gains(STATISTICS)
    assert found is not None
    assert (found.encoder, found.resamples, found.seeds) == (FLOOR, 1000, False)
    good = found.gains["lstm"]["id"]["good"]
    assert good.gain == pytest.approx(30.0)
    assert (good.floor, good.basis, good.n) == (pytest.approx(10.0), FLOOR, N)
    # 60 sentences only good regenerated, none only the floor did: McNemar's exact test
    assert good.test == "mcnemar-exact"
    assert good.p == pytest.approx(binomtest(60, 60).pvalue)
    assert good.ci95[0] > 0 and good.significant
    assert FLOOR not in found.gains["lstm"]["id"]


def test_an_encoder_level_with_the_floor_is_not_significant():
    level = gains(STATISTICS).gains["lstm"]["id"]["level"]
    assert level.gain == pytest.approx(0.0)
    low, high = level.ci95
    assert low is not None and high is not None and low < 0 < high
    assert level.p == pytest.approx(1.0) and not level.significant


def test_gains_are_holm_corrected_over_the_encoders():
    found = gains(STATISTICS).gains["lstm"]["id"]
    raw = [found["good"].p, found["level"].p]
    assert [found["good"].p_holm, found["level"].p_holm] == pytest.approx(holm_adjusted(raw))


def test_the_floor_gives_the_same_gains_wherever_it_stands_in_the_run():
    first = gains(STATISTICS)
    last = gains({k: STATISTICS[k] for k in ("good", "level", FLOOR)})
    assert first is not None and last is not None
    for encoder in ("good", "level"):
        a, b = first.gains["lstm"]["id"][encoder], last.gains["lstm"]["id"][encoder]
        assert a.gain == pytest.approx(b.gain)
        assert (a.p, a.significant) == (b.p, b.significant)


def test_with_seeds_the_sentence_is_the_unit():
    seeded = {FLOOR: [hits((0, 20))] * 2, "good": [hits((0, 80)), hits((0, 60))],
              "level": [hits((100, 120))] * 2}
    found = gains(seeded)
    assert found is not None and found.seeds
    good = found.gains["lstm"]["id"]["good"]
    assert good.gain == pytest.approx(25.0)
    assert good.test == "sign-flip-exact"


def test_without_the_floor_there_are_no_gains():
    assert gains({"good": STATISTICS["good"], "level": STATISTICS["level"]}) is None
    assert gains(STATISTICS, floor=None) is None


def test_cosine_is_measured_against_the_encoders_own_chance_level():
    """A pooling encoder whose outputs score 0.9 against a chance level of 0.85 gains 5 points,
    not 90 over the random vector's 0."""
    rng = np.random.default_rng(1)
    outputs = 0.9 + 0.01 * rng.standard_normal((N, 1))
    level = 0.85 + 0.01 * rng.standard_normal((N, 1))
    statistics = {("lstm", "cosine"): {"avg": [outputs], FLOOR: [np.zeros((N, 1))]}}
    found = gains_over_floor(METRICS, statistics, {"cosine": {"avg": level}}, FLOOR,
                             resamples=500, permutations=999, seed=1)
    gain = found.gains["lstm"]["cosine"]["avg"]
    assert gain.basis == "chance"
    assert gain.floor == pytest.approx(100 * level.mean())
    assert gain.gain == pytest.approx(100 * (outputs.mean() - level.mean()))
    assert gain.significant and gain.test == "permutation"
    assert found.chance["cosine"]["avg"].value == pytest.approx(100 * level.mean())


def names(*pairs: tuple[str, str]) -> SimpleNamespace:
    return SimpleNamespace(encoder_names=lambda: list(pairs))


def test_the_floor_is_the_first_encoder_registered_as_random_gaussian():
    spec = names(("avg", "avg"), ("noise", FLOOR_ENCODER), ("noise-2", FLOOR_ENCODER))
    assert floor_encoder(spec) == "noise"  # type: ignore[arg-type]
    assert floor_encoder(names(("avg", "avg"))) is None  # type: ignore[arg-type]
    # a joined reference's floor, under its label in the run
    joined = names(("random-gaussian@quickstart", FLOOR_ENCODER), ("avg", "avg"))
    assert floor_encoder(joined) == "random-gaussian@quickstart"  # type: ignore[arg-type]


def test_a_spec_with_the_control_encoder_names_it_the_floor(tmp_path: Path):
    from harness.registry.loader import load_registry
    from harness.spec import load_spec

    registry = load_registry()
    path = tmp_path / "spec.yaml"
    path.write_text("name: t\ncorpus:\n  train: {generate: quickstart, sentences: 100}\n"
                    "  test: {generate: quickstart, sentences: 20}\n"
                    f"encoders: [avg, {FLOOR_ENCODER}]\n", encoding="utf-8")
    assert floor_encoder(load_spec(path, (), registry)) == FLOOR_ENCODER


# ----------------------------------------------------------------------------- the report


def with_floor(data: dict) -> RunResults:
    """The report fixture with gem as the floor on mos-lstm's id."""
    gains = {e: {"gain": 10.0 * i, "ci95": [10.0 * i - 3, 10.0 * i + 3] if i else [-2.0, 2.0],
                 "p": 0.001 if i else 0.9, "p_holm": 0.004 if i else 0.9,
                 "test": "mcnemar-exact", "significant": bool(i), "n": 500, "floor": 84.0,
                 "basis": "gem"}
             for i, e in enumerate(e for e in ENCODERS if e != "gem")}
    data["floor"] = {"encoder": "gem", "resamples": 1000, "seeds": True,
                     "gains": {"mos-lstm": {"id-perm": gains}}}
    return RunResults.model_validate(data)


def test_the_report_explains_and_tabulates_the_gain_over_the_floor(tmp_path: Path):
    results = with_floor(rich_data())
    write_reports(tmp_path, results, ["md", "html"])
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    part = section(text, "Gain over the floor")
    assert "what the decoder manages on its own" in part
    assert "1000 resamples" in part and "seed variance not included" in part
    assert "Holm-corrected over the encoders" in part
    assert "- mos-lstm, id-perm: laser is not distinguishable from the floor." in part
    assert ("| diagnostic | encoder | value | value's 95% interval | floor | gain | gain's 95% "
            "interval | p | p (Holm) | significant |") in part
    assert ("| id-perm | laser | 96.5 | [94.5, 98.5] | 84.0 | 0.0 | [-2.0, 2.0] | 0.900 | "
            "0.900 | no |") in part
    assert ("| id-perm | avg | 35.1 | [33.1, 37.1] | 84.0 | 10.0 | [7.0, 13.0] | 0.001 | "
            "0.004 | yes |") in part
    assert "the gain over 0" in part
    assert "<h2>Gain over the floor</h2>" in (tmp_path / "report.html").read_text("utf-8")
    results.save(tmp_path)
    assert load_results(tmp_path).floor == results.floor


def test_no_floor_no_section():
    assert floor_section(RunResults.model_validate(rich_data())) is None
