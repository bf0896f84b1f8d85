"""The downstream tasks: SentEval's evaluation procedure per task family.

Each task encodes every distinct sentence of its data in one `encode` call (empty sentences as
".", as SentEval's example batchers do), orders the examples as SentEval does before building
features (by sentence length, then label: the order decides folds and mini-batches), and runs
SentEval's procedure for the family, which the task table (`layout`)
names by its `procedure` key:

- `cross-validated`, CrossValidatedClassification (MR, CR, SUBJ, MPQA): nested k-fold logistic
  regression;
- `train-test`, TrainTestClassification (TREC): k-fold on train, then test;
- `split`, SplitClassification (SST2, SST5, SICK-E): L2 chosen on dev (pairs: [|u-v|, u*v]);
- `paraphrase`, ParaphraseDetection (MRPC): k-fold on train on [|u-v|, u*v]; accuracy and F1;
- `relatedness`, Relatedness (SICK-R, STSB): Tai et al. (2015) model; Pearson r;
- `similarity`, SemanticSimilarity (STS12-STS16): cosine; Pearson/Spearman, mean and wmean.

Every family but `similarity` trains a classifier, so its result depends on the seed (`seeded`:
the core evaluates it at each of `downstream.seeds` seeds, from SentEval's 1111 on, and reports
the spread); `similarity` does not, and is evaluated once.

Every result declares its chance level (`TaskResult.chance`): a classification task's
majority-class rate over the examples it tests on (`majority_rate`), 0 for a correlation.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import numpy as np

from harness.plugin import (
    Encode,
    Examples,
    HarnessError,
    TaskData,
    TaskResult,
    row_cosines,
)

from ..encoding import encoded_once
from . import evaluation
from .batched import Trainer
from .configs import EvaluationConfig, get_config
from .layout import task_directory, task_files
from .loaders import load_task
from .relatedness import fit_relatedness
from .sts import score_subset, score_year
from .table import COMBINED_STS, TASKS

TASKS_VERSION = "4"  # 4: fits trained together; unprepared text prepared on reading
"""Bump when a change to loading or evaluation changes results (part of cache keys)."""

@dataclass(frozen=True)
class DataSource:
    """Where a task's data comes from: a loader and the list of files it reads."""

    load: Callable[[Path], TaskData]
    files: Callable[[Path], list[Path]]


def senteval_source(task: str) -> DataSource:
    """Return the source of SentEval task `task` under a `data/downstream` directory."""
    return DataSource(load=lambda root: load_task(task, root),
                      files=lambda root: task_files(task, task_directory(root, task)))


class Vectors:
    """The vectors of a task's distinct sentences, from a single `encode` call."""

    def __init__(self, encode: Encode, data: TaskData, task: str) -> None:
        distinct: dict[str, int] = {}
        for examples in data.splits.values():
            for side in (examples.first, examples.second or ()):
                for sentence in side:
                    distinct.setdefault(sentence, len(distinct))
        self._index = distinct
        self._vectors = encoded_once(encode, list(distinct), task)

    def of(self, sentences: Sequence[str]) -> np.ndarray:
        """Return the (len(sentences), dim) float32 vectors of `sentences`."""
        return self._vectors[[self._index[s] for s in sentences]]


def senteval_order(examples: Examples) -> np.ndarray:
    """Return the example order SentEval encodes in: by token count(s), then label (stable)."""
    first = [len(s.split()) for s in examples.first]
    second = [len(s.split()) for s in examples.second] if examples.second is not None else None
    labels = examples.labels.tolist()

    def key(i: int) -> tuple:
        return (first[i], labels[i]) if second is None else (first[i], second[i], labels[i])

    return np.array(sorted(range(len(examples)), key=key), dtype=np.int64)


def single_features(vectors: Vectors, examples: Examples) -> tuple[np.ndarray, np.ndarray]:
    """Return (sentence vectors, labels) in SentEval's order."""
    order = senteval_order(examples)
    return vectors.of([examples.first[i] for i in order]), examples.labels[order]


