"""The privacy analysis end to end on a tiny run: defences applied as a stage, an adaptive
attacker per encoder x defence x level, utility from the downstream tasks on the defended
vectors, canaries with their floor, and the report's section (the canaries without a run:
tests/test_canaries.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

from harness.analyses.privacy.canaries import ENTITY_TYPES
from harness.analyses.privacy.exposure import chance_exposure
from harness.analyses.privacy.spec import studied_defences
from harness.analyses.privacy.study import matched_leakage
from harness.executors.plan import decoders_to_train
from harness.registry.loader import load_registry
from harness.spec import load_spec
from harness.util.cache import Cache
from tests.watched_runs import Watched, watched_run

pytestmark = pytest.mark.usefixtures("one_thread")

SPEC = """\
name: privacy-tiny
seed: 1
device: cpu
corpus:
  train: {generate: quickstart, sentences: 4000}
  test: {generate: quickstart, sentences: 100, seed: 2}
vocab: {bpe_size: 500, dim: 64, epochs: 20}
encoders: [avg, {name: random-gaussian, dim: 64}]
decoders: [{name: mos-lstm, layers: 1, hidden: 128, epochs: 8, lr: 0.01, batch_size: 64, standardise: true}]
generation: {beam: 1, max_len: 20}
metrics: [id, token-f1, token-f1:content, bleu]
downstream: {tasks: [{name: syn-topic, train: 300, dev: 100, test: 150}]}
comparison: {controls: include}
privacy:
  defences:
    - {name: rotation, key: 3}
    - {name: gaussian, levels: [0.05, 1000]}
  canaries: 40
  non_adaptive: true
  attacks: [decoder, {name: oracle, corpus: 300}, bag-of-words, prior]
