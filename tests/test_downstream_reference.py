"""A reference table's rows count for the model that earned them, not for a name
(`harness.analyses.downstream.scores.downstream_scores`), and the correlations say why an encoder has no
downstream scores."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.analyses.correlation.correlate import correlations_from_tables
from harness.analyses.downstream.scores import downstream_scores
from harness.protocols import TaskResult

TABLE = """source: T
tasks: [MR, CR]
models:
  a: {model: m-a, dim: 3}
  b: {model: m-b, dim: 3}
scores:
  a: {MR: 70.0, CR: 71.0}
  b: {MR: 60.0, CR: 61.0}
  c: {MR: 50.0, CR: 51.0}
"""


def computed(score: float) -> list[TaskResult]:
    return [TaskResult(task="MR", metric="acc", score=score, scores={}, n_train=1, n_dev=1,
                       n_test=1, config="prototyping", seed=1, columns={"MR": score})]


@pytest.fixture()
def table(tmp_path: Path) -> Path:
    path = tmp_path / "table.yaml"
    path.write_text(TABLE)
    return path


def test_a_row_counts_for_the_encoder_declaring_its_model_and_no_other(table: Path) -> None:
    declared = {"a": {"model": "m-a", "dim": 3}, "b": {"model": "other", "dim": 3},
                  "c": {"model": "m-c"}, "d": {}}
    result = downstream_scores(table, ["a", "b", "c", "d"], declared=declared)
    assert result.scores == {"a": {"MR": 70.0, "CR": 71.0}}
    assert result.origin == {"a": "reference"} and result.missing == ["b", "c", "d"]
    assert result.reasons["b"] == ("T: its row measured model: m-b, dim: 3; this encoder "
                                   "declares model: other, dim: 3")
    assert result.reasons["c"] == ("T: its row declares no model (`models:`), so it applies to "
                                   "no encoder")
    assert result.reasons["d"] == "not in T"
    assert result.tasks == ["MR", "CR"]


def test_encoders_no_row_applies_to_get_computed_scores_or_none(table: Path) -> None:
    declared = {"a": {"model": "m-a", "dim": 3}, "b": {"model": "other"}}
    result = downstream_scores(table, ["a", "b", "e"], {"a": computed(1.0), "b": computed(2.0)},
                               declared=declared)
    assert result.origin == {"a": "reference", "b": "computed"}
    assert result.scores["b"] == {"MR": 2.0} and result.scores["a"]["MR"] == 70.0
    assert result.reasons == {"e": "not in T; no task results"}
    assert result.source == "T + computed by the harness"
    # an encoder whose job recorded no description (it failed) matches no row
    failed = downstream_scores(table, ["a"], declared={})
    assert failed.reasons == {"a": "T: its job recorded no description"}


def test_without_a_table_or_tasks_an_encoder_is_missing_with_the_reason() -> None:
    result = downstream_scores(None, ["a"], declared={"a": {}})
    assert result.scores == {} and result.reasons == {"a": "the spec names no downstream scores"}


def test_published_tables_pair_by_name_unless_their_models_disagree(tmp_path: Path) -> None:
    diagnostics = tmp_path / "diag.yaml"
    diagnostics.write_text("source: D\nkind: diagnostics\ntasks: [id]\n"
                           "models:\n  a: {model: m-a, dim: 3}\n  b: {model: m-x, dim: 3}\n"
                           "scores:\n  a: {id: 1.0}\n  b: {id: 2.0}\n  c: {id: 3.0}\n")
    table = tmp_path / "table.yaml"
    table.write_text(TABLE)
    result = correlations_from_tables(diagnostics, table)
    # a: same model in both; c: neither table says (paired by name); b: different models
    assert set(result.ranks["downstream"]) == {"a", "c"}
    (note,) = [n for n in result.notes if n.startswith("no downstream scores for: ")]
    assert note == ("no downstream scores for: b (T: its row measured model: m-b, dim: 3; this "
                    "encoder declares model: m-x, dim: 3)")