def pair_features(vectors: Vectors, examples: Examples) -> tuple[np.ndarray, np.ndarray]:
    """Return ([|u - v|, u * v], labels) in SentEval's order (its MRPC and SICK features)."""
    order = senteval_order(examples)
    if examples.second is None:
        raise HarnessError("pair features need sentence pairs")
    u = vectors.of([examples.first[i] for i in order])
    v = vectors.of([examples.second[i] for i in order])
    return np.concatenate([np.abs(u - v), u * v], axis=1), examples.labels[order]


@dataclass(frozen=True)
class Task(ABC):
    """A downstream task: a name, a data source and SentEval's procedure for its family."""

    name: str
    source: DataSource
    version: str = TASKS_VERSION
    trainer: Trainer | None = None
    """How the classifier fits are trained: None picks SentEval's fits all at once where the
    configuration allows (`batched.trainer_for`); `batched.one_at_a_time` trains them as SentEval
    does, one after the other (the benchmarks' baseline)."""

    seeded: ClassVar[bool] = True
    """Whether the result depends on the seed (the family trains a classifier); the core reads
    it through `harness.protocols.is_seeded`."""

    def files(self, data_dir: Path) -> list[Path]:
        """Return the data files this task reads under `data_dir`."""
        return self.source.files(Path(data_dir))

    def prepare_command(self, data_dir: Path, names: Sequence[str]) -> str:
        """The command that downloads and prepares the files of the tasks `names` under
        `data_dir` (`harness data senteval`; harness.protocols.PreparedData)."""
        return f"harness data senteval --dir {data_dir} --tasks {','.join(names)}"

    def load(self, data_dir: Path) -> TaskData:
        """Read the task's splits from `data_dir`."""
        return self.source.load(Path(data_dir))

    def evaluate(self, encode: Encode, data_dir: Path, *, config: str = "prototyping",
                 seed: int = 1111, device: str = "cpu") -> TaskResult:
        """Encode the task's sentences with `encode` and return SentEval's scores at `seed`."""
        return self.evaluate_seeds(encode, data_dir, config=config, seeds=[seed],
                                   device=device)[0]

    def evaluate_seeds(self, encode: Encode, data_dir: Path, *, config: str = "prototyping",
                       seeds: Sequence[int] = (1111,), device: str = "cpu") -> list[TaskResult]:
        """Encode the task's sentences once and return SentEval's scores at each of `seeds`
        (`harness.protocols.SeedBatched`): the classifier fits of every seed are trained
        together. Each result's `seconds` is the call's time shared equally among the seeds."""
        if not seeds:
            return []
        started = time.perf_counter()
        settings = get_config(config)
        data = self.load(data_dir)
        results = self._evaluate(data, Vectors(encode, data, self.name), settings,
                                 [int(seed) for seed in seeds], device)
        share = round((time.perf_counter() - started) / len(results), 3)
        return [replace(result, seconds=share) for result in results]

    @abstractmethod
    def _evaluate(self, data: TaskData, vectors: Vectors, config: EvaluationConfig,
                  seeds: list[int], device: str) -> list[TaskResult]:
        ...

    def _result(self, metric: str, scores: dict[str, float], sizes: tuple[int, int, int],
                config: EvaluationConfig, seed: int, columns: dict[str, float] | None = None,
                *, chance: float | None = None) -> TaskResult:
        return TaskResult(task=self.name, metric=metric, score=scores[metric], scores=scores,
                          n_train=sizes[0], n_dev=sizes[1], n_test=sizes[2], config=config.name,
                          seed=seed, columns=columns or {self.name: scores[metric]},
                          chance=chance)


def majority_rate(labels: np.ndarray) -> float:
    """The share of the most frequent class among `labels`, in percent: the accuracy of the best
    constant prediction on them, a classification task's chance level (`TaskResult.chance`)."""
    counts = np.unique(np.asarray(labels), return_counts=True)[1]
    return 100.0 * float(counts.max()) / float(counts.sum())


@dataclass(frozen=True)
class Classified:
    """A classification family's validations, one per seed, with what its results report."""

    validations: list[evaluation.Validation]
    sizes: tuple[int, int, int]
    """Examples trained on, used as dev set, tested on."""
    test_labels: np.ndarray


