"""The contract of downstream tasks (SentEval's and any plugin's): what a task reads, what it
returns, and the encoding function the core hands it.

Import these names from `harness.protocols`. On the ground floor: imports nothing from the rest
of the harness, and nothing heavy (numpy appears in annotations only).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

Encode = Callable[[list[str]], "np.ndarray"]
"""Sentences -> float array (len(sentences), dim); given to `evaluate` by the core."""


@dataclass(frozen=True)
class Examples:
    """One split of a task: sentences (or sentence pairs) and their labels.

    `first` holds the sentences, `second` the other side of each pair (None for single-sentence
    tasks). `labels` holds class ids (int64) for classification and gold scores (float64) for
    relatedness/similarity.
    """

    first: tuple[str, ...]
    labels: np.ndarray
    second: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.first)


@dataclass(frozen=True)
class TaskData:
    """A task's splits as read from disk.

    Split names are the task's own (`all`, `train`/`dev`/`test`, one per subset, ...).
    `classes` names the class ids of a classification task; `files` are the files read, in
    reading order.
    """

    name: str
    splits: Mapping[str, Examples]
    files: tuple[Path, ...] = ()
    classes: tuple[str, ...] = ()

    def sizes(self) -> dict[str, int]:
        """Return split name -> number of examples."""
        return {split: len(examples) for split, examples in self.splits.items()}


@dataclass(frozen=True)
class ScoreSpread:
    """A task's headline score over classifier seeds: each seed and its score, their mean, sample
    standard deviation (n - 1 in the denominator), minimum and maximum. Build it with `of`."""

    seeds: tuple[int, ...]
    values: tuple[float, ...]
    mean: float
    sd: float
    min: float
    max: float

    @classmethod
    def of(cls, seeds: Sequence[int], values: Sequence[float]) -> ScoreSpread:
        """Return the spread of `values`, the scores at `seeds` (at least two, one per seed)."""
        if len(seeds) != len(values) or len(values) < 2:
            raise ValueError(f"a spread needs one score per seed and at least two seeds; got "
                             f"{len(seeds)} seeds and {len(values)} scores")
        numbers = [float(v) for v in values]
        return cls(seeds=tuple(int(s) for s in seeds), values=tuple(numbers),
                   mean=statistics.fmean(numbers), sd=statistics.stdev(numbers),
                   min=min(numbers), max=max(numbers))

    def to_json(self) -> dict[str, object]:
        """Return the spread as JSON-ready data."""
        return {"seeds": list(self.seeds), "values": list(self.values), "mean": self.mean,
                "sd": self.sd, "min": self.min, "max": self.max}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> ScoreSpread:
        """Return the spread `to_json` wrote."""
        return cls(seeds=tuple(_integer(s, "seeds") for s in _items(data["seeds"], "seeds")),
                   values=tuple(_number(v, "values") for v in _items(data["values"], "values")),
                   mean=_number(data["mean"], "mean"), sd=_number(data["sd"], "sd"),
                   min=_number(data["min"], "min"), max=_number(data["max"], "max"))


@dataclass(frozen=True)
class TaskResult:
    """The outcome of one task for one encoder.

    `score` is the task's headline number (`metric` names it) at `seed`; `scores` holds every
    sub-score (dev accuracy, F1, Spearman, per-subset correlations, ...) at `seed`. `columns` are
    the values under the names reference tables use (e.g. `{"MRPC": 73.2, "MRPC-F1": 81.0}`).
    `spread` is the headline score over several classifier seeds, the first of them `seed`, for
    a task evaluated at more than one (None otherwise: one seed, or no seed dependence).

    Optional: `chance`, the headline score of a predictor that knows nothing of the input, in
    `score`'s units: for an accuracy the majority-class rate of the test examples (the best
    constant prediction), for a correlation 0. The privacy analysis measures utility as the
    share of the clean vectors' margin over it (`harness.analyses.privacy.utility`); read it
    with `chance_level`. None: the task does not say (its score is then left out of utility).
    """

    task: str
    metric: str
    score: float
    scores: Mapping[str, float]
    n_train: int
    n_dev: int
    n_test: int
    config: str
    seed: int
    columns: Mapping[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    spread: ScoreSpread | None = None
    chance: float | None = None

    def to_json(self) -> dict[str, object]:
        """Return the result as JSON-ready data (the cache and results.json store this)."""
        data: dict[str, object] = {
            "task": self.task, "metric": self.metric, "score": self.score,
            "scores": dict(self.scores), "n_train": self.n_train, "n_dev": self.n_dev,
            "n_test": self.n_test, "config": self.config, "seed": self.seed,
            "columns": dict(self.columns), "seconds": self.seconds}
        if self.spread is not None:
            data["spread"] = self.spread.to_json()
        if self.chance is not None:
            data["chance"] = self.chance
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> TaskResult:
        """Return the result `to_json` wrote."""
        spread, chance = data.get("spread"), data.get("chance")
        return cls(task=str(data["task"]), metric=str(data["metric"]),
                   score=_number(data["score"], "score"),
                   scores=_numbers(data["scores"], "scores"),
                   n_train=_integer(data["n_train"], "n_train"),
                   n_dev=_integer(data["n_dev"], "n_dev"),
                   n_test=_integer(data["n_test"], "n_test"), config=str(data["config"]),
                   seed=_integer(data["seed"], "seed"),
                   columns=_numbers(data.get("columns", {}), "columns"),
                   seconds=_number(data.get("seconds", 0.0), "seconds"),
                   spread=ScoreSpread.from_json(_mapping(spread, "spread")) if spread else None,
                   chance=None if chance is None else _number(chance, "chance"))


def _number(value: object, key: str) -> float:
    """A JSON number read back as a float; ValueError naming `key` otherwise."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise ValueError(f"`{key}`: expected a number, got {value!r}")


