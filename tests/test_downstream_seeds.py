"""Downstream seeds as SentEval has them: its fold splits (scikit-learn's StratifiedKFold, fixed at
1111 for the nested k-fold, at the seed for k-fold on train), `downstream.seed` defaulting to
SentEval's 1111, each task evaluated over several classifier seeds with the spread of its score
(in results.json and the report)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

from harness.errors import SpecError
from harness.protocols import ScoreSpread, TaskResult, is_seeded, over_seeds
from harness.registry.loader import load_registry
from harness.report.write import render_markdown
from harness.results.model import RunResults
from harness.spec import load_spec
from harness.spec.schema import DownstreamSection
from harness.stages.encode import Encoded
from harness.stages.evaluate import evaluate_tasks
from harness.util.cache import Cache
from harness_plugins.tasks.senteval import evaluation
from harness_plugins.tasks.senteval.batched import FitGroup, one_at_a_time, stacked
from harness_plugins.tasks.senteval.configs import CONFIGS
from harness_plugins.tasks.senteval.tasks import senteval_task
from tests.report_fixtures import rich_data, section

PROTOTYPING = CONFIGS["prototyping"]


def labelled_rows(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Two classes, 2:1, and a last column holding each row's index (to tell which rows a
    classifier was fitted on)."""
    rng = np.random.default_rng(3)
    y = (np.arange(n) % 3 == 0).astype(np.int64)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    x[:, 0] += 2 * y
    return np.concatenate([x, np.arange(n, dtype=np.float32)[:, None]], axis=1), y


class Recording:
    """A `Trainer` that records every fit it is given, (its seed, the rows it trains on), and
    trains them with `trainer`."""

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer
        self.fits: list[tuple[int, tuple[int, ...]]] = []

    def __call__(self, x: np.ndarray, y: np.ndarray, groups: list[FitGroup], *args: Any) -> Any:
        for group in groups:
            self.fits += [(group.seed, tuple(int(i) for i in x[group.train, -1]))
                          for _ in group.l2regs]
        return self.trainer(x, y, groups, *args)


@pytest.fixture(params=[stacked, one_at_a_time], ids=["stacked", "one-at-a-time"])
def recording(request: pytest.FixtureRequest) -> Recording:
    return Recording(request.param)


def sklearn_folds(y: np.ndarray, random_state: int) -> list[tuple[np.ndarray, np.ndarray]]:
    splitter = StratifiedKFold(n_splits=5, shuffle=True, random_state=random_state)
    return list(splitter.split(np.zeros((len(y), 1)), y))


# ------------------------------------------------------------------------------ fold splits


def test_nested_kfold_folds_are_sklearns_at_1111_whatever_the_seed(recording) -> None:
    x, y = labelled_rows(60)
    evaluation.inner_kfold(x, y, 2, PROTOTYPING, seeds=[7], trainer=recording)
    expected, refits = [], []
    for train, _ in sklearn_folds(y, 1111):
        for inner_train, _ in sklearn_folds(y[train], 1111):
            expected += [tuple(int(i) for i in train[inner_train])] * 4  # the four L2 penalties
        refits.append(tuple(int(i) for i in train))  # the refit on the outer training part
    assert len(recording.fits) == len(expected + refits) == 5 * (4 * 5 + 1)
    assert [rows for _, rows in recording.fits] == expected + refits
    # the classifiers get the seed; the folds do not
    assert {seed for seed, _ in recording.fits} == {7}
    several = Recording(stacked)
    evaluation.inner_kfold(x, y, 2, PROTOTYPING, seeds=[7, 8], trainer=several)
    assert [rows for _, rows in several.fits] == expected * 2 + refits * 2
    assert [seed for seed, _ in several.fits] == [7] * 100 + [8] * 100 + [7] * 5 + [8] * 5


def test_kfold_on_train_folds_follow_the_seed(recording) -> None:
    x, y = labelled_rows(60)
    evaluation.kfold(x[:50], y[:50], x[50:], y[50:], 2, PROTOTYPING, seeds=[7, 9],
                     trainer=recording)
    for seed, fits in ((7, recording.fits[:20]), (9, recording.fits[20:40])):
        folds = [tuple(int(i) for i in train) for train, _ in sklearn_folds(y[:50], seed)]
        assert fits == [(seed, rows) for rows in folds for _ in range(4)]
    assert recording.fits[40:] == [(7, tuple(range(50))), (9, tuple(range(50)))]
    assert len(recording.fits) == 42