class Classification(Task):
    """A family that trains SentEval's classifier: at each seed a `evaluation.Validation`
    (accuracy, dev accuracy, chosen L2 penalty), its chance level the test labels' majority
    class."""

    def validations(self, encode: Encode, data_dir: Path, *, config: str = "prototyping",
                    seeds: Sequence[int] = (1111,), device: str = "cpu") -> Classified:
        """The validations behind `evaluate_seeds`' results, chosen penalties included."""
        data = self.load(data_dir)
        return self._validate(data, Vectors(encode, data, self.name), get_config(config),
                              [int(seed) for seed in seeds], device)

    @abstractmethod
    def _validate(self, data: TaskData, vectors: Vectors, config: EvaluationConfig,
                  seeds: list[int], device: str) -> Classified:
        ...

    def _evaluate(self, data: TaskData, vectors: Vectors, config: EvaluationConfig,
                  seeds: list[int], device: str) -> list[TaskResult]:
        classified = self._validate(data, vectors, config, seeds, device)
        return [self._classified(result, classified, config)
                for result in classified.validations]

    def _classified(self, result: evaluation.Validation, classified: Classified,
                    config: EvaluationConfig) -> TaskResult:
        scores = {"acc": result.test_accuracy, "devacc": result.dev_accuracy}
        return self._result("acc", scores, classified.sizes, config, result.seed,
                            chance=majority_rate(classified.test_labels))


class CrossValidatedClassification(Classification):
    """MR, CR, SUBJ, MPQA: nested k-fold (every example is trained on and tested once)."""

    def _validate(self, data: TaskData, vectors: Vectors, config: EvaluationConfig,
                  seeds: list[int], device: str) -> Classified:
        x, y = single_features(vectors, data.splits["all"])
        return Classified(evaluation.inner_kfold(x, y, len(data.classes), config, seeds=seeds,
                                                 device=device, trainer=self.trainer),
                          (len(y), 0, len(y)), y)


class TrainTestClassification(Classification):
    """TREC: L2 chosen by k-fold on the training set, then tested."""

    def _validate(self, data: TaskData, vectors: Vectors, config: EvaluationConfig,
                  seeds: list[int], device: str) -> Classified:
        train_x, train_y = single_features(vectors, data.splits["train"])
        test_x, test_y = single_features(vectors, data.splits["test"])
        return Classified(evaluation.kfold(train_x, train_y, test_x, test_y, len(data.classes),
                                           config, seeds=seeds, device=device,
                                           trainer=self.trainer),
                          (len(train_y), 0, len(test_y)), test_y)


class SplitClassification(Classification):
    """SST2, SST5 (sentences) and SICK-E (pairs): L2 chosen on the dev split."""

    def _validate(self, data: TaskData, vectors: Vectors, config: EvaluationConfig,
                  seeds: list[int], device: str) -> Classified:
        features = pair_features if data.splits["train"].second is not None else single_features
        (train_x, train_y), (dev_x, dev_y), (test_x, test_y) = (
            features(vectors, data.splits[name]) for name in ("train", "dev", "test"))
        return Classified(evaluation.split(train_x, train_y, dev_x, dev_y, test_x, test_y,
                                           len(data.classes), config, seeds=seeds,
                                           device=device, trainer=self.trainer),
                          (len(train_y), len(dev_y), len(test_y)), test_y)


def f1_percent(gold: np.ndarray, predicted: np.ndarray) -> float:
    """Return the F1 of the positive class (1), in percent rounded to 2 decimals (0 if undefined)."""
    true_positive = int(np.sum((predicted == 1) & (gold == 1)))
    wrong = int(np.sum(predicted != gold))
    denominator = 2 * true_positive + wrong
    return round(100 * 2 * true_positive / denominator, 2) if denominator else 0.0


class ParaphraseDetection(Classification):
    """MRPC: k-fold on train over [|u - v|, u * v]; accuracy and F1 on test."""

    def _validate(self, data: TaskData, vectors: Vectors, config: EvaluationConfig,
                  seeds: list[int], device: str) -> Classified:
        train_x, train_y = pair_features(vectors, data.splits["train"])
        test_x, test_y = pair_features(vectors, data.splits["test"])
        return Classified(evaluation.kfold(train_x, train_y, test_x, test_y, 2, config,
                                           seeds=seeds, device=device, trainer=self.trainer),
                          (len(train_y), 0, len(test_y)), test_y)

    def _classified(self, result: evaluation.Validation, classified: Classified,
                    config: EvaluationConfig) -> TaskResult:
        assert result.predictions is not None
        f1 = f1_percent(classified.test_labels, result.predictions)
        scores = {"acc": result.test_accuracy, "devacc": result.dev_accuracy, "f1": f1}
        return self._result("acc", scores, classified.sizes, config, result.seed,
                            columns={self.name: result.test_accuracy, f"{self.name}-F1": f1},
                            chance=majority_rate(classified.test_labels))


