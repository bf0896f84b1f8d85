"""The spec's `probes:` section is validated like every other: one line naming file:line and
field, missing analogy files named, malformed ones listed as problems before any work."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.registry.loader import load_registry
from harness.spec import load_spec, preflight
from tests.test_cli_errors import GOOD, assert_one_error_line

PROBES = """\
probes:
  analogies: [{generate: quickstart, items: 10}, sets/mine.tsv]
  interpolation: {pairs: 2, steps: 3}
  noise: {scales: [0.5, 1.0], sentences: 5}
"""

# (id, old text of PROBES, new text, field, text in the message); the line is that of `new`
BAD = [
    ("unknown-key", "  noise:", "  nois:", "probes.nois",
     "unknown key; did you mean 'noise'? expected one of: analogies, interpolation, noise, beam"),
    ("both-kinds", "{generate: quickstart, items: 10}",
     "{generate: quickstart, path: x.tsv}", "probes.analogies.0", "give exactly one of"),
    ("unknown-generator", "{generate: quickstart, items: 10}", "{generate: news}",
     "probes.analogies.0", "unknown analogy generator 'news'; known: quickstart"),
    ("items-of-a-file", "sets/mine.tsv", "{path: sets/mine.tsv, items: 3}",
     "probes.analogies.1", "`items`/`seed` apply to `generate`"),
    ("bad-form", "sets/mine.tsv", "{path: sets/mine.tsv, form: reverse}",
     "probes.analogies.1.form", "'paper' or 'classic'"),
    ("missing-file", "sets/mine.tsv", "sets/missing.tsv", "probes.analogies.1.path",
     "file not found: "),
    ("one-step", "steps: 3", "steps: 1", "probes.interpolation.steps",
     "greater than or equal to 2"),
    ("no-pairs", "pairs: 2", "pairs: 0", "probes.interpolation.pairs",
     "expected between 1 and 1000 pairs, got 0"),
    ("half-a-pair", "pairs: 2", "pairs: [[he sees it .]]", "probes.interpolation.pairs",
     "pair 0: expected [sentence x, sentence y], two non-empty strings"),
    ("not-pairs", "pairs: 2", "pairs: yes", "probes.interpolation.pairs",
     "expected a number of test-sentence pairs or a list"),
    ("zero-scale", "scales: [0.5, 1.0]", "scales: [0, 1.0]", "probes.noise.scales",
     "above 0 and at most 100; got 0"),
    ("no-scales", "scales: [0.5, 1.0]", "scales: []", "probes.noise.scales",
     "expected 1 to 10 scales, got 0"),
    ("repeated-scale", "scales: [0.5, 1.0]", "scales: [0.5, 0.5]", "probes.noise.scales",
     "each scale once"),
    ("no-sentences", "sentences: 5", "sentences: 0", "probes.noise.sentences",
     "greater than 0"),
    ("beam", "  noise:", "  beam: 0\n  noise:", "probes.beam", "greater than 0"),
]


def write(folder: Path, probes: str = PROBES, spec: str = GOOD) -> Path:
    (folder / "sets").mkdir(exist_ok=True)
    (folder / "sets" / "mine.tsv").write_text("he sees it .\the saw it .\tshe sees me .\t"
                                              "she saw me .\ttense\n", encoding="utf-8")
    path = folder / "spec.yaml"
    path.write_text(spec + probes, encoding="utf-8")
    return path


def line_of(path: Path, marker: str) -> int:
    hits = [n for n, row in enumerate(path.read_text().splitlines(), 1) if marker in row]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def test_a_good_probes_section_validates_and_resolves_its_files(tmp_path: Path) -> None:
    path = write(tmp_path)
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    spec = load_spec(path, registry=load_registry())
    generated, mine = spec.probes.analogies
    assert (generated.generate, generated.items, generated.form) == ("quickstart", 10, "paper")
    assert mine.path == tmp_path / "sets" / "mine.tsv"  # a bare string is a path, made absolute
    assert spec.probes.interpolation.pairs == 2 and spec.probes.noise.scales == [0.5, 1.0]
    assert spec.probes.active and spec.probes.beam is None


def test_no_probes_section_asks_for_nothing(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, probes=""), registry=load_registry())
    assert not spec.probes.active


@pytest.mark.parametrize(("old", "new", "field", "needle"), [case[1:] for case in BAD],
                         ids=[case[0] for case in BAD])
def test_a_bad_probes_section_is_one_line_naming_file_line_and_field(
        tmp_path: Path, old: str, new: str, field: str, needle: str) -> None:
    assert PROBES.count(old) == 1
    path = write(tmp_path, PROBES.replace(old, new))
    line = line_of(path, new.splitlines()[0])
    result = CliRunner().invoke(main, ["validate", str(path)])
    message = assert_one_error_line(result, f"{path}:{line}: {field}: ", needle)
    assert message.startswith(f"error: {path}:{line}: {field}: ")


def test_probes_need_decoders(tmp_path: Path) -> None:
    spec = GOOD.replace("decoders:\n  - {name: mos-lstm, hidden: 8, epochs: 1}\n", "")
    spec = spec.replace("metrics: [id]\n", "")
    path = write(tmp_path, spec=spec)
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert_one_error_line(result, f"{path}:{line_of(path, 'probes:')}: probes: ",
                          "probes decode with trained decoders; the spec has none")


def test_a_malformed_analogy_file_is_a_problem_found_before_any_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    path = write(tmp_path)
    bad = tmp_path / "sets" / "mine.tsv"
    bad.write_text("# header\nhe sees it .\the saw it .\n", encoding="utf-8")
    spec = load_spec(path, registry=load_registry())
    (problem,) = preflight(spec)
    assert problem.field == "probes.analogies.1.path" and problem.line == line_of(path, "mine")
    assert f"{bad}:2: expected at least 3 tab-separated columns" in str(problem)
    validated = CliRunner().invoke(main, ["validate", str(path)])
    assert validated.exit_code == 2
    assert f"problem: {path}:{problem.line}: probes.analogies.1.path: {bad}:2: " in (
        validated.stderr)
    run = CliRunner().invoke(main, ["run", str(path), "--out", str(tmp_path / "out")])
    assert_one_error_line(run, f"{bad}:2: expected at least 3")
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()


def test_a_probes_value_given_with_set_is_named_as_such(tmp_path: Path) -> None:
    path = write(tmp_path)
    result = CliRunner().invoke(main, ["validate", str(path), "--set",
                                       "probes.noise.sentences=0"])
    assert_one_error_line(result, "--set: probes.noise.sentences: ", "greater than 0")
    moved = CliRunner().invoke(main, ["validate", str(path), "--set",
                                      "probes.analogies=[nowhere.tsv]"])
    assert_one_error_line(moved, "--set: probes.analogies.0.path: file not found: ",
                          str(Path.cwd() / "nowhere.tsv"))
