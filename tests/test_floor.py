"""Gain over the floor: an encoder's diagnostic minus the random-gaussian control's, same
decoder, with the paired-bootstrap interval of the rankings (the same resampled sentences for
both, seeds drawn as the rankings draw them), and its report section."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from harness.report.floor import floor_section
from harness.results import RunResults, load_results
from harness.stages.floor import FLOOR_ENCODER, floor_encoder, floor_gains, gains_over_floor
from harness.stages.report import write_reports
from harness.stats import paired_ranking, paired_scores
from harness.stats.intervals import percentile_interval
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


def rankings(statistics: dict, resamples: int = 1000) -> dict:
    return {"lstm": {"id": paired_ranking(IdentityMetric(), statistics, higher_is_better=True,
                                          resamples=resamples, seed=3)}}


def test_an_encoder_that_beats_the_floor_gains_a_known_amount_interval_excluding_zero():
    gains = gains_over_floor(FLOOR, rankings(STATISTICS))
    assert gains is not None
    assert (gains.encoder, gains.resamples, gains.seeds) == (FLOOR, 1000, False)
    good = gains.gains["lstm"]["id"]["good"]
    assert good.gain == pytest.approx(30.0)
    assert good.ci95[0] > 0 and good.significant and good.p is not None and good.p < 0.01
    assert good.n == N
    assert FLOOR not in gains.gains["lstm"]["id"]


def test_an_encoder_level_with_the_floor_has_an_interval_around_zero():
    gains = gains_over_floor(FLOOR, rankings(STATISTICS))
    assert gains is not None
    level = gains.gains["lstm"]["id"]["level"]
    assert level.gain == pytest.approx(0.0)
    low, high = level.ci95
    assert low is not None and high is not None and low < 0 < high
    assert not level.significant and level.p is not None and level.p > 0.5


def test_the_interval_is_of_differences_on_the_same_resampled_sentences():
    scores = paired_scores(IdentityMetric(), STATISTICS, resamples=1000, seed=3)
    floor, good = scores.encoders.index(FLOOR), scores.encoders.index("good")
    expected = percentile_interval(scores.resampled[:, good] - scores.resampled[:, floor], 0.95)
    gain = gains_over_floor(FLOOR, rankings(STATISTICS)).gains["lstm"]["id"]["good"]
    assert gain.ci95 == pytest.approx(expected.bounds)
    # an unpaired interval (independent resamples) would be wider: the shared sentences of the
    # floor's hits and the encoder's cancel out
    unpaired = (paired_scores(IdentityMetric(), {"good": STATISTICS["good"]}, resamples=1000,
                              seed=3).resampled[:, 0]
                - paired_scores(IdentityMetric(), {FLOOR: STATISTICS[FLOOR]}, resamples=1000,
                                seed=4).resampled[:, 0])
    wide = percentile_interval(unpaired, 0.95)
    assert gain.ci95[1] - gain.ci95[0] < wide.high - wide.low


def test_the_floor_gives_the_same_gains_wherever_it_stands_in_the_run():
    first = gains_over_floor(FLOOR, rankings(STATISTICS))
    last = gains_over_floor(FLOOR, rankings({k: STATISTICS[k] for k in ("good", "level", FLOOR)}))
    assert first is not None and last is not None
    for encoder in ("good", "level"):
        a, b = first.gains["lstm"]["id"][encoder], last.gains["lstm"]["id"][encoder]
        assert a.gain == pytest.approx(b.gain)
        assert a.ci95 == pytest.approx(b.ci95)
        assert (a.p, a.significant) == (b.p, b.significant)


def test_seed_variance_enters_as_in_the_rankings():
    seeded = dict(STATISTICS, good=[hits((0, 80)), hits((0, 60))])  # 40% and 30%
    gains = gains_over_floor(FLOOR, rankings(seeded))
    assert gains is not None and gains.seeds
    assert gains.gains["lstm"]["id"]["good"].gain == pytest.approx(25.0)


def test_without_the_floor_in_a_ranking_there_are_no_gains():
    assert gains_over_floor(FLOOR, rankings({"good": STATISTICS["good"],
                                             "level": STATISTICS["level"]})) is None
    assert gains_over_floor(FLOOR, {}) is None


def encoder(name: str, registered: str) -> SimpleNamespace:
    return SimpleNamespace(name=name, info=SimpleNamespace(name=registered))


def test_the_floor_is_the_first_encoder_registered_as_random_gaussian():
    spec = SimpleNamespace(components=lambda kind: [
        encoder("avg", "avg"), encoder("noise", FLOOR_ENCODER), encoder("noise-2", FLOOR_ENCODER)])
    assert floor_encoder(spec) == "noise"  # type: ignore[arg-type]
    no_floor = SimpleNamespace(components=lambda kind: [encoder("avg", "avg")])
    assert floor_encoder(no_floor) is None  # type: ignore[arg-type]
    assert floor_gains(no_floor, rankings(STATISTICS)) is None  # type: ignore[arg-type]
    named = SimpleNamespace(components=lambda kind: [encoder(FLOOR, FLOOR_ENCODER),
                                                     encoder("good", "avg")])
    assert floor_gains(named, rankings(STATISTICS)) is not None  # type: ignore[arg-type]


def test_a_spec_with_the_control_encoder_names_it_the_floor(tmp_path: Path):
    from harness.plugins import load_registry
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
                 "p": 0.001 if i else 0.9, "significant": bool(i), "n": 500}
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
    assert "1000 paired bootstrap resamples" in part and "seed variance included" in part
    assert "- mos-lstm, id-perm: laser is not distinguishable from the floor." in part
    assert ("| diagnostic | encoder | value | floor | gain | 95% interval | p | "
            "interval excludes 0 |") in part
    assert "| id-perm | laser | 96.5 | 84.0 | 0.0 | [-2.0, 2.0] | 0.900 | no |" in part
    assert "| id-perm | avg | 35.1 | 84.0 | 10.0 | [7.0, 13.0] | 0.001 | yes |" in part
    assert "<h2>Gain over the floor</h2>" in (tmp_path / "report.html").read_text("utf-8")
    results.save(tmp_path)
    assert load_results(tmp_path).floor == results.floor


def test_no_floor_no_section():
    assert floor_section(RunResults.model_validate(rich_data())) is None
