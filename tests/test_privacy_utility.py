"""The privacy analysis's utility (`harness.analyses.privacy.utility`): chance-corrected per task
against hand computation, tasks without a clean margin over chance left out with the reason,
the interval against scipy's Jeffreys quantiles and its coverage by simulation; matched utility
decided on the interval; the report's non-adaptive table and left-out note; the tasks' chance
level; and encoder-aware metrics scored against the clean vectors under a noisy defence."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import beta, binomtest, pearsonr

from harness.analyses.privacy.results import MatchedLeakage, Privacy, PrivacyPoint
from harness.analyses.privacy.study import matched_leakage
from harness.analyses.privacy.utility import (
    TaskScore,
    clean_utility,
    score_interval,
    task_score,
    utility,
)
from harness.protocols import TaskResult, chance_level
from harness.results.records import MetricScore


def acc(percent: float, n: int, chance: float | None) -> TaskScore:
    return TaskScore(score=percent, metric="acc", n=n, chance=chance)


def test_utility_is_the_mean_share_of_the_clean_margin_over_chance() -> None:
    """Laplace at epsilon 10 in docs/performance.md: syn-topic 38% against 98% clean, 3
    classes: 0.39 of the clean score but 0.07 of its margin over chance."""
    clean = {"topic": acc(98.0, 300, 100 / 3), "pair": acc(80.0, 300, 50.0)}
    defended = {"topic": acc(38.0, 300, 100 / 3), "pair": acc(65.0, 300, 50.0)}
    found = utility(defended, clean)
    topic = (38 - 100 / 3) / (98 - 100 / 3)
    assert found.tasks == pytest.approx({"topic": topic, "pair": 0.5})
    assert topic == pytest.approx(0.0722, abs=1e-4)
    assert found.value == pytest.approx((topic + 0.5) / 2)
    assert found.left_out == {}
    assert found.ci95 is not None and found.ci95[0] < found.value < found.ci95[1]
    assert utility(defended, clean) == found  # a fixed seed: the same interval every time
    itself = clean_utility(clean)
    assert (itself.value, itself.ci95, itself.tasks) == (1.0, None, {"topic": 1.0, "pair": 1.0})


def test_tasks_without_a_clean_margin_over_chance_are_left_out_with_the_reason() -> None:
    """syn-order in docs/performance.md: every encoder at chance clean (45-56%)."""
    clean = {"topic": acc(98.0, 300, 100 / 3), "order": acc(52.0, 300, 50.0),
             "below": acc(40.0, 300, 50.0), "unknown": acc(90.0, 300, None),
             "corr": TaskScore(-0.2, "pearson", 500, 0.0), "f1": TaskScore(80.0, "f1", 300, 50.0),
             "gone": acc(90.0, 300, 50.0)}
    defended = {task: score for task, score in clean.items() if task != "gone"}
    found = utility(defended, clean)
    assert list(found.tasks) == ["topic"] and found.value == pytest.approx(1.0)
    assert set(found.left_out) == {"order", "below", "unknown", "corr", "f1", "gone"}
    exact = binomtest(156, 300).proportion_ci(method="exact")
    assert found.left_out["order"] == (f"no margin over chance when clean: 52 [{100 * exact.low:.4g}, "
                                       f"{100 * exact.high:.4g}] reaches chance 50")
    assert found.left_out["unknown"] == "the task declares no chance level"
    assert found.left_out["gone"] == "no score on these vectors"
    assert "no sampling model" in found.left_out["f1"]
    assert clean_utility(clean).left_out == {k: v for k, v in found.left_out.items()
                                             if k != "gone"}
    assert utility({"order": acc(51.0, 300, 50.0)}, {"order": clean["order"]}).value is None


def test_with_the_clean_score_all_but_certain_the_interval_is_the_jeffreys_one() -> None:
    """u = (100 p - c) / (k - c) is increasing in p, so with k fixed its interval is the
    Jeffreys interval of p (scipy's Beta quantiles) mapped through it."""
    c, k, n, x = 50.0, 80.0, 300, 195
    certain = acc(k, 10**9, c)
    found = utility({"t": acc(100 * x / n, n, c)}, {"t": certain})
    jeffreys = beta.ppf([0.025, 0.975], x + 0.5, n - x + 0.5)
    assert found.ci95 == pytest.approx(tuple((100 * jeffreys - c) / (k - c)), abs=0.01)
    # The clean score measured on as few examples widens the interval; to first order by
    # sqrt(1 + D^2 Var k / (K^2 Var s)) with D = 65 - 50, K = 80 - 50 (delta method): 1.08.
    widened = utility({"t": acc(100 * x / n, n, c)}, {"t": acc(k, n, c)})
    assert widened.ci95 is not None and found.ci95 is not None
    ratio = (widened.ci95[1] - widened.ci95[0]) / (found.ci95[1] - found.ci95[0])
    expected = np.sqrt(1 + 15**2 * 0.8 * 0.2 / (30**2 * 0.65 * 0.35))
    assert expected == pytest.approx(1.08, abs=0.01)
    assert ratio == pytest.approx(expected, abs=0.04)


def coverage(true: float, draw, simulations: int, seed: int) -> float:
    """The share of `simulations` intervals (`draw(rng)` -> a Utility) that hold `true`."""
    rng = np.random.default_rng(seed)
    held = 0
    for _ in range(simulations):
        found = draw(rng)
        assert found.ci95 is not None
        held += found.ci95[0] <= true <= found.ci95[1]
    return held / simulations


def test_the_interval_covers_the_true_utility_of_accuracies_95_percent_of_the_time() -> None:
    """Two tasks, true accuracies (defended, clean): 3 classes (0.38, 0.98) over 150 test
    examples (the Laplace case, clean near its ceiling) and 2 classes (0.70, 0.80) over 300; each
    simulated run draws both scores of both tasks from their binomials. 400 runs: the coverage
    lies within about 2 standard errors (0.011) of 95%."""
    tasks = {"topic": (0.38, 0.98, 150, 100 / 3), "pair": (0.70, 0.80, 300, 50.0)}
    true = np.mean([(100 * d - c) / (100 * k - c) for d, k, _, c in tasks.values()])

    def draw(rng: np.random.Generator):
        scores = {t: (acc(100 * rng.binomial(n, d) / n, n, c), acc(100 * rng.binomial(n, k) / n,
                                                                    n, c))
                  for t, (d, k, n, c) in tasks.items()}
        return utility({t: s[0] for t, s in scores.items()}, {t: s[1] for t, s in scores.items()},
                       draws=4000)

    assert 0.925 <= coverage(float(true), draw, 400, seed=3) <= 0.975


def test_the_interval_covers_the_true_ratio_of_correlations() -> None:
    """Pearson's r over 150 pairs of a bivariate normal, rho 0.35 defended and 0.7 clean: the
    true utility 0.5, each run drawing both samples afresh."""
    n, rho_d, rho_k = 150, 0.35, 0.7

    def sample_r(rng: np.random.Generator, rho: float) -> float:
        x = rng.standard_normal(n)
        y = rho * x + np.sqrt(1 - rho**2) * rng.standard_normal(n)
        return float(pearsonr(x, y)[0])

    def draw(rng: np.random.Generator):
        return utility({"r": TaskScore(sample_r(rng, rho_d), "pearson", n, 0.0)},
                       {"r": TaskScore(sample_r(rng, rho_k), "pearson", n, 0.0)}, draws=4000)

    assert 0.925 <= coverage(rho_d / rho_k, draw, 400, seed=5) <= 0.975


def test_a_correlations_interval_is_fishers() -> None:
    low, high = score_interval(TaskScore(0.5, "pearson", 103, 0.0))  # type: ignore[misc]
    assert (low, high) == pytest.approx((np.tanh(np.arctanh(0.5) - 0.196),
                                         np.tanh(np.arctanh(0.5) + 0.196)), abs=1e-4)


def point(level: float, utility: float, ci95: tuple[float, float] | None,
          leak: float) -> PrivacyPoint:
    return PrivacyPoint(defence="gaussian", level=level, utility=utility, utility_ci95=ci95,
                        leakage={"token-f1": MetricScore(value=leak, ci95=(leak - 1, leak + 1))})


def test_matched_utility_keeps_a_level_only_when_its_lower_bound_reaches_the_target() -> None:
    rows = [PrivacyPoint(utility=1.0, leakage={"token-f1": MetricScore(value=50.0)}),
            point(0.1, 0.99, (0.96, 1.02), 40.0), point(0.5, 0.97, (0.93, 1.01), 20.0),
            point(2.0, 0.6, (0.5, 0.7), 2.0)]
    matched = matched_leakage(rows, "token-f1", 0.95)["gaussian"]
    # 0.5 keeps 0.97 on its point estimate but its interval reaches down to 0.93
    assert (matched.level, matched.utility, matched.utility_ci95) == (0.1, 0.99, (0.96, 1.02))
    assert matched_leakage(rows[:1] + rows[2:], "token-f1", 0.95)["gaussian"].level is None
    assert matched_leakage([point(0.1, 0.99, None, 1.0)], "token-f1", 0.5)[
        "gaussian"].level is None  # no interval: not kept


def test_the_report_shows_the_non_adaptive_attacker_the_left_out_tasks_and_the_interval() -> None:
    from harness.analyses.privacy.report import privacy_sections

    clean = PrivacyPoint(utility=1.0, leakage={"token-f1": MetricScore(value=50.0)},
                         utility_left_out={"syn-order": "no margin over chance when clean"})
    noisy = point(0.5, 0.97, (0.951, 1.01), 20.0).model_copy(update={
        "non_adaptive": {"token-f1": MetricScore(value=12.5, ci95=(11.0, 14.0))},
        "utility_left_out": {"syn-order": "no margin over chance when clean"}})
    privacy = Privacy(attacker="mos-lstm", leakage="token-f1", utility="u", matched_utility=0.95,
                      points={"avg": [clean, noisy]},
                      matched={"avg": {"gaussian": MatchedLeakage(
                          level=0.5, utility=0.97, utility_ci95=(0.951, 1.01),
                          leakage=noisy.leakage["token-f1"], clean=clean.leakage["token-f1"])}})
    (section,) = privacy_sections(SimpleNamespace(privacy=privacy), {})  # type: ignore[arg-type]
    text = " ".join(section.text)
    assert "lower bound of its utility's 95% interval" in text
    assert "avg: syn-order (no margin over chance when clean)" in text
    matched, *_, non_adaptive = section.tables
    # no attack ran: the decoder's own leakage, labelled as such, the same decoder's clean
    assert matched.header[4:] == ["strongest attack", "token-f1 of the attack",
                                  "token-f1 of the attack, clean vectors"]
    assert matched.rows == [["avg", "gaussian", "0.5", "0.970 [0.951, 1.010]",
                             "decoder (mos-lstm)", "20.0 [19.0, 21.0]", "50.0"]]
    assert non_adaptive.header == ["encoder", "vectors", "token-f1 adaptive",
                                   "token-f1 non-adaptive"]
    assert non_adaptive.rows == [["avg", "gaussian 0.5", "20.0 [19.0, 21.0]",
                                  "12.5 [11.0, 14.0]"]]
    privacy.points["avg"][1] = noisy.model_copy(update={"non_adaptive": None})
    (section,) = privacy_sections(SimpleNamespace(privacy=privacy), {})  # type: ignore[arg-type]
    assert not any("non-adaptive" in table.caption for table in section.tables)


def test_tasks_declare_their_chance_level_and_results_keep_it(tmp_path: Path) -> None:
    from harness.testing.tasks import hashed_bag_of_words
    from harness_plugins.tasks.senteval.tasks import majority_rate
    from harness_plugins.tasks.synthetic import Sizes, synthetic_task

    assert majority_rate(np.array([0, 1, 1, 2, 1])) == pytest.approx(60.0)
    task = synthetic_task("syn-order", Sizes(train=60, dev=20, test=30))
    task.generate(tmp_path)
    result = task.evaluate(hashed_bag_of_words(), tmp_path, seed=3)
    labels = task.load(tmp_path).splits["test"].labels
    assert result.chance == pytest.approx(100 * np.bincount(labels).max() / len(labels))
    assert chance_level(result) == result.chance
    assert TaskResult.from_json(result.to_json()) == result
    assert task_score(result) == TaskScore(result.score, "acc", 30, result.chance)
    relatedness = synthetic_task("syn-relatedness", Sizes(train=60, dev=20, test=30))
    relatedness.generate(tmp_path / "r")
    assert relatedness.evaluate(hashed_bag_of_words(), tmp_path / "r", seed=3).chance == 0.0
    undeclared = TaskResult.from_json({**result.to_json(), "chance": None})
    assert undeclared.chance is None and chance_level(undeclared) is None
    assert "chance" not in undeclared.to_json()


# ------------------------------------------------- encoder-aware metrics under a noisy defence

REFS = ["a b c", "b c d", "c d a", "d a b", "a a c", "b d d"]


class BagEncoder:
    """A deterministic bag of hashed words, 16 dimensions."""

    dim = 16

    def fingerprint(self) -> str:
        return "bag"

    def encode(self, sentences, batch_size=256):
        table = np.random.default_rng(0).standard_normal((4, self.dim))
        return np.array([table[["abcd".index(w) for w in s.split()]].mean(axis=0)
                         for s in sentences], dtype=np.float32)


def test_an_exact_regeneration_scores_100_cosine_under_a_noisy_defence(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.analyses.privacy import point as attack_module
    from harness.analyses.privacy.defend import defend_encoded
    from harness.registry.loader import load_registry
    from harness.spec import DefenceEntry
    from harness.stages.base import RunContext
    from harness.stages.encode import Encoded
    from harness.stages.generate import Samples
    from harness.util.cache import Cache
    from harness_plugins.metrics.cosine import CosineMetric

    model = BagEncoder()
    folder = tmp_path / "clean"
    folder.mkdir()
    for split in ("train", "test"):
        np.save(folder / f"{split}.npy", model.encode(REFS))
    clean = Encoded(encoder="avg", keys={"train": "avg-train", "test": "avg-test"}, dim=16,
                    directories={"train": folder, "test": folder},
                    identity={"encoder": {"name": "avg", "options": {}}}, model=model,
                    plugin="harness-encoders")
    cosine = SimpleNamespace(name="cosine", plugin="harness-metrics",
                             info=SimpleNamespace(kind="metric", needs=("encoder",)),
                             identity=lambda: {"name": "cosine"},
                             build=lambda context, purpose="": CosineMetric())
    spec = SimpleNamespace(seed=1, encode=SimpleNamespace(batch_size=4), metrics=[cosine])
    ctx = RunContext(spec=spec, cache=Cache(tmp_path / "cache"))  # type: ignore[arg-type]
    info = load_registry().get("defence", "gaussian")
    entry = DefenceEntry(name="gaussian").resolved(info, info.options(scale=1.0))
    defended, _ = defend_encoded(ctx, clean, entry)
    assert not np.allclose(defended.vectors("test"), clean.vectors("test"))
    exact = Samples(encoder="avg", decoder="lstm", key="exact", path=tmp_path / "s.jsonl",
                    records=[{"index": i, "reference": r, "reference_raw": r, "hypothesis": r}
                             for i, r in enumerate(REFS)], sentences_per_s=1.0)
    monkeypatch.setattr(attack_module, "generate_samples", lambda *args: exact)
    attacker, trained = SimpleNamespace(name="lstm"), SimpleNamespace()

    def cosine_of(**given: Encoded) -> float:
        found = attack_module.leaked(ctx, attacker, trained, defended, None, None,  # type: ignore[arg-type]
                                     **given)
        return found["cosine"].value  # type: ignore[return-value]

    assert cosine_of(clean=clean) == pytest.approx(100.0, abs=1e-3)
    assert cosine_of() < 95.0  # re-encoded through the defence, noise on both sides
