"""The length-gap analysis and each part it declares (`LENGTH_GAP_PARTS`), as the harness uses
them with the package installed: its spec section validated with file:line errors, its check
and its preflight through `harness validate`, its typed results field written to results.json
and read back, its claim in the report's summary, and its command `harness length-gap`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import v2s_example_plugin as plugin
from click.testing import CliRunner, Result
from v2s_example_plugin.gap import length_gaps
from v2s_example_plugin.gap_results import LengthGaps, PairGap

from harness.cli import main
from harness.protocols import BuildContext, Options
from harness.results.model import RunResults, load_results
from harness.testing import check_analysis

SPEC = """\
name: gap-check
seed: 1
device: cpu
corpus:
  train: {generate: quickstart, sentences: 300}
  test: {generate: quickstart, sentences: 30, seed: 2}
vocab: {bpe_size: 150, dim: 8, epochs: 1}
encoders: [avg]
decoders: [{name: mos-lstm, layers: 1, hidden: 16, epochs: 1}]
metrics: [id]
"""
"""A spec whose `length_gap:` section, when a test adds one, starts on line 11."""

GAPS = LengthGaps(pairs={"avg": {"mos-lstm": PairGap(mean_gap=-1.5, shorter=50.0, n=4)},
                         "random-gaussian": {"mos-lstm": PairGap(mean_gap=0.25, shorter=25.0,
                                                                 n=4)}})
"""Gaps written by hand: avg's outputs 1.5 tokens shorter on average, random-gaussian's 0.25
longer."""


def harness(*args: str) -> Result:
    """`harness ARGS...` run in this process, stdout and stderr apart."""
    return CliRunner().invoke(main, list(args))


def validate(tmp_path: Path, section: str, *overrides: str) -> tuple[Result, Path]:
    """`harness validate` of `SPEC` with `section` appended, written in `tmp_path`."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC + section, encoding="utf-8")
    return harness("validate", str(spec), *(arg for o in overrides for arg in ("--set", o))), spec


def save_run(run_dir: Path, gaps: LengthGaps, section: dict[str, object]) -> Path:
    """A results.json in `run_dir` of a run that ran only the length-gap analysis."""
    run_dir.mkdir(parents=True, exist_ok=True)
    spec = {"name": "by-hand", "analyses": [{"name": plugin.LENGTH_GAP}], "length_gap": section}
    return RunResults(spec=spec, length_gaps=gaps).save(run_dir)


def test_length_gaps_by_hand() -> None:
    gap = length_gaps(["a b c", "a b", "a"], ["a b", "a b", "a b c d"])
    assert gap.mean_gap == pytest.approx((-1 + 0 + 3) / 3)
    assert gap.shorter == pytest.approx(100 / 3)
    assert gap.n == 3
    assert length_gaps([], []) == PairGap(mean_gap=0.0, shorter=0.0, n=0)


def test_the_section_is_validated_with_file_and_line(tmp_path: Path) -> None:
    done, spec = validate(tmp_path, "length_gap:\n  threshold: 0.5\n  digits: 9\n")
    assert done.exit_code == 2
    assert done.stderr.startswith(f"error: {spec}:13: length_gap.digits: ")
    assert "less than or equal to 6" in done.stderr
    done, spec = validate(tmp_path, "length_gap:\n  digit: 1\n")
    assert done.exit_code == 2 and f"{spec}:12: length_gap.digit" in done.stderr


def test_a_section_left_out_takes_its_defaults(tmp_path: Path) -> None:
    done, spec = validate(tmp_path, "")
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith(f"{spec}: ok")


def test_the_check_locates_a_decoder_the_spec_lacks(tmp_path: Path) -> None:
    done, spec = validate(tmp_path, "length_gap:\n  digits: 1\n  decoder: gru\n")
    assert done.exit_code == 2
    assert done.stderr == (f"error: {spec}:13: length_gap.decoder: 'gru' is not among the "
                           "spec's decoders (mos-lstm): name one of them, or remove `decoder` "
                           "to measure every decoder\n")
    assert validate(tmp_path, "length_gap: {decoder: mos-lstm}\n")[0].exit_code == 0
    # a spec that does not run the analysis is not checked against its section
    done, _ = validate(tmp_path, "analyses: [rankings]\nlength_gap: {decoder: gru}\n")
    assert done.exit_code == 0, done.output


