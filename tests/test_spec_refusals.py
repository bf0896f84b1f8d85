"""Mistakes a new user makes in the newer sections, refused by `harness validate` in one line
with file:line and the field, before any work (as the older sections' are)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main

BASE = """name: refusals
corpus:
  train: {generate: quickstart, sentences: 300}
  test: {generate: quickstart, sentences: 40, seed: 2}
encoders: [avg, hier, max]
decoders: [{name: mos-lstm, hidden: 16, epochs: 1}]
metrics: [id, {name: retrieval, k: 8}]
downstream: {tasks: [{name: syn-topic, train: 100}]}
correlation: {method: spearman}
"""


@pytest.mark.parametrize(("old", "new", "line", "field", "what"), [
    ("correlation: {method: spearman}",
     "correlation: {method: spearman, primary: {tasks: [syn-order]}}", 9,
     "correlation.primary.tasks.0", "'syn-order' is not among the spec's downstream tasks"),
    ("{name: retrieval, k: 8}", "{name: retrieval, k: 50}", 7, "metrics.1.k",
     "50 candidates per test vector, but the test split holds at most 40 sentences"),
    ("encoders: [avg, hier, max]", "encoders: [avg, hier, max]\ncurve: {train_sizes: [100, 300]}",
     6, "curve.train_sizes.1", "300 is not below the 300 training sentences"),
    ("encoders: [avg, hier, max]", "encoders: []", 5, "encoders", "name at least one encoder"),
    ("sentences: 40, seed: 2", "sentences: 40, seed: -2", 4, "corpus.test.seed",
     "greater than or equal to 0"),
])
def test_validate_refuses_in_one_line_with_file_line_and_field(tmp_path: Path, old: str,
                                                               new: str, line: int, field: str,
                                                               what: str) -> None:
    assert old in BASE
    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE.replace(old, new), encoding="utf-8")
    done = CliRunner().invoke(main, ["validate", str(spec)])
    assert done.exit_code == 2
    (message,) = [text for text in done.output.splitlines() if text.startswith("error:")]
    assert f"spec.yaml:{line}: {field}: " in message and what in message


def test_the_base_spec_is_valid(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE, encoding="utf-8")
    done = CliRunner().invoke(main, ["validate", str(spec)])
    assert done.exit_code == 0, done.output


def test_encoders_declare_families_and_nothing_else_does(tmp_path: Path) -> None:
    from harness.registry.loader import load_registry
    from harness.spec import load_spec

    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE.replace("encoders: [avg, hier, max]",
                                 "encoders: [{name: avg, family: subword pooling}, "
                                 "{name: hier, family: subword pooling}, max]"),
                    encoding="utf-8")
    loaded = load_spec(spec, (), load_registry())
    assert loaded.families() == {"subword pooling": ["avg", "hier"]}
    assert [e.identity() for e in loaded.encoders][0]["name"] == "avg"  # not in cache keys
    assert "family" not in loaded.encoders[0].identity()
    spec.write_text(BASE.replace("{name: mos-lstm, hidden: 16, epochs: 1}",
                                 "{name: mos-lstm, hidden: 16, epochs: 1, family: x}"),
                    encoding="utf-8")
    done = CliRunner().invoke(main, ["validate", str(spec)])
    assert done.exit_code == 2 and "spec.yaml:6: decoders.0.family: only encoders take" in done.output