# ------------------------------------------------------------------------------------ seeds


def test_downstream_seed_defaults_to_sentevals_and_five_classifier_seeds() -> None:
    section = DownstreamSection()
    assert (section.seed, section.seeds) == (1111, 5)
    task = SimpleNamespace(seeds=1, model_fields_set={"name"})
    assert section.task_seeds(task) == [1111, 1112, 1113, 1114, 1115]  # type: ignore[arg-type]
    assert section.task_seeds(task, seeded=False) == [1111]  # type: ignore[arg-type]
    own = SimpleNamespace(seeds=2, model_fields_set={"name", "seeds"})
    assert DownstreamSection(seed=3).task_seeds(own) == [3, 4]  # type: ignore[arg-type]
    # The plugins' and the protocol's default seed is SentEval's too.
    assert senteval_task("TREC").evaluate.__kwdefaults__["seed"] == 1111


SPEC = """\
name: t
corpus:
  train: {generate: quickstart, sentences: 10}
  test: {generate: quickstart, sentences: 5}
encoders: [avg]
decoders: [mos-lstm]
metrics: [id]
downstream:
  tasks: [TASKS]
"""


@pytest.mark.parametrize(("tasks", "extra", "field", "detail"), [
    ("{name: trec, seeds: 0}", "", "downstream.tasks.0.seeds", "greater than or equal to 1"),
    ("trec", "  seeds: 0\n", "downstream.seeds", "greater than or equal to 1"),
    ("trec", "  seed: -1\n", "downstream.seed", "greater than or equal to 0"),
])
def test_bad_seed_options_are_one_line_errors(tmp_path: Path, tasks: str, extra: str,
                                              field: str, detail: str) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.replace("TASKS", tasks) + extra, encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_spec(path, (), load_registry())
    assert info.value.field == field and detail in info.value.detail
    assert "\n" not in str(info.value)


def test_a_task_takes_seeds_and_an_encoder_does_not(tmp_path: Path) -> None:
    registry = load_registry()
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.replace("TASKS", "{name: trec, seeds: 3}, sts12"), encoding="utf-8")
    spec = load_spec(path, (), registry)
    trec, sts = spec.components("task")
    assert spec.downstream.task_seeds(trec) == [1111, 1112, 1113]
    assert spec.downstream.task_seeds(sts) == [1111, 1112, 1113, 1114, 1115]
    assert (trec.seeds, sts.seeds) == (3, 5)  # the resolved spec (results.json) says how many
    path.write_text(SPEC.replace("TASKS", "trec").replace("[avg]", "[{name: avg, seeds: 2}]"),
                    encoding="utf-8")
    with pytest.raises(SpecError, match="only decoders and downstream tasks take `seeds:`"):
        load_spec(path, (), registry)


# ----------------------------------------------------------------------------------- spread


def result(seed: int, score: float, seconds: float = 1.0) -> TaskResult:
    return TaskResult(task="TREC", metric="acc", score=score, scores={"acc": score}, n_train=5,
                      n_dev=0, n_test=5, config="prototyping", seed=seed,
                      columns={"TREC": score}, seconds=seconds)


def test_spread_by_hand() -> None:
    spread = ScoreSpread.of([1111, 1112, 1113, 1114], [70.0, 71.0, 73.0, 74.0])
    # mean 72; squared deviations 4 + 1 + 1 + 4 = 10 over n - 1 = 3
    assert spread.mean == 72.0 and math.isclose(spread.sd, math.sqrt(10 / 3))
    assert (spread.min, spread.max, spread.seeds) == (70.0, 74.0, (1111, 1112, 1113, 1114))
    with pytest.raises(ValueError, match="at least two seeds"):
        ScoreSpread.of([1111], [70.0])


def test_over_seeds_keeps_the_first_result_and_adds_the_spread() -> None:
    combined = over_seeds([result(1111, 90.0), result(1112, 92.0), result(1113, 91.0)])
    assert (combined.seed, combined.score, combined.columns) == (1111, 90.0, {"TREC": 90.0})
    assert combined.spread == ScoreSpread.of([1111, 1112, 1113], [90.0, 92.0, 91.0])
    assert combined.spread.sd == 1.0 and combined.seconds == 3.0
    assert over_seeds([result(1111, 90.0)]) == result(1111, 90.0)  # one seed: no spread