def test_validate_lists_a_missing_baseline(tmp_path: Path) -> None:
    """`resolve` makes the path absolute against the spec's folder; preflight finds the run
    missing, or without length gaps, and `harness validate` lists the problem."""
    done, spec = validate(tmp_path, "length_gap:\n  baseline: earlier\n")
    results = tmp_path / "earlier" / "results.json"
    assert done.exit_code == 2
    assert (f"problem: {spec}:12: length_gap.baseline: {results}: not found; is "
            f"{tmp_path / 'earlier'} a run directory?; run the baseline's spec first, or remove "
            "`baseline`\n") in done.stderr
    assert "refuses it here until this problem is fixed" in done.stderr
    (tmp_path / "earlier").mkdir()
    RunResults(spec={"name": "earlier"}).save(tmp_path / "earlier")  # ran no length gaps
    done, _ = validate(tmp_path, "length_gap:\n  baseline: earlier\n")
    assert f"problem: {spec}:12: length_gap.baseline: {results}: no `length_gaps`" in done.stderr
    save_run(tmp_path / "earlier", GAPS, {})
    assert validate(tmp_path, "length_gap:\n  baseline: earlier\n")[0].exit_code == 0


def test_a_baseline_given_with_set_is_relative_to_the_current_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    done, _ = validate(tmp_path, "", "length_gap.baseline=old")
    assert done.exit_code == 2
    assert (f"problem: --set: length_gap.baseline: {tmp_path / 'here' / 'old' / 'results.json'}"
            ": not found") in done.stderr


def test_the_field_is_typed_in_results_json(tmp_path: Path) -> None:
    path = save_run(tmp_path, GAPS, {})
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["length_gaps"] == {
        "pairs": {"avg": {"mos-lstm": {"mean_gap": -1.5, "shorter": 50.0, "n": 4}},
                  "random-gaussian": {"mos-lstm": {"mean_gap": 0.25, "shorter": 25.0, "n": 4}}},
        "baseline": {}, "retrained": {}}
    assert "analyses" not in written  # a declared field, not one kept as JSON
    read = load_results(tmp_path).length_gaps
    assert isinstance(read, LengthGaps) and read == GAPS
    assert RunResults().length_gaps is None  # a run without it
    wrong = {"pairs": {"avg": {"mos-lstm": {"mean_gap": 0.0, "shorter": 150.0, "n": 1}}}}
    with pytest.raises(ValueError, match=r"length_gaps\.pairs\.avg\.mos-lstm\.shorter: .*"
                                         r"analysis 'example-length-gap'"):
        RunResults(length_gaps=wrong)


def test_claims_and_caveats_by_hand() -> None:
    analysis = plugin.build_length_gap(Options(), BuildContext())
    results = RunResults(spec={"name": "x", "length_gap": {"digits": 1}}, length_gaps=GAPS)
    assert analysis.claims(results) == [
        "The regenerated sentences of avg -> mos-lstm (-1.5) differ in length from their inputs "
        "by 1 or more whitespace tokens on average."]
    lower = RunResults(spec={"name": "x", "length_gap": {"threshold": 0.2}}, length_gaps=GAPS)
    assert analysis.claims(lower) == [
        "The regenerated sentences of avg -> mos-lstm (-1.50) and random-gaussian -> mos-lstm "
        "(+0.25) differ in length from their inputs by 0.2 or more whitespace tokens on "
        "average."]
    higher = RunResults(spec={"name": "x", "length_gap": {"threshold": 2}}, length_gaps=GAPS)
    assert analysis.claims(higher) == [
        "No pair's regenerated sentences differ in length from their inputs by 2 or more "
        "whitespace tokens on average."]
    assert analysis.caveats(results) == [
        "the length gaps are means over the first seed's outputs, without intervals: they "
        "describe the outputs and test nothing."]
    assert analysis.claims(RunResults()) == analysis.caveats(RunResults()) == []


def test_the_report_summary_shows_the_claim(tmp_path: Path) -> None:
    save_run(tmp_path, GAPS, {"digits": 1})
    done = harness("report", str(tmp_path), "--format", "md")
    assert done.exit_code == 0, done.output
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    summary = report[report.index("## What this run shows"):report.index("## Length gap")]
    assert ("The regenerated sentences of avg -> mos-lstm (-1.5) differ in length from their "
            "inputs by 1 or more whitespace tokens on average.") in summary
    assert "- the length gaps are means over the first seed's outputs" in summary
    assert "| avg | mos-lstm | -1.5 | 50.0 | 4 |" in report