def _integer(value: object, key: str) -> int:
    """A JSON whole number read back as an int; ValueError naming `key` otherwise."""
    number = _number(value, key)
    if not number.is_integer():
        raise ValueError(f"`{key}`: expected a whole number, got {value!r}")
    return int(number)


def _items(value: object, key: str) -> list[object]:
    """A JSON list read back; ValueError naming `key` otherwise."""
    if isinstance(value, (list, tuple)):
        return list(value)
    raise ValueError(f"`{key}`: expected a list, got {value!r}")


def _mapping(value: object, key: str) -> Mapping[str, object]:
    """A JSON object read back; ValueError naming `key` otherwise."""
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    raise ValueError(f"`{key}`: expected a mapping, got {value!r}")


def _numbers(value: object, key: str) -> dict[str, float]:
    """A JSON object of numbers read back; ValueError naming `key` otherwise."""
    return {k: _number(v, f"{key}.{k}") for k, v in _mapping(value, key).items()}


@runtime_checkable
class DownstreamTask(Protocol):
    """A downstream evaluation: what a `register_tasks` factory returns.

    `name` is the task as reference tables spell it (`MR`, `SICK-R`, `STS14`); `version` changes
    whenever loading or evaluation changes the result (it is part of cache keys).
    `files(data_dir)` lists the files `load` reads, so the core can digest them for its cache key
    and check them before a run without loading. `evaluate` is handed an `encode` callable
    (sentences -> vectors, batched and checked by the core), so a task never sees the encoder, and
    must be deterministic given `seed`. Optional parts: `GeneratedTask`, `CombinedColumns`,
    `SeedAware`, `SeedBatched`.
    """

    name: str
    version: str

    def files(self, data_dir: Path) -> list[Path]:
        """Return the data files this task reads under `data_dir`."""

    def load(self, data_dir: Path) -> TaskData:
        """Read the task's splits; raise `harness.errors.DataError` naming the file on a problem."""

    def evaluate(self, encode: Encode, data_dir: Path, *, config: str = "prototyping",
                 seed: int = 1111, device: str = "cpu") -> TaskResult:
        """Encode the task's sentences with `encode`, train/evaluate, and return the result."""


