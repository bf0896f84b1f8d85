"""The SentEval tasks end to end on the tiny fixture copy, and the task plugin."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pearsonr
from test_downstream_fixtures import write_senteval_fixture

import harness_plugins.tasks as task_plugin
from harness.analyses.downstream.scores import table_row
from harness.errors import HarnessError
from harness.protocols import (
    BuildContext,
    DownstreamTask,
    Examples,
    GeneratedTask,
    Options,
    TaskResult,
    is_seeded,
)
from harness.testing import check_registration, check_task, hashed_bag_of_words
from harness.util.vectors import row_cosines as cosine
from harness_plugins.tasks.senteval.loaders import load_task
from harness_plugins.tasks.senteval.tasks import (
    FAMILIES,
    Vectors,
    pair_features,
    senteval_order,
    senteval_task,
)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("senteval") / "downstream"
    write_senteval_fixture(directory)
    return directory


def test_senteval_order_is_length_then_label_and_stable() -> None:
    examples = Examples(first=("a b c", "a", "b c", "d", "e f"), labels=np.array([0, 1, 1, 0, 0]))
    # lengths 3 1 2 1 2, labels 0 1 1 0 0 -> (1,0) d, (1,1) a, (2,0) e f, (2,1) b c, (3,0)
    assert senteval_order(examples).tolist() == [3, 1, 4, 2, 0]


def _count_encoder(calls: list[list[str]]):
    def encode(sentences: list[str]) -> np.ndarray:
        calls.append(list(sentences))
        return np.array([[len(s), s.count("a"), s.count(".")] for s in sentences], dtype=float)

    return encode


PAIRS = {"train": Examples(first=("a a", "", "a a"), second=("b", "a a", "b"),
                           labels=np.array([0, 1, 0]))}


def test_vectors_encode_each_distinct_sentence_once_and_empty_as_period() -> None:
    calls: list[list[str]] = []
    vectors = Vectors(_count_encoder(calls), load_like(PAIRS), "T")
    assert calls == [["a a", ".", "b"]]
    assert vectors.of(["", "a a"]).tolist() == [[1, 0, 1], [3, 2, 0]]


def test_pair_features_are_abs_difference_and_product_in_senteval_order() -> None:
    vectors = Vectors(_count_encoder([]), load_like(PAIRS), "T")
    features, labels = pair_features(vectors, PAIRS["train"])
    # order by (len A, len B, label): ("", "a a") first, then the two equal pairs as given
    assert labels.tolist() == [1, 0, 0]
    assert features.tolist() == [[2, 2, 1, 3, 0, 0], [2, 2, 0, 3, 0, 0], [2, 2, 0, 3, 0, 0]]


def load_like(splits: dict[str, Examples]):
    from harness.protocols import TaskData

    return TaskData(name="T", splits=splits)


def test_bad_encoder_output_is_refused() -> None:
    data = load_like({"all": Examples(first=("a", "b"), labels=np.array([0, 1]))})
    with pytest.raises(HarnessError, match=r"encode returned an array of shape \(1, 3\) for 2"):
        Vectors(lambda s: np.zeros((1, 3)), data, "T")
    with pytest.raises(HarnessError, match="non-finite"):
        Vectors(lambda s: np.full((len(s), 3), np.nan), data, "T")


@pytest.mark.parametrize("name", ["TREC", "SST5", "MRPC", "SICK-E", "SICK-R", "STSB",
                                  "STS15"])
def test_task_conforms_on_the_fixture(root: Path, name: str) -> None:
    task = senteval_task(name)
    result = check_task(task, root)
    sizes = load_task(name, root).sizes()
    if name in ("TREC", "MRPC"):
        assert (result.n_train, result.n_dev, result.n_test) == (sizes["train"], 0, sizes["test"])
    elif name == "STS15":
        assert result.n_test == sum(sizes.values())
    else:
        assert (result.n_train, result.n_dev, result.n_test) == (
            sizes["train"], sizes["dev"], sizes["test"])


def test_accuracy_tasks_report_percent_and_dev(root: Path) -> None:
    result = senteval_task("SST2").evaluate(hashed_bag_of_words(), root, seed=1)
    assert result.metric == "acc" and 0 <= result.score <= 100
    assert set(result.scores) == {"acc", "devacc"} and result.columns == {"SST2": result.score}


def test_mrpc_reports_f1_column(root: Path) -> None:
    result = senteval_task("MRPC").evaluate(hashed_bag_of_words(), root, seed=1)
    assert result.columns == {"MRPC": result.scores["acc"], "MRPC-F1": result.scores["f1"]}


def test_sts_headline_is_mean_pearson_of_cosines(root: Path) -> None:
    encode = hashed_bag_of_words()
    result = senteval_task("STS16").evaluate(encode, root, seed=1)
    data = load_task("STS16", root)
    pearsons = []
    for subset, examples in data.splits.items():
        similarity = cosine(encode(list(examples.first)), encode(list(examples.second)))
        pearsons.append(pearsonr(similarity, examples.labels)[0])
        assert result.scores[f"{subset}/n"] == 6
    assert result.score == pytest.approx(np.mean(pearsons))
    assert result.scores["pearson_wmean"] == pytest.approx(np.mean(pearsons))  # equal sizes


def test_same_seed_same_scores_for_cross_validated_task(root: Path) -> None:
    task = senteval_task("MPQA")
    first = task.evaluate(hashed_bag_of_words(), root, seed=3)
    again = task.evaluate(hashed_bag_of_words(), root, seed=3)
    assert first.scores == again.scores and first.score > 90  # "not good" vs "good" is lexical
    assert (first.n_train, first.n_dev, first.n_test) == (60, 0, 60)  # every example tested once


def test_result_json_round_trip_and_table_row(root: Path) -> None:
    result = senteval_task("STS12").evaluate(hashed_bag_of_words(), root, seed=1)
    assert TaskResult.from_json(result.to_json()) == result
    years = [TaskResult(task=y, metric="pearson", score=s, scores={"pearson": s}, n_train=0,
                        n_dev=0, n_test=1, config="prototyping", seed=1, columns={y: s})
             for y, s in zip(("STS12", "STS13", "STS14", "STS15", "STS16"),
                             (0.1, 0.2, 0.3, 0.4, 0.5))]
    sts = [senteval_task(year) for year in ("STS12", "STS16")]  # either year combines them
    row = table_row(years, sts)
    assert row["STS"] == pytest.approx(0.3) and row["STS14"] == 0.3
    assert "STS" not in table_row(years[:4], sts)
    assert "STS" not in table_row(years)  # no task of the spec combines columns


def test_unknown_task_and_config() -> None:
    with pytest.raises(HarnessError, match="unknown SentEval task 'SST3'"):
        senteval_task("SST3")
    with pytest.raises(HarnessError, match="unknown downstream config"):
        senteval_task("STS12").evaluate(hashed_bag_of_words(), Path("."), config="quick")


def test_plugin_registers_every_task() -> None:
    infos = check_registration(task_plugin, name="harness-tasks")
    names = {info.name for info in infos}
    assert names == {n.lower() for n in FAMILIES} | {"syn-order", "syn-negation", "syn-topic",
                                                     "syn-relatedness", "mrpc-retrieval"}
    for info in infos:
        options = info.options()
        task = info.factory(options, BuildContext())
        assert isinstance(task, DownstreamTask)
        assert task.name.lower() == info.name or task.name == info.name
        assert isinstance(task, GeneratedTask) == info.name.startswith("syn-")
        if info.name.lower() in {n.lower() for n in FAMILIES}:
            assert info.options is Options
        # STS12-16 and MRPC-retrieval train nothing, so their result does not depend on the seed.
        untrained = {f"sts{year}" for year in range(12, 17)} | {"mrpc-retrieval"}
        assert is_seeded(task) is (info.name not in untrained)


def test_registration_imports_nothing_heavy() -> None:
    code = ("import sys, harness_plugins.tasks; "
            "print(sorted(m for m in ('torch', 'numpy', 'sklearn', 'scipy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_check_task_rejects_what_the_core_cannot_use(root: Path) -> None:
    with pytest.raises(AssertionError, match="is not a DownstreamTask"):
        check_task(object(), root)

    class Drifting:
        name, version = "STS12", "1"

        def __init__(self) -> None:
            self.inner, self.calls = senteval_task("STS12"), 0

        def files(self, data_dir: Path) -> list[Path]:
            return self.inner.files(data_dir)

        def load(self, data_dir: Path):
            return self.inner.load(data_dir)

        def evaluate(self, encode, data_dir, *, config="prototyping", seed=1111, device="cpu"):
            self.calls += 1
            result = self.inner.evaluate(encode, data_dir, seed=seed)
            return TaskResult.from_json({**result.to_json(),
                                         "scores": {**result.scores, "pearson": self.calls}})

    with pytest.raises(AssertionError, match="two evaluations with seed 7 differ"):
        check_task(Drifting(), root)