analyses: [downstream, privacy]
report: {formats: [md]}
"""


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Watched]:
    root = tmp_path_factory.mktemp("privacy")
    path = root / "spec.yaml"
    path.write_text(SPEC, encoding="utf-8")
    spec = load_spec(path, registry=load_registry())
    return root, watched_run(spec, root / "run", Cache(root / "cache"))


@pytest.fixture(scope="module")
def study(watched: tuple[Path, Watched]) -> tuple[Path, dict]:
    root, run = watched
    assert run.results is not None
    return root, run.results.to_json()["privacy"]


def test_the_attackers_train_in_the_encoders_jobs_and_the_study_reads_their_records(
        watched: tuple[Path, Watched]) -> None:
    """Each studied encoder's privacy jobs (the attacker on clean vectors and at each of the
    three defence levels, a job each, and the floor's) attacked each point and decoded the
    canaries once, and the canary set was drawn once in the run; the analysis's run did none
    of it (it reads the jobs' records)."""
    _, run = watched
    parts = ["clean", "rotation@0", "gaussian@0", "gaussian@1"]
    assert run.jobs == {"avg": [f"privacy:avg:{part}" for part in parts],
                        "random-gaussian": [f"privacy:random-gaussian:{part}"
                                            for part in [*parts, "floor"]]}
    points = run.done("attack point")
    assert sorted(points) == sorted((encoder, defence, level)
                                    for encoder in ("avg", "random-gaussian")
                                    for defence, level in [("", None), ("rotation", None),
                                                           ("gaussian", 0.05),
                                                           ("gaussian", 1000.0)])
    assert set(points.values()) == {1}
    # the canaries: one set, drawn in the first job that needs it, read by the others
    assert run.done("canary set") == {"drawn": 1}
    recovered = run.done("canary recovery")
    assert len(recovered) == 9 and set(recovered.values()) == {1}  # 2 x 4 points, the floor
    assert not [unit for unit in run.work if unit[0] == "run"]
    assert run.analysis_builds == 0


def points(privacy: dict, encoder: str) -> dict[str, dict]:
    return {p["defence"] + ("" if p["level"] is None else f" {p['level']:g}"): p
            for p in privacy["points"][encoder]}


def test_every_encoder_defence_and_level_is_attacked(study: tuple[Path, dict]) -> None:
    root, privacy = study
    assert privacy["attacker"] == "mos-lstm" and privacy["leakage"] == "token-f1"
    for encoder in ("avg", "random-gaussian"):
        found = points(privacy, encoder)
        assert list(found) == ["", "rotation", "gaussian 0.05", "gaussian 1000"]
        assert found[""]["dim"] == 64
        assert {"id", "token-f1", "bleu"} <= set(found["rotation"]["leakage"])
        assert "non_adaptive" in found["gaussian 1000"]
        assert found["gaussian 0.05"]["describes"].startswith("Gaussian noise, 0.05")
    # utility counts the task where the clean vectors beat chance: avg's, not the random ones'
    assert points(privacy, "avg")[""]["utility"] == 1.0
    # syn-topic's chance: its test split's majority-class rate, 3 classes about equally many
    assert 100 / 3 <= points(privacy, "avg")[""]["tasks_chance"]["syn-topic"] < 40
    floor = points(privacy, "random-gaussian")
    assert all(p["utility"] is None and "syn-topic" in p["utility_left_out"]
               for p in floor.values())
    report = (root / "run" / "report.md").read_text(encoding="utf-8")
    assert "## Privacy: leakage against utility" in report
    assert "random-gaussian: syn-topic (no margin over chance when clean" in report
    assert "The non-adaptive attacker" in report
    assert "## Privacy: canaries" in report
    assert (root / "run" / "figures" / "privacy-utility.png").is_file()


def test_a_rotation_leaks_as_much_as_the_clean_vectors(study: tuple[Path, dict]) -> None:
    """The attacker adapts: an invertible transform hides nothing (within the interval), from
    the decoder and from every attack of the run."""
    _, privacy = study
    found = points(privacy, "avg")
    clean, rotated = found[""]["leakage"]["token-f1"], found["rotation"]["leakage"]["token-f1"]
    assert clean["ci95"][0] <= rotated["value"] <= clean["ci95"][1]
    assert found["rotation"]["utility"] == pytest.approx(1.0, abs=0.1)
    labels = ["decoder", "oracle", "bag-of-words", "prior"]
    assert list(found[""]["attacks"]) == list(found["rotation"]["attacks"]) == labels
    for label in labels:
        clean = found[""]["attacks"][label]["leakage"]["token-f1:content"]
        rotated = found["rotation"]["attacks"][label]["leakage"]["token-f1:content"]
        assert clean["ci95"][0] <= rotated["value"] <= clean["ci95"][1], label
    # the oracle ranks by cosine under a deterministic defence, which a rotation keeps
    assert (found["rotation"]["attacks"]["oracle"]["leakage"]["token-f1:content"]["value"]
            == found[""]["attacks"]["oracle"]["leakage"]["token-f1:content"]["value"])


def test_at_the_strongest_noise_every_attack_is_at_the_floor(study: tuple[Path, dict]) -> None:
    """No attack reads more from vectors drowned in noise (Gaussian, sd 1000) than the floor:
    the most any attack reads from the random-gaussian control's vectors, which carry no
    information (the prior's constant among them). One-sided, at 1.96 standard errors of a
    difference, each read off its 95% interval (width / 3.92), unpaired."""
    _, privacy = study
    floor_attacks = privacy["floor_attacks"]
    floor = max((a["leakage"]["token-f1:content"] for a in floor_attacks.values()),
                key=lambda score: score["value"])
    drowned = points(privacy, "avg")["gaussian 1000"]["attacks"]
    assert set(drowned) == set(floor_attacks) == {"decoder", "oracle", "bag-of-words", "prior"}
    clean = points(privacy, "avg")[""]["attacks"]
    for label, attack in drowned.items():
        score = attack["leakage"]["token-f1:content"]
        se = [(s["ci95"][1] - s["ci95"][0]) / 3.92 for s in (score, floor)]
        assert score["value"] <= floor["value"] + 1.96 * math.hypot(*se), label
    # and the clean vectors are not at the floor: the strongest attack there reads them
    assert clean["bag-of-words"]["leakage"]["token-f1:content"]["ci95"][0] > floor["ci95"][1]


def test_the_oracle_ranks_every_canary_first_on_vectors_a_query_returns(
        study: tuple[Path, dict]) -> None:
    """On clean vectors and under a deterministic defence (the rotation) a query of the true
    canary returns its stored vector: the oracle ranks it first among the M candidates of
    every entity, an exposure of log2 M, and is the strongest ranker; on the floor's random
    vectors its exposure is chance's."""
    _, privacy = study
    found = points(privacy, "avg")
    for vectors in ("", "rotation"):
        for kind, canary in found[vectors]["canaries"].items():
            m = canary["candidates"]
            oracle = canary["rankers"]["oracle"]
            assert oracle["exposure"] == pytest.approx(math.log2(m)), (vectors, kind)
            assert canary["ranker"] == "oracle" and canary["exposure"] == oracle["exposure"]
            assert set(canary["rankers"]) == {"decoder", "oracle"}
    for kind, canary in privacy["floor_canaries"].items():
        oracle = canary["rankers"]["oracle"]
        low, high = oracle["exposure_ci95"]
        assert abs(oracle["exposure"] - canary["exposure_chance"]) <= high - low, kind


def test_noise_large_enough_leaves_the_floor_and_chance(study: tuple[Path, dict]) -> None:
    _, privacy = study
    found = points(privacy, "avg")
    floor = points(privacy, "random-gaussian")[""]["leakage"]["token-f1"]
    drowned = found["gaussian 1000"]["leakage"]["token-f1"]
    # Two decoders of no information (the drowned vectors', the floor's random ones) differ by
    # chance alone: their difference is within 1.96 standard errors of a difference, each
    # standard error read off its 95% interval (width / 3.92), unpaired (conservative).
    se = [(score["ci95"][1] - score["ci95"][0]) / 3.92 for score in (drowned, floor)]
    assert abs(drowned["value"] - floor["value"]) <= 1.96 * math.hypot(*se)
    assert found[""]["leakage"]["token-f1"]["value"] > floor["ci95"][1]  # avg leaks, clean
    # syn-topic has 3 balanced classes: the drowned vectors' accuracy is chance's
    accuracy = found["gaussian 1000"]["tasks"]["syn-topic"]
    assert binomtest(round(accuracy * 150 / 100), 150, 1 / 3).pvalue > 0.01
    assert found[""]["tasks"]["syn-topic"] > 80  # the clean vectors are good for the task
    assert found["gaussian 1000"]["utility"] < 0.75 < found["gaussian 0.05"]["utility"]


def test_the_floor_gets_the_same_canaries_and_no_more_than_chance(
        study: tuple[Path, dict]) -> None:
    """The floor's attacker (random-gaussian, undefended) decodes and ranks the same canaries
    as every encoder's: its rank of the true value is uniform (the value is drawn at random),
    so its mean exposure is about the chance level; avg's clean vectors give more."""
    root, privacy = study
    floor = privacy["floor_canaries"]
    assert privacy["floor_encoder"] == "random-gaussian"
    assert floor == points(privacy, "random-gaussian")[""]["canaries"]  # studied: the same
    clean = points(privacy, "avg")[""]["canaries"]
    assert set(floor) == set(clean) == set(ENTITY_TYPES)
    for kind, found in floor.items():
        m = found["candidates"]
        assert (found["n"], m) == (clean[kind]["n"], clean[kind]["candidates"])
        assert found["exposure_chance"] == pytest.approx(chance_exposure(m))
        assert 0 <= found["exposure_ci95"][0] <= found["exposure"] <= found["exposure_ci95"][1]
        assert found["exposure_ci95"][1] <= math.log2(m)
        # the floor's mean is the chance level within about four standard errors (the
        # interval's width: two times 1.96 of them)
        low, high = found["exposure_ci95"]
        assert abs(found["exposure"] - found["exposure_chance"]) <= high - low
    # avg's clean vectors give the places away: its interval lies above the floor's
    assert clean["place"]["exposure_ci95"][0] > floor["place"]["exposure_ci95"][1]
    report = (root / "run" / "report.md").read_text(encoding="utf-8")
    assert "random-gaussian (floor)" in report and "Exposure (bits)" in report


def test_matched_utility_takes_the_least_leaking_level_that_keeps_the_utility() -> None:
    from harness.analyses.privacy.results import PrivacyPoint
    from harness.results.records import MetricScore

    def point(level: float, utility: float, leak: float) -> PrivacyPoint:
        return PrivacyPoint(defence="gaussian", level=level, utility=utility,
                            utility_ci95=(utility - 0.005, utility + 0.005),
                            leakage={"token-f1": MetricScore(value=leak)})

    rows = [PrivacyPoint(utility=1.0, leakage={"token-f1": MetricScore(value=50.0)}),
            point(0.1, 0.99, 40.0), point(0.5, 0.96, 20.0), point(2.0, 0.6, 2.0)]
    matched = matched_leakage(rows, "token-f1", 0.95)["gaussian"]
    assert (matched.level, matched.utility, matched.leakage.value) == (0.5, 0.96, 20.0)
    assert matched_leakage(rows[:1] + rows[3:], "token-f1", 0.95)["gaussian"].level is None


def test_a_records_generator_is_keyed_by_seed_level_stream_and_record() -> None:
    from harness.analyses.privacy.defend import record_rng, text_digest

    a = record_rng(1, "k", "train", 5).standard_normal(3)
    assert np.array_equal(a, record_rng(1, "k", "train", 5).standard_normal(3))
    assert not np.array_equal(a, record_rng(1, "k", "test", 5).standard_normal(3))
    assert not np.array_equal(a, record_rng(1, "k", "train", 6).standard_normal(3))
    assert not np.array_equal(a, record_rng(1, "other level", "train", 5).standard_normal(3))
    assert not np.array_equal(a, record_rng(2, "k", "train", 5).standard_normal(3))
    b = record_rng(1, "k", "record", text_digest("a b")).random(2)
    assert np.array_equal(b, record_rng(1, "k", "record", text_digest("a b")).random(2))
    assert not np.array_equal(b, record_rng(1, "k", "record", text_digest("a c")).random(2))
    assert not np.array_equal(b, record_rng(1, "k", "query", text_digest("a b")).random(2))
    with pytest.raises(ValueError, match="unknown stream 'other'"):
        record_rng(1, "k", "other", 0)


def test_validate_counts_an_attacker_per_encoder_and_level(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC, encoding="utf-8")
    spec = load_spec(path, registry=load_registry())
    # two encoders x one decoder, and 2 studied encoders x 3 levels (rotation, gaussian x 2)
    assert decoders_to_train(spec) == 2 + 6
    assert [len(d.at_levels()) for d in studied_defences(spec)] == [1, 2]
    path.write_text(SPEC.replace("analyses: [downstream, privacy]", "analyses: [downstream]"),
                    encoding="utf-8")
    assert decoders_to_train(load_spec(path, registry=load_registry())) == 2


def test_task_intervals_are_the_exact_intervals_of_accuracies() -> None:
    """(The utility's interval: tests/test_privacy_utility.py.)"""
    from harness.analyses.privacy.point import task_interval
    from harness.protocols import TaskResult

    def result(metric: str, score: float) -> TaskResult:
        return TaskResult(task="t", metric=metric, score=score, scores={}, n_train=0, n_dev=0,
                          n_test=50, config="c", seed=1)

    exact = binomtest(45, 50).proportion_ci(method="exact")
    assert task_interval(result("acc", 90.0)) == pytest.approx((100 * exact.low,
                                                               100 * exact.high))
    assert task_interval(result("pearson", 0.8)) is None


def test_a_remembering_encoder_encodes_each_sentence_once() -> None:
    """The privacy analysis's encoder under several defences: a sentence asked for again is
    not encoded again, and every answer is the inner encoder's vector for it."""
    from types import SimpleNamespace

    from harness.stages.encode import Remembering

    asked: list[list[str]] = []

    def encode(batch, batch_size):
        asked.append(list(batch))
        return np.array([[len(s), s.count("a")] for s in batch], dtype=np.float32)

    model = Remembering(SimpleNamespace(dim=2, fingerprint=lambda: "f", encode=encode))
    first = model.encode(["a cat", "dog", "a cat"])
    second = model.encode(["dog", "banana"])
    assert asked == [["a cat", "dog"], ["banana"]]
    np.testing.assert_array_equal(first, [[5, 2], [3, 0], [5, 2]])
    np.testing.assert_array_equal(second, [[3, 0], [6, 3]])
    assert model.encode([]).shape == (0, 2) and model.fingerprint() == "f"
