"""MRPC-retrieval (plugins/tasks/retrieval.py): recall@k of paraphrase partners by cosine, on a
tiny MRPC-layout test file with hand-chosen vectors, and its interval in the privacy utility."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import beta

import harness_plugins.tasks as task_plugin
from harness.analyses.privacy.point import task_interval
from harness.analyses.privacy.utility import score_interval, task_score, utility
from harness.errors import DataError
from harness.protocols import (
    BuildContext,
    DownstreamTask,
    PreparedData,
    TaskResult,
    chance_level,
    is_seeded,
)
from harness.protocols.task import data_command
from harness.stats.intervals import proportion_interval
from harness.testing import check_registration, check_task
from harness_plugins.tasks.options import ParaphraseRetrievalOptions
from harness_plugins.tasks.retrieval import (
    ParaphraseRetrieval,
    partner_ranks,
    recall_at,
    retrieval_problem,
)

HEADER = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"

# The collection, 2-d vectors 45 degrees apart (c1 at 0 degrees, ..., c7 at 270).
COLLECTION = {
    "c1 the cat sat on the mat .": (1.0, 0.0),
    "c2 stocks fell sharply on monday .": (1.0, 1.0),
    "c3 the senate passed the bill .": (0.0, 1.0),
    "c4 rain is expected tomorrow .": (-1.0, 1.0),
    "c5 the company hired a new chief .": (-1.0, 0.0),
    "c6 police arrested two men .": (-1.0, -1.0),
    "c7 the team won the final .": (0.0, -1.0),
}
C1, C2, C3, C4, C5, C6, C7 = COLLECTION
# Queries and their partner's rank, ties pessimistic (cosines by hand):
QUERIES = {
    # cosine 1 with its partner c1: first.
    "q1 a cat was sitting on the mat .": ((2.0, 0.0), C1),
    # partner c3 at 2/sqrt(5) = 0.894, only c4 higher (3/sqrt(10) = 0.949): second.
    "q2 lawmakers approved the bill .": ((-1.0, 2.0), C3),
    # partner c1 (shared with q1) at -3/sqrt(10), the lowest cosine of all seven: seventh.
    "q3 the kitten lay on a rug .": ((-3.0, -1.0), C1),
    # partner c3 (shared with q2) at 1/sqrt(2), tied with c1, below c2 (1): third, the tie
    # counted against it (half-counted it would be 2.5).
    "q4 the bill cleared the senate .": ((1.0, 1.0), C3),
}
RANKS = {"q1": 1, "q2": 2, "q3": 7, "q4": 3}
# Pairs labelled 0 bring the rest of the collection (and c1 once more); their first sentences
# are neither queries nor encoded.
NEGATIVES = [("z1 an unrelated first sentence .", C2), ("z2 another one .", C4),
             ("z3 a third .", C5), ("z4 a fourth .", C6), ("z5 a fifth .", C7),
             ("z6 not a paraphrase of the cat .", C1)]
VECTORS = {**COLLECTION, **{query: vector for query, (vector, _) in QUERIES.items()}}


def write_mrpc_test(root: Path) -> Path:
    """MRPC's test file under the downstream directory `root`, as SentEval's copy has it:
    header line, tab-separated fields, CRLF line ends; only the test file."""
    rows = [("1", query, partner) for query, (_, partner) in QUERIES.items()]
    rows += [("0", first, second) for first, second in NEGATIVES]
    rows = rows[:2] + rows[4:7] + rows[2:4] + rows[7:]  # labels interleaved, as in the real file
    lines = [HEADER] + [f"{label}\t{100 + i}\t{200 + i}\t{first}\t{second}"
                        for i, (label, first, second) in enumerate(rows)]
    path = root / "MRPC" / "msr_paraphrase_test.txt"
    path.parent.mkdir(parents=True)
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-8"))
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "downstream"
    write_mrpc_test(directory)
    return directory


def fake_encoder(calls: list[list[str]]):
    """The hand-chosen vectors; any other sentence is an error. Records each call."""
    def encode(sentences: list[str]) -> np.ndarray:
        calls.append(list(sentences))
        return np.array([VECTORS[s] for s in sentences], dtype=np.float32)

    return encode


def test_recall_at_1_5_10_and_chance_are_the_hand_computed_ones(root: Path) -> None:
    calls: list[list[str]] = []
    result = ParaphraseRetrieval().evaluate(fake_encoder(calls), root, seed=3)
    assert (result.task, result.metric, result.n_test) == ("MRPC-retrieval", "recall@1", 4)
    assert (result.n_train, result.n_dev, result.seed) == (0, 0, 3)
    # ranks 1, 2, 7, 3 among 7 distinct second sentences
    assert result.score == 25.0
    assert result.scores["recall@1"] == 25.0
    assert result.scores["recall@5"] == 75.0
    assert result.scores["recall@10"] == 100.0
    assert result.scores["collection"] == 7.0
    assert result.scores["median_rank"] == 2.5
    assert result.scores["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 7 + 1 / 3) / 4)
    assert result.chance == pytest.approx(100 / 7) and chance_level(result) == result.chance
    assert result.columns == {"MRPC-retrieval": 25.0}
    # One encode call, each distinct query and collection sentence once, nothing else.
    assert len(calls) == 1
    assert sorted(calls[0]) == sorted(VECTORS) and len(calls[0]) == len(set(calls[0])) == 11
    assert TaskResult.from_json(result.to_json()) == result


def test_ties_count_against_the_partner_and_k_sets_the_headline(root: Path) -> None:
    # At k = 2, q4's partner (tied with c1, under c2) is third: out. Half-counted it would add
    # half a query (62.5%).
    result = ParaphraseRetrieval(k=2).evaluate(fake_encoder([]), root)
    assert (result.metric, result.score) == ("recall@2", 50.0)
    assert set(result.scores) >= {"recall@1", "recall@2", "recall@5", "recall@10"}
    assert result.chance == pytest.approx(200 / 7)
    five = ParaphraseRetrieval(k=5).evaluate(fake_encoder([]), root)
    assert (five.score, five.chance) == (75.0, pytest.approx(500 / 7))
    assert ParaphraseRetrieval(k=50).evaluate(fake_encoder([]), root).chance == 100.0


def test_ranks_from_the_problem_alone() -> None:
    """The pure parts: the problem (dedup map to the true partner) and the pessimistic ranks."""
    from harness.protocols import Examples

    queries = list(QUERIES)
    pairs = Examples(first=(queries[0], "z", queries[1], queries[2], queries[3]),
                     second=(C1, C2, C3, C1, C3), labels=np.array([1, 0, 1, 1, 1]))
    problem = retrieval_problem(pairs)
    assert problem.queries == tuple(queries)
    assert problem.collection == (C1, C2, C3)
    assert problem.partners == (0, 2, 0, 2)
    ranks = partner_ranks(np.array([VECTORS[q] for q in problem.queries]),
                          np.array([VECTORS[c] for c in problem.collection]), problem.partners)
    # collection c1, c2, c3 only: q1 1st; q2: c3 above c2 and c1, 1st; q3: c1 under c3 and
    # c2, 3rd; q4: c3 tied with c1 under c2, 3rd.
    assert ranks.tolist() == [1, 1, 3, 3]
    assert recall_at(ranks, 1) == 50.0 and recall_at(ranks, 3) == 100.0
    # A zero vector has cosine 0 with everything: every item ties, the partner is last.
    assert partner_ranks(np.zeros((1, 2)), np.eye(2), [0]).tolist() == [2]


def test_missing_test_file_is_one_line_naming_it(tmp_path: Path) -> None:
    root = tmp_path / "downstream"
    (root / "MRPC").mkdir(parents=True)
    task = ParaphraseRetrieval()
    with pytest.raises(DataError) as caught:
        task.load(root)
    message = str(caught.value)
    assert "\n" not in message
    assert message == (f"{root}/MRPC/msr_paraphrase_test.txt: missing; run "
                       f"`harness data senteval --dir {root} --tasks MRPC`")
    assert task.files(root) == [root / "MRPC" / "msr_paraphrase_test.txt"]
    with pytest.raises(DataError, match="msr_paraphrase_test.txt: missing"):
        task.evaluate(fake_encoder([]), root)


def test_recall_interval_is_the_exact_clopper_pearson_one(root: Path) -> None:
    result = ParaphraseRetrieval().evaluate(fake_encoder([]), root)
    x, n = 1, 4  # 1 of 4 queries with its partner first
    exact = (100 * beta.ppf(0.025, x, n - x + 1), 100 * beta.ppf(0.975, x + 1, n - x))
    assert task_interval(result) == pytest.approx(exact, rel=1e-9)
    found = proportion_interval(x, n)
    assert task_interval(result) == pytest.approx((100 * found.low, 100 * found.high))
    assert score_interval(task_score(result)) == pytest.approx(exact, rel=1e-9)
    five = ParaphraseRetrieval(k=5).evaluate(fake_encoder([]), root)  # 3 of 4
    assert task_interval(five) == pytest.approx((100 * beta.ppf(0.025, 3, 2),
                                                 100 * beta.ppf(0.975, 4, 1)), rel=1e-9)


def test_recall_enters_the_chance_corrected_utility() -> None:
    def recall(score: float, n: int = 1147, chance: float = 100 / 1697) -> TaskResult:
        return TaskResult(task="MRPC-retrieval", metric="recall@1", score=score,
                          scores={"recall@1": score}, n_train=0, n_dev=0, n_test=n,
                          config="prototyping", seed=1111, chance=chance)

    clean, defended = task_score(recall(800 / 11.47)), task_score(recall(400 / 11.47))
    found = utility({"MRPC-retrieval": defended}, {"MRPC-retrieval": clean})
    c = 100 / 1697
    expected = (400 / 11.47 - c) / (800 / 11.47 - c)
    assert found.left_out == {}
    assert found.tasks == {"MRPC-retrieval": pytest.approx(expected)}
    assert found.ci95 is not None and found.ci95[0] < expected < found.ci95[1]
    # At chance clean (its interval reaches 100 / N), it is left out like an accuracy.
    low = task_score(recall(100 / 4, n=4, chance=100 / 7))
    assert "no margin over chance" in utility({"t": low}, {"t": low}).left_out["t"]


def test_registered_light_unseeded_and_prepared(root: Path) -> None:
    infos = {info.name: info for info in check_registration(task_plugin, name="harness-tasks")}
    info = infos["mrpc-retrieval"]
    options, wrong = ParaphraseRetrievalOptions(k=5), {"k": 0}
    assert info.options is ParaphraseRetrievalOptions and info.options().k == 1
    task = info.factory(options, BuildContext())
    assert task == ParaphraseRetrieval(k=5)
    assert isinstance(task, DownstreamTask) and isinstance(task, PreparedData)
    assert (task.name, is_seeded(task)) == ("MRPC-retrieval", False)
    assert data_command([task], "D") == "harness data senteval --dir D --tasks MRPC"
    with pytest.raises(ValueError):
        ParaphraseRetrievalOptions(**wrong)
    checked = check_task(task, root, fake_encoder([]))
    assert checked.score == 75.0