def test_spread_round_trips_through_the_cache_and_results_json() -> None:
    combined = over_seeds([result(1111, 90.0), result(1112, 92.0)])
    assert TaskResult.from_json(json.loads(json.dumps(combined.to_json()))) == combined
    data = rich_data()
    data["downstream_details"] = {"sbert": {"TREC": combined.to_json()}}
    results = RunResults.model_validate(data)
    written = results.to_json()["downstream_details"]["sbert"]["TREC"]
    assert written["spread"] == {"seeds": [1111, 1112], "values": [90.0, 92.0], "mean": 91.0,
                                 "sd": math.sqrt(2), "min": 90.0, "max": 92.0}
    assert written["score"] == 90.0 and written["seed"] == 1111
    assert RunResults.model_validate(results.to_json()).downstream_details == {
        "sbert": {"TREC": combined}}


def test_report_shows_the_spread_over_seeds() -> None:
    data = rich_data()
    trec = over_seeds([result(s, v) for s, v in zip(range(1111, 1116),
                                                   [91.4, 92.0, 90.8, 91.2, 91.2])])
    sick = over_seeds([TaskResult(task="SICK-R", metric="pearson", score=r, scores={},
                                  n_train=1, n_dev=1, n_test=1, config="prototyping", seed=s)
                       for s, r in ((1111, 0.8712), (1113, 0.8740))])
    data["downstream_details"] = {"sbert": {"TREC": trec.to_json(), "SICK-R": sick.to_json()}}
    part = section(render_markdown(RunResults.model_validate(data), figures={}),
                   "Downstream scores")
    assert "Spread over classifier seeds" in part
    # sd: squared deviations from 91.32 sum to 0.768, over n - 1 = 4: 0.192, sqrt 0.438
    assert ("| sbert | TREC | acc | 91.40 | 91.32 | 0.44 | 90.80 | 92.00 | 1111–1115 |"
            in part)
    # Correlations get four decimals; sd of two values: their difference over sqrt(2).
    assert ("| sbert | SICK-R | pearson | 0.8712 | 0.8726 | 0.0020 | 0.8712 | 0.8740 | "
            "1111, 1113 |") in part
    del data["downstream_details"]
    plain = section(render_markdown(RunResults.model_validate(data), figures={}),
                    "Downstream scores")
    assert "Spread over classifier seeds" not in plain


# ------------------------------------------------------------------------------ the stage


class CountingTask:
    """A task whose score is its seed's last digits, counting its evaluations."""

    version = "1"

    def __init__(self, name: str, seeded: bool = True) -> None:
        self.name, self.seeded, self.seeds_seen = name, seeded, []

    def files(self, data_dir: Path) -> list[Path]:
        return []

    def evaluate(self, encode: Any, data_dir: Path, *, config: str = "prototyping",
                 seed: int = 1111, device: str = "cpu") -> TaskResult:
        encode(["a sentence", "another"])
        self.seeds_seen.append(seed)
        return result(seed, float(seed % 100))


class CountingEncoder:
    def __init__(self) -> None:
        self.calls = 0

    def encode(self, sentences: list[str], batch_size: int = 256) -> np.ndarray:
        self.calls += 1
        return np.ones((len(sentences), 2), dtype=np.float32)


def run_stage(tmp_path: Path, task: CountingTask, seeds: int, encoder: CountingEncoder
              ) -> TaskResult:
    encoded = Encoded(encoder="enc", keys={}, dim=2, directories={}, identity={"e": 1},
                      model=encoder, pretrained=True)
    component = SimpleNamespace(identity=lambda: {"plugin": "p", "name": task.name},
                                plugin="p", seeds=1, model_fields_set={"name"})
    spec = SimpleNamespace(
        components=lambda kind: [component], seed=1,
        downstream=DownstreamSection(config="prototyping", data_dir=tmp_path, seeds=seeds),
        encode=SimpleNamespace(batch_size=8), corpus=SimpleNamespace(normalise=None))
    ctx = SimpleNamespace(spec=spec, cache=Cache(root=tmp_path / "cache"),
                          build_once=lambda c: task, add_time=lambda stage, seconds: None,
                          device="cpu", built={})
    (got,) = evaluate_tasks(ctx, [encoded])["enc"]  # type: ignore[arg-type]
    return got


