"""MRPC-retrieval: paraphrase retrieval over the test pairs of SentEval's MRPC, scored by
recall@k.

Built from `MRPC/msr_paraphrase_test.txt` under SentEval's `data/downstream` (the file the
`mrpc` task tests on, read by the same loader, so the sentences are the same tokens):

- the queries are the first sentences of the test pairs labelled paraphrase (Quality 1), one
  query per such pair (1,147 in SentEval's copy);
- the collection is the second sentences of all test pairs (labelled 0 or 1), each distinct
  text once (1,697 of 1,725); a query's partner, the one relevant item, is its pair's second
  sentence, found in the collection by its text;
- each query ranks the whole collection by the cosine of the vectors (0 against a zero vector);
  recall@k is the percentage of queries whose partner is among the first k.

Ties are resolved pessimistically: a partner's rank is 1 plus the number of other items whose
cosine is at least its own, so an item tied with the partner counts as ranked above it, and a
query counts as a success (a whole one) only when fewer than k items tie with or beat its
partner. Recall@k is then a whole number of successes out of the queries, the proportion
`harness.analyses.privacy` gives its exact Clopper-Pearson interval. Ties need equal cosines:
equal vectors for distinct texts (an averaging encoder on two orderings of the same words), or
vectors on a coarse grid (1- or 2-bit quantisation), where ties count against the partner and
so lower recall somewhat.

A query's own text can be in the collection as another pair's second sentence (12 queries of
SentEval's copy): there it ties at cosine 1 with the query and, ties pessimistic, ranks above
the partner, so no encoder reaches 100% recall@1 there.

Chance: a ranking that ignores the text puts the partner among the first k with probability
k / N for N items, so `TaskResult.chance` is 100 k / N for the headline k. Nothing is trained:
the result does not depend on the seed (`seeded` False). Every distinct sentence (queries and
collection together) is encoded once, in one `encode` call.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from harness.plugin import Encode, Examples, HarnessError, TaskData, TaskResult, unit_rows

from .encoding import encoded_once
from .senteval.layout import MRPC_FILES, resolve_root, task_directory
from .senteval.loaders import load_mrpc

NAME = "MRPC-retrieval"
VERSION = "1"
"""Bump when a change to loading or scoring changes results (part of cache keys)."""
REPORTED_K: tuple[int, ...] = (1, 5, 10)
"""The recall@k every result carries in `scores`, beside the headline k."""
_ROWS_AT_ONCE = 1024
"""Queries whose cosines with the whole collection are held at once."""


@dataclass(frozen=True)
class RetrievalProblem:
    """Queries, the collection they search and, per query, the index of its partner in
    `collection`."""

    queries: tuple[str, ...]
    collection: tuple[str, ...]
    partners: tuple[int, ...]

    def sentences(self) -> list[str]:
        """Every distinct sentence of the queries and the collection, each once, in first-seen
        order (queries first)."""
        return list(dict.fromkeys((*self.queries, *self.collection)))


def retrieval_problem(pairs: Examples) -> RetrievalProblem:
    """The retrieval problem of sentence pairs labelled 1 (paraphrase) or 0: the first sentence
    of each pair labelled 1 is a query; the collection is the second sentences of all pairs,
    each distinct text once; a query's partner is its own pair's second sentence."""
    if pairs.second is None:
        raise HarnessError("paraphrase retrieval needs sentence pairs")
    index: dict[str, int] = {}
    for sentence in pairs.second:
        index.setdefault(sentence, len(index))
    labels = np.asarray(pairs.labels).tolist()
    chosen = [i for i, label in enumerate(labels) if label == 1]
    return RetrievalProblem(queries=tuple(pairs.first[i] for i in chosen),
                            collection=tuple(index),
                            partners=tuple(index[pairs.second[i]] for i in chosen))


def partner_ranks(queries: np.ndarray, collection: np.ndarray,
                  partners: Sequence[int]) -> np.ndarray:
    """Each query's partner's rank (1 = first) when the query ranks `collection` by cosine,
    ties pessimistic: 1 + the number of other items whose cosine is at least the partner's.

    `queries` (q, d) and `collection` (n, d) are vectors; `partners` the index in `collection`
    of each query's partner. Returns int64 ranks (q,)."""
    targets = np.asarray(partners, dtype=np.int64)
    queries, collection = unit_rows(queries), unit_rows(collection)
    ranks = np.empty(len(targets), dtype=np.int64)
    for start in range(0, len(targets), _ROWS_AT_ONCE):
        stop = min(start + _ROWS_AT_ONCE, len(targets))
        cosines = queries[start:stop] @ collection.T
        rows = np.arange(stop - start)
        own = cosines[rows, targets[start:stop]]
        # The partner itself is counted by >= (equal to itself): it stands for the 1 in 1 + ...
        ranks[start:stop] = np.sum(cosines >= own[:, None], axis=1)
    return ranks


