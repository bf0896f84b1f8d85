"""The primary test's registration: the commit at which the spec file's `correlation.primary`
last changed, and the fields in which the run's spec differs from the spec committed there."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.analyses.correlation.primary_report import registration_line
from harness.analyses.correlation.registration import changed_fields, registration
from harness.registry.loader import load_registry
from harness.results.model import RunResults
from harness.spec import load_spec
from tests.test_spec_refusals import BASE

SPEC = BASE.replace("correlation: {method: spearman}",
                    "correlation:\n  method: spearman\n  primary: {diagnostics: [id], alpha: 0.05}")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.org")
    git(tmp_path, "config", "user.name", "t")
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "spec.yaml").write_text(SPEC, encoding="utf-8")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "register the primary test")
    return tmp_path


def found(repo: Path, overrides: tuple[str, ...] = ()):
    spec = load_spec(repo / "benchmarks" / "spec.yaml", overrides, load_registry())
    return registration(spec.source, spec.document)


def line(result) -> str:
    return registration_line(RunResults(correlations={"registration": result}))


def test_a_run_of_the_committed_spec_is_registered_at_its_commit(repo: Path):
    result = found(repo)
    head = git(repo, "rev-parse", "HEAD")
    assert (result.commit, result.equal, result.changed) == (head, True, [])
    assert result.file == "benchmarks/spec.yaml"
    assert line(result).startswith(f"Registered at {head[:12]} (")


def test_a_later_commit_that_keeps_the_primary_section_is_a_deviation_named_by_field(repo):
    registered = git(repo, "rev-parse", "HEAD")
    spec = repo / "benchmarks" / "spec.yaml"
    spec.write_text(SPEC.replace("encoders: [avg, hier, max]", "encoders: [avg, hier]")
                    .replace("sentences: 300", "sentences: 200"), encoding="utf-8")
    git(repo, "commit", "-qam", "fewer encoders after the registration")
    result = found(repo, ("metrics=[id, perm]",))
    assert result.commit == registered and not result.equal
    assert result.changed == ["corpus.train.sentences", "encoders", "metrics"]
    assert line(result) == (f"Changed after registration at {registered[:12]} "
                            f"({result.date[:10]}) in benchmarks/spec.yaml: "
                            "corpus.train.sentences, encoders, metrics. The result is not the "
                            "registered test's where those fields move it.")


def test_changing_the_primary_section_registers_again(repo: Path):
    spec = repo / "benchmarks" / "spec.yaml"
    spec.write_text(SPEC.replace("alpha: 0.05", "alpha: 0.025"), encoding="utf-8")
    git(repo, "commit", "-qam", "register again")
    assert found(repo).commit == git(repo, "rev-parse", "HEAD")
    spec.write_text(SPEC.replace("alpha: 0.05", "alpha: 0.01"), encoding="utf-8")  # uncommitted
    result = found(repo)
    assert result.changed == ["correlation.primary.alpha"] and not result.equal


def test_an_uncommitted_spec_is_not_registered(tmp_path: Path):
    (tmp_path / "spec.yaml").write_text(SPEC, encoding="utf-8")
    spec = load_spec(tmp_path / "spec.yaml", (), load_registry())
    result = registration(spec.source, spec.document)
    assert result.commit is None and result.why in ("the spec file is not in a git checkout",
                                                    "the spec file was never committed")
    assert line(result).startswith("Not registered: ")
    (tmp_path / "plain.yaml").write_text(BASE, encoding="utf-8")
    without = load_spec(tmp_path / "plain.yaml", (), load_registry())
    assert registration(without.source, without.document) is None  # nothing declared


def test_report_output_sections_do_not_count_as_changes():
    ours = {"name": "a", "report": {"formats": ["md"]}, "device": "cuda", "seed": 1,
            "defences": [{"name": "gaussian", "seed": 7}]}
    theirs = {"name": "a", "report": {"formats": ["md", "html"]}, "device": "cpu", "seed": 1,
              "defences": [{"name": "gaussian", "seed": 8}]}
    assert changed_fields(ours, theirs) == []
    assert changed_fields({**ours, "seed": 2}, theirs) == ["seed"]
    # the defences' secret seeds where they belong now, in the privacy analysis's section
    assert changed_fields({"privacy": {"defences": [{"name": "gaussian", "seed": 7}]}},
                          {"privacy": {"defences": [{"name": "gaussian", "seed": 8}]}}) == []