def test_the_stage_evaluates_each_seed_from_1111_encodes_once_and_caches_each(
        tmp_path: Path) -> None:
    task, encoder = CountingTask("counting"), CountingEncoder()
    got = run_stage(tmp_path, task, 3, encoder)
    assert task.seeds_seen == [1111, 1112, 1113]  # downstream.seed, not the run's seed 1
    assert encoder.calls == 1
    assert (got.seed, got.score) == (1111, 11.0)
    assert got.spread == ScoreSpread.of([1111, 1112, 1113], [11.0, 12.0, 13.0])
    assert len(list((tmp_path / "cache").rglob("result.json"))) == 3
    # One seed is the first seed's cached result: nothing evaluated, no spread.
    again = run_stage(tmp_path, task, 1, encoder)
    assert task.seeds_seen == [1111, 1112, 1113] and again.spread is None
    assert again.score == 11.0


class BatchedCountingTask(CountingTask):
    """A `SeedBatched` task: the seeds it is asked for in each call of `evaluate_seeds`."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.batches: list[list[int]] = []

    def evaluate_seeds(self, encode: Any, data_dir: Path, *, config: str = "prototyping",
                       seeds: Any = (1111,), device: str = "cpu") -> list[TaskResult]:
        encode(["a sentence", "another"])
        self.batches.append(list(seeds))
        return [result(seed, float(seed % 100)) for seed in seeds]


def test_a_seed_batched_task_is_asked_once_for_the_seeds_the_cache_lacks(
        tmp_path: Path) -> None:
    task, encoder = BatchedCountingTask("batched"), CountingEncoder()
    got = run_stage(tmp_path, task, 3, encoder)
    assert task.batches == [[1111, 1112, 1113]] and task.seeds_seen == []
    assert got.spread == ScoreSpread.of([1111, 1112, 1113], [11.0, 12.0, 13.0])
    assert len(list((tmp_path / "cache").rglob("result.json"))) == 3
    # Five seeds: only the two missing ones are evaluated, together.
    five = run_stage(tmp_path, task, 5, encoder)
    assert task.batches == [[1111, 1112, 1113], [1114, 1115]]
    assert five.spread is not None and five.spread.values == (11.0, 12.0, 13.0, 14.0, 15.0)
    # One seed missing: evaluated alone, through `evaluate`.
    run_stage(tmp_path, task, 6, encoder)
    assert task.batches[2:] == [] and task.seeds_seen == [1116]


def test_a_task_that_trains_nothing_is_evaluated_once(tmp_path: Path) -> None:
    task = CountingTask("cosine", seeded=False)
    assert not is_seeded(task) and is_seeded(object())
    got = run_stage(tmp_path, task, 5, CountingEncoder())
    assert task.seeds_seen == [1111] and got.spread is None
    assert not is_seeded(senteval_task("STS12")) and is_seeded(senteval_task("MR"))


DOWNSTREAM_ONLY = """\
name: seeds
device: cpu
corpus:
  train: {generate: quickstart, sentences: 400}
  test: {generate: quickstart, sentences: 20, seed: 2}
vocab: {bpe_size: 150, dim: 8, epochs: 1}
encoders: [avg]
downstream:
  tasks: [{name: syn-topic, train: 60, dev: 20, test: 30}]
  seeds: 3
report: {formats: [md]}
"""


def test_a_run_writes_the_spread_to_results_json_and_the_report(tmp_path: Path) -> None:
    from harness.runner import run_spec

    path = tmp_path / "seeds.yaml"
    path.write_text(DOWNSTREAM_ONLY, encoding="utf-8")
    spec = load_spec(path, (), load_registry())
    results = run_spec(spec, tmp_path / "run", cache=Cache(tmp_path / "cache")).to_json()
    detail = results["downstream_details"]["avg"]["syn-topic"]
    assert detail["seed"] == 1111 and detail["spread"]["seeds"] == [1111, 1112, 1113]
    assert detail["spread"]["values"][0] == detail["score"] == results["downstream"]["avg"][
        "syn-topic"]
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "Spread over classifier seeds" in section(report, "Downstream scores")