def recall_at(ranks: np.ndarray, k: int) -> float:
    """The percentage of queries whose partner's rank is at most `k`."""
    return 100.0 * float(np.mean(np.asarray(ranks) <= k))


@dataclass(frozen=True)
class ParaphraseRetrieval:
    """`mrpc-retrieval`: recall@k of each paraphrase pair's second sentence given its first,
    among the second sentences of all MRPC test pairs (the module's docstring). `k` is the
    headline's k."""

    k: int = 1
    name: str = NAME
    version: str = VERSION

    seeded: ClassVar[bool] = False
    """Nothing is trained: one evaluation serves every seed (`harness.protocols.SeedAware`)."""

    def __post_init__(self) -> None:
        if self.k < 1:
            raise HarnessError(f"task {self.name}: k must be at least 1, got {self.k}")

    @property
    def metric(self) -> str:
        """The headline's name: `recall@k`."""
        return f"recall@{self.k}"

    def files(self, data_dir: Path) -> list[Path]:
        """The MRPC test file under SentEval's `data/downstream` directory `data_dir`."""
        return [task_directory(Path(data_dir), "MRPC") / MRPC_FILES["test"]]

    def prepare_command(self, data_dir: Path, names: Sequence[str]) -> str:
        """The command that downloads and prepares MRPC's files under `data_dir`
        (`harness.protocols.PreparedData`)."""
        return f"harness data senteval --dir {data_dir} --tasks MRPC"

    def load(self, data_dir: Path) -> TaskData:
        """The MRPC test pairs, one split `test`; `DataError` naming the file on a problem."""
        root = resolve_root(Path(data_dir))
        hint = f"run `{self.prepare_command(root, [self.name])}`"
        data = load_mrpc(task_directory(root, "MRPC"), self.name, hint, splits_read=("test",))
        return TaskData(name=self.name, splits=data.splits, files=data.files)

    def evaluate(self, encode: Encode, data_dir: Path, *, config: str = "prototyping",
                 seed: int = 1111, device: str = "cpu") -> TaskResult:
        """Encode the queries and the collection once, rank by cosine and return recall@k.

        `scores` holds recall@1, @5, @10 and @k (percent), `collection` (its size N),
        `median_rank` and `mrr` (mean reciprocal rank, 0-1), ranks with ties pessimistic;
        `n_test` is the number of queries. `config`, `seed` and `device` do not change it:
        nothing is trained."""
        started = time.perf_counter()
        problem = retrieval_problem(self.load(data_dir).splits["test"])
        if not problem.queries:
            raise HarnessError(f"task {self.name}: no pair labelled 1 (paraphrase) in "
                               f"{self.files(data_dir)[0]}; nothing to retrieve")
        sentences = problem.sentences()
        vectors = encoded_once(encode, sentences, self.name)
        row = {sentence: i for i, sentence in enumerate(sentences)}
        ranks = partner_ranks(vectors[[row[s] for s in problem.queries]],
                              vectors[[row[s] for s in problem.collection]], problem.partners)
        size = len(problem.collection)
        scores = {f"recall@{k}": recall_at(ranks, k)
                  for k in sorted({*REPORTED_K, self.k})}
        scores.update({"collection": float(size), "median_rank": float(np.median(ranks)),
                       "mrr": float(np.mean(1.0 / ranks))})
        return TaskResult(task=self.name, metric=self.metric, score=scores[self.metric],
                          scores=scores, n_train=0, n_dev=0, n_test=len(problem.queries),
                          config=config, seed=seed, columns={self.name: scores[self.metric]},
                          seconds=round(time.perf_counter() - started, 3),
                          chance=100.0 * min(self.k, size) / size)