def test_the_command_prints_the_gaps(tmp_path: Path) -> None:
    save_run(tmp_path / "run", GAPS, {})
    done = harness("length-gap", str(tmp_path / "run"))
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == [
        "encoder          decoder   mean gap  % shorter  n",
        "avg              mos-lstm  -1.50     50.00      4",
        "random-gaussian  mos-lstm  +0.25     25.00      4"]
    baseline = {"avg": {"mos-lstm": PairGap(mean_gap=-3.0, shorter=100.0, n=4)}}
    save_run(tmp_path / "run", GAPS.model_copy(update={"baseline": baseline}), {})
    done = harness("length-gap", str(tmp_path / "run"), "--digits", "1")
    assert done.stdout.splitlines() == [
        "encoder          decoder   mean gap  % shorter  n  baseline gap",
        "avg              mos-lstm  -1.5      50.0       4  -3.0",
        "random-gaussian  mos-lstm  +0.2      25.0       4  -"]
    done = harness("length-gap", str(tmp_path / "nothing"))
    assert done.exit_code == 2
    assert done.stderr == (f"error: {tmp_path / 'nothing' / 'results.json'}: not found; is "
                           f"{tmp_path / 'nothing'} a run directory?\n")


def test_length_gap_analysis_conforms(tmp_path: Path) -> None:
    """On a tiny real run: its typed field, written to results.json and read back as the
    model, and its report section from results.json alone."""
    analysis = plugin.build_length_gap(Options(), BuildContext())
    fields = check_analysis(analysis, tmp_path, name=plugin.LENGTH_GAP)
    gaps = fields["length_gaps"]
    assert isinstance(gaps, LengthGaps) and set(gaps.pairs) == {"avg", "random-gaussian"}
    assert all(gap.n == 30 for by in gaps.pairs.values() for gap in by.values())
    assert load_results(tmp_path).length_gaps == gaps  # check_analysis saved it there
    (section,) = analysis.sections(RunResults(**fields), {})
    assert section.title == "Length gap (example plugin)"
    assert [row[:2] for row in section.tables[0].rows] == [["avg", "mos-lstm"],
                                                           ["random-gaussian", "mos-lstm"]]


def test_a_retrained_decoder_trains_in_the_encoders_job_through_the_toolkit(
        tmp_path: Path) -> None:
    """With `length_gap.retrain`, each encoder's job trains the decoder again on the first 100
    sentences (harness.plugin's `encode`, `train_decoder`, `generate`, `score`) and returns its
    gap; `run` reads the records. Checked against the artifacts themselves: the retrained
    decoder's training log saw 100 sentences, its samples' gap and Id are those recorded, and
    the pair's own decoder (all 300 sentences) is another artifact."""
    from harness.registry.loader import load_registry
    from harness.runner import run_spec
    from harness.spec import load_spec
    from harness.util.cache import Cache, read_meta

    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(SPEC + "analyses: [example-length-gap]\n"
                                "length_gap: {retrain: 100}\n", encoding="utf-8")
    cache = Cache(tmp_path / "cache")
    results = run_spec(load_spec(spec_file, registry=load_registry()), tmp_path / "run",
                       cache=cache)
    gaps = results.length_gaps
    assert gaps is not None and list(gaps.retrained) == ["avg"]
    again = gaps.retrained["avg"]["mos-lstm"]
    assert (again.sentences, again.metric, again.n) == (100, "id", 30)
    trained = [meta for path in (cache.root / "train").iterdir()
               if (meta := read_meta(path))["parts"].get("sentences") == 100]
    assert len(trained) == 1 and trained[0]["parts"]["encoded"]
    (samples_dir,) = [path for path in (cache.root / "generate").iterdir()
                      if read_meta(path)["parts"]["trained"] == trained[0]["key"]]
    lines = [json.loads(line) for line in (samples_dir / "samples.jsonl").read_text(
        encoding="utf-8").splitlines()]
    assert again == again.model_copy(update=length_gaps(
        [r["reference"] for r in lines], [r["hypothesis"] for r in lines]).model_dump())
    exact = sum(r["reference"] == r["hypothesis"] for r in lines)
    assert again.value == pytest.approx(100 * exact / len(lines))
    assert len(list((cache.root / "train").iterdir())) >= 2  # the pair's own decoder besides