@runtime_checkable
class PreparedData(Protocol):
    """Optional for a task that reads files under `data_dir`: the command that makes them,
    which the harness prints where they are missing (the SentEval tasks: `harness data senteval
    --dir DIR --tasks MR,TREC`)."""

    def prepare_command(self, data_dir: Path, names: Sequence[str]) -> str:
        """The command that makes the files of the tasks `names` (this task's name among them,
        all of this plugin) under `data_dir`."""


def data_command(tasks: Sequence[object], data_dir: Path | str) -> str | None:
    """The commands that make the files of `tasks` under `data_dir`, one per plugin that says
    how (`PreparedData`: tasks sharing the method share the command), joined by "; "; None
    when none does."""
    kinds: dict[object, list[PreparedData]] = {}
    for task in tasks:
        if isinstance(task, PreparedData):
            kinds.setdefault(type(task).prepare_command, []).append(task)
    return "; ".join(group[0].prepare_command(Path(data_dir), [getattr(t, "name", "")
                                                                 for t in group])
                     for group in kinds.values()) or None


@runtime_checkable
class GeneratedTask(DownstreamTask, Protocol):
    """Optional for a task: one whose data the harness generates itself (no `data_dir`).

    The core calls `generate(directory)` on a cache directory named after `data_key()` before
    `evaluate(..., directory)`; `generate` is idempotent and writes atomically.
    """

    def data_key(self) -> str:
        """Return what determines the generated files (generator versions, seed, sizes)."""

    def generate(self, directory: Path) -> None:
        """Write the task's data into `directory` unless it is already complete."""


@runtime_checkable
class CombinedColumns(Protocol):
    """Optional for a task: table columns that combine several tasks' results, such as
    SentEval's STS12-16 mean (one STS column in Vec2Sent's Table 5).

    The downstream analysis asks every task of the spec, with one encoder's results by task
    name, and adds the columns it returns to that encoder's row; a task returns none unless
    every result it combines is there."""

    def combined_columns(self, results: Mapping[str, TaskResult]) -> dict[str, float]:
        """Column -> value combined from `results` (task name -> result); empty when a result
        it needs is missing."""


@runtime_checkable
class SeedAware(Protocol):
    """Optional for a task: whether its result depends on the seed it is given (`seeded`).

    The core evaluates a task at each of the spec's downstream seeds and reports the spread of
    its headline score (`over_seeds`); a task whose `seeded` is False (it trains nothing, like
    STS's cosine similarity) is evaluated once. A task without the attribute counts as seeded.
    """

    seeded: bool


@runtime_checkable
class SeedBatched(Protocol):
    """Optional for a task: its results at several seeds from one call, for a task that gains
    from evaluating them together (SentEval's tasks train every seed's classifier fits at
    once and encode the sentences once).

    The core asks for the seeds whose results its cache lacks, in one call, and caches each
    result on its own; a task without the method is evaluated one seed per `evaluate` call. The
    results are in the order of `seeds`, each the one `evaluate(..., seed=s)` would return up to
    float summation order.
    """

    def evaluate_seeds(self, encode: Encode, data_dir: Path, *, config: str = "prototyping",
                       seeds: Sequence[int] = (1111,), device: str = "cpu") -> list[TaskResult]:
        """Encode the task's sentences once; return the result at each of `seeds`."""


def is_seeded(task: object) -> bool:
    """True unless the task says its result does not depend on the seed (`SeedAware`)."""
    return not isinstance(task, SeedAware) or bool(task.seeded)


def chance_level(result: TaskResult) -> float | None:
    """The result's chance level (`TaskResult.chance`), or None where the task does not declare
    a finite one."""
    chance = result.chance
    if chance is None or not math.isfinite(chance):
        return None
    return float(chance)


def over_seeds(results: Sequence[TaskResult]) -> TaskResult:
    """Return the first result with `spread`: the headline score of every result, one per
    classifier seed, in order; one result is returned as it is. `seconds` is their sum."""
    if not results:
        raise ValueError("no results to combine")
    first = results[0]
    if len(results) == 1:
        return first
    spread = ScoreSpread.of([r.seed for r in results], [r.score for r in results])
    return replace(first, spread=spread, seconds=round(sum(r.seconds for r in results), 3))