class Relatedness(Task):
    """SICK-R, STSB: Tai et al. (2015) relatedness model; Pearson r on test.

    The classifier configuration does not apply: SentEval's relatedness model has fixed settings.
    """

    def _evaluate(self, data: TaskData, vectors: Vectors, config: EvaluationConfig,
                  seeds: list[int], device: str) -> list[TaskResult]:
        (train_x, train_y), (dev_x, dev_y), (test_x, test_y) = (
            pair_features(vectors, data.splits[name]) for name in ("train", "dev", "test"))
        results = []
        for seed in seeds:
            fitted = fit_relatedness(train_x, train_y, dev_x, dev_y, test_x, test_y, seed=seed,
                                     device=device)
            scores = {"pearson": fitted.pearson, "spearman": fitted.spearman, "mse": fitted.mse,
                      "devpearson": fitted.dev_pearson}
            results.append(self._result("pearson", scores,
                                        (len(train_y), len(dev_y), len(test_y)), config, seed,
                                        chance=0.0))
        return results


class SemanticSimilarity(Task):
    """STS12-16: cosine similarity, no training; headline = mean Pearson r over subsets. With
    all five years' results, a table row gets `STS`, their mean headline score: Vec2Sent's
    Table 5 has one STS column (`combined_columns`). No classifier, so no seed dependence."""

    seeded: ClassVar[bool] = False

    def combined_columns(self, results: Mapping[str, TaskResult]) -> dict[str, float]:
        """`STS`: the mean of STS12-16's headline scores (mean Pearson r), when all five are
        in `results`; else nothing."""
        if not all(year in results for year in COMBINED_STS):
            return {}
        return {"STS": sum(results[year].score for year in COMBINED_STS) / len(COMBINED_STS)}

    def _evaluate(self, data: TaskData, vectors: Vectors, config: EvaluationConfig,
                  seeds: list[int], device: str) -> list[TaskResult]:
        subsets = {}
        for subset, examples in data.splits.items():
            assert examples.second is not None
            similarity = row_cosines(vectors.of(examples.first), vectors.of(examples.second))
            subsets[subset] = score_subset(similarity, examples.labels)
        year = score_year(subsets)
        scores = {"pearson": year.pearson_mean, "pearson_wmean": year.pearson_wmean,
                  "spearman": year.spearman_mean, "spearman_wmean": year.spearman_wmean}
        for subset, score in subsets.items():
            scores.update({f"{subset}/pearson": score.pearson,
                           f"{subset}/spearman": score.spearman, f"{subset}/n": float(score.n)})
        n = sum(score.n for score in subsets.values())
        # Nothing is trained: every seed's result is the same.
        return [self._result("pearson", scores, (0, 0, n), config, seed, chance=0.0)
                for seed in seeds]


PROCEDURES: dict[str, type[Task]] = {
    "cross-validated": CrossValidatedClassification, "train-test": TrainTestClassification,
    "split": SplitClassification, "paraphrase": ParaphraseDetection, "relatedness": Relatedness,
    "similarity": SemanticSimilarity,
}
"""The task table's `procedure` -> the class implementing it."""

FAMILIES: dict[str, type[Task]] = {name: PROCEDURES[task.procedure] for name, task in TASKS.items()}
"""SentEval task -> the class implementing its procedure, in the table's order."""


def senteval_task(name: str) -> Task:
    """Return SentEval task `name` (MR, CR, ..., STS16) reading SentEval's layout."""
    try:
        family = FAMILIES[name]
    except KeyError:
        raise HarnessError(f"unknown SentEval task {name!r}; known: "
                           f"{', '.join(FAMILIES)}") from None
    return family(name=name, source=senteval_source(name))
