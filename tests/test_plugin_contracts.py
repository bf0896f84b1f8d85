"""The contracts a plugin author meets, as found by a new user writing an encoder, an analysis
and a defence from docs/plugins.md: what the privacy section names is checked when a spec is
read, every plugin a run used is in its provenance, `check_analysis` sees a report section that
is never drawn, an analysis cannot clobber results fields, a defence or analysis appears once
per spec, `harness report` says when an analysis is not installed, and a defence's non-finite
output names the defence, its level and the encoder."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np
import pytest
from click.testing import CliRunner
from pydantic import Field

from harness.errors import PluginError, SpecError
from harness.protocols import BuildContext, Options
from harness.registry.components import Registry, make_info
from harness.registry.loader import load_registry
from harness.spec import load_spec
from tests.test_spec import line_of, write

REPO = Path(__file__).resolve().parents[1]

SPEC = """\
name: contracts
seed: 1
device: cpu
corpus:
  train: {generate: quickstart, sentences: 50}
  test: {generate: quickstart, sentences: 10, seed: 2}
vocab: {bpe_size: 100, dim: 8}
encoders: [avg, {name: random-gaussian, dim: 8}]  # the canaries' floor
decoders: [{name: mos-lstm, hidden: 8, epochs: 1}]
metrics: [id, token-f1, token-f1:content]
analyses: [downstream, privacy]
privacy:
  defences:
    - {name: gaussian, levels: [0.5]}
"""


def validate(path: Path) -> tuple[int, str]:
    """`harness validate PATH`: its exit code and its stderr."""
    from harness.cli import main

    result = CliRunner().invoke(main, ["validate", str(path)])
    return result.exit_code, result.stderr


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


# --------------------------------------------------------- 1. what `privacy:` names is checked


def test_validate_refuses_an_attacker_that_is_not_a_decoder_of_the_spec(tmp_path: Path) -> None:
    text = SPEC + "  attacker: simple-lstm\n"
    path = write(tmp_path, text)
    code, stderr = validate(path)
    assert code == 2
    assert stderr == (
        f"error: {path}:{line_of(text, 'attacker:')}: privacy.attacker: 'simple-lstm' is not "
        "among the spec's decoders (mos-lstm): name one of them, or remove `attacker` to "
        "attack with the first\n")


def test_validate_refuses_a_leakage_diagnostic_that_is_not_a_metric_of_the_spec(
        tmp_path: Path) -> None:
    text = SPEC + "  leakage: bleu\n"
    path = write(tmp_path, text)
    code, stderr = validate(path)
    assert code == 2
    assert stderr == (
        f"error: {path}:{line_of(text, 'leakage:')}: privacy.leakage: 'bleu' is not among the "
        "spec's metrics (id, token-f1, token-f1:content): add bleu to `metrics:`, or set "
        "`privacy.leakage` to one of them\n")
    # the default, token-f1, unwritten: the error points at the defences that need it
    text = SPEC.replace("metrics: [id, token-f1, token-f1:content]", "metrics: [id]")
    path = write(tmp_path, text)
    code, stderr = validate(path)
    assert code == 2
    assert stderr == (
        f"error: {path}:{line_of(text, 'defences:')}: privacy.leakage: 'token-f1' (the "
        "default) is not among the spec's metrics (id): add token-f1 to `metrics:`, or set "
        "`privacy.leakage` to one of them\n")


def test_validate_refuses_a_text_measure_the_spec_does_not_score(tmp_path: Path) -> None:
    text = SPEC + "  text_on: bleu\n"
    path = write(tmp_path, text)
    assert validate(path) == (2, (
        f"error: {path}:{line_of(text, 'text_on:')}: privacy.text_on: 'bleu' is not among the "
        "spec's metrics (id, token-f1, token-f1:content): add bleu to `metrics:`, or set "
        "`privacy.text_on` to one of them\n"))
    # unset: no text verdict without bleu among the metrics, and nothing refused
    assert validate(write(tmp_path, SPEC)) == (0, "")


def test_validate_refuses_two_attacks_with_one_label(tmp_path: Path) -> None:
    """Two `align` entries with the same `pairs` and other surrogates are both `align-10`:
    refused when the spec is read, at the second entry's line, before anything is built."""
    text = SPEC + ("  attacks:\n    - {name: align, pairs: 10}\n    - decoder\n"
                   "    - {name: align, pairs: 10, surrogate: random-gaussian}\n")
    path = write(tmp_path, text)
    code, stderr = validate(path)
    assert code == 2
    assert stderr == (
        f"error: {path}:{len(text.splitlines())}: privacy.attacks.2: the attacks 0 and 2 are "
        "both labelled 'align-10' (results.json keeps each point's attacks by label): give "
        "them different options, or drop one\n")
    fixed = text.replace(", surrogate: random-gaussian}", "}").replace("pairs: 10}\n", "pairs: 20}\n", 1)
    assert validate(write(tmp_path, fixed)) == (0, "")


def test_defences_without_decoders_or_without_the_privacy_analysis(tmp_path: Path,
                                                                   registry: Registry) -> None:
    text = SPEC.replace("decoders: [{name: mos-lstm, hidden: 8, epochs: 1}]\n", "").replace(
        "metrics: [id, token-f1]\n", "")
    with pytest.raises(SpecError) as error:
        load_spec(write(tmp_path, text), registry=registry)
    assert str(error.value) == (
        f"{tmp_path / 'spec.yaml'}:{line_of(text, 'defences:')}: privacy.defences: the privacy "
        "analysis attacks the defended vectors with a decoder and the spec has none: add "
        "`decoders:` (and `metrics:`), or remove `privacy.defences`")
    # nothing to check when the privacy analysis does not run
    text = SPEC.replace("analyses: [downstream, privacy]", "analyses: [downstream]")
    load_spec(write(tmp_path, text + "  attacker: nope\n  leakage: nope\n"),
              registry=registry)


# --------------------------------------------------- 2. every plugin distribution a run used


class LevelOptions(Options):
    LEVEL: ClassVar[str] = "scale"

    scale: float = Field(1.0, gt=0, description="a level")


def test_provenance_lists_every_plugin_distribution_the_run_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.results.provenance as prov

    monkeypatch.setattr(prov, "git_commit", lambda: "abc")
    registry = load_registry()
    # installed distributions standing in for three plugins' distributions
    registry.add(make_info("defence", "dist-defence", lambda options, context: None,
                           options=LevelOptions, plugin="p1", distribution="click"))
    registry.add(make_info("analysis", "dist-analysis", lambda options, context: None,
                           plugin="p2", distribution="PyYAML"))
    registry.add(make_info("executor", "dist-executor", lambda options, context: None,
                           plugin="p3", distribution="iniconfig"))
    text = (SPEC.replace("name: gaussian", "name: dist-defence")
            .replace("analyses: [downstream, privacy]",
                     "analyses: [downstream, privacy, dist-analysis]")
            + "executor: dist-executor\n")
    spec = load_spec(write(tmp_path, text), registry=registry)
    packages = prov.provenance(spec, "cpu", {}).packages  # type: ignore[arg-type]
    import importlib.metadata as md

    for distribution in ("click", "PyYAML", "iniconfig", "v2s-harness"):
        assert packages[distribution] == md.version(distribution)


# ------------------------------------------------------------- 3. check_analysis and the guide


def guide_analysis() -> tuple[Any, str]:
    """The analysis example of docs/plugins.md, run as written: (a new instance, the name it
    registers under)."""
    guide = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    start = guide.index("An analysis written from scratch")
    block = re.search(r"```python\n(.*?)```", guide[start:], re.S)
    assert block is not None
    namespace: dict[str, Any] = {}
    exec(compile(block.group(1), "docs/plugins.md", "exec"), namespace)  # noqa: S102
    names = []
    namespace["register_analyses"](lambda name, factory, **kw: names.append((name, factory,
                                                                            kw["options"])))
    ((name, factory, options),) = names
    return factory(options(), BuildContext()), name


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One workdir for every check_analysis call: the tiny run is built once."""
    return tmp_path_factory.mktemp("analysis-checks")


@pytest.mark.usefixtures("one_thread")
def test_check_analysis_refuses_own_fields_filed_under_no_registered_name(workdir: Path) -> None:
    from harness.testing import check_analysis

    analysis, _ = guide_analysis()
    assert not hasattr(analysis, "name")
    with pytest.raises(AssertionError) as error:
        check_analysis(analysis, workdir)
    assert str(error.value).startswith(
        "ExactAnalysis.run filled fields of its own (exact), which results.json files under "
        "the name the analysis registers under, and check_analysis does not know it")
    assert "pass it: check_analysis(analysis, workdir, name='your-analysis')" in str(error.value)


@pytest.mark.usefixtures("one_thread")
def test_the_guides_analysis_passes_with_its_registered_name_and_draws_its_section(
        workdir: Path) -> None:
    from harness.results.model import RunResults
    from harness.testing import check_analysis

    analysis, name = guide_analysis()
    assert name == "my-exact"
    fields = check_analysis(analysis, workdir, name=name)
    assert set(fields["analyses"][name]["exact"]) == {"avg -> mos-lstm",
                                                      "random-gaussian -> mos-lstm"}
    (section,) = analysis.sections(RunResults(**fields), {})
    assert section.title == "Exact regenerations"
    # the guide's own test calls the checker with the name
    guide = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    assert 'check_analysis(v2s_my_plugin.MyAnalysis(), tmp_path, name="my-exact")' in guide


class MisnamedAnalysis:
    """Files its fields under `name` but reads them back under another name."""

    name = "my-gap"

    def run(self, run: Any) -> dict[str, Any]:
        return {"total": len(run.execution.outcomes)}

    def sections(self, results: Any, figures: Any) -> list[Any]:
        from harness.report.elements import Section

        own = (results.analyses or {}).get("my-gaps")
        return [Section("Gaps", [str(own)])] if own else []

    def figures(self, results: Any) -> dict[str, bytes]:
        return {}


@pytest.mark.usefixtures("one_thread")
def test_check_analysis_refuses_fields_the_report_never_shows(workdir: Path) -> None:
    from harness.testing import check_analysis

    with pytest.raises(AssertionError) as error:
        check_analysis(MisnamedAnalysis(), workdir)
    assert str(error.value).startswith(
        "MisnamedAnalysis filled analyses.my-gap (total) but sections() drew nothing from "
        "it, so the report never shows it")


# ---------------------------------------------------- 4. an analysis's keys and core fields


def test_an_analysis_key_the_runner_fills_is_refused_naming_plugin_and_key() -> None:
    from harness.analyses.run import results_fields

    with pytest.raises(PluginError) as error:
        results_fields("my-count", {"runs": []}, plugin="my-plugin")
    assert str(error.value) == (
        "plugin 'my-plugin': analysis 'my-count' returned 'runs', a results field the runner "
        "fills itself: rename the key (any other name is kept under results.json "
        "`analyses: {my-count: ...}`)")


def test_an_analysis_key_of_the_wrong_shape_is_refused_in_one_line() -> None:
    from harness.analyses.run import results_fields

    with pytest.raises(PluginError) as error:
        results_fields("my-count", {"downstream": "many"}, plugin="my-plugin")
    assert str(error.value) == (
        "plugin 'my-plugin': analysis 'my-count' returned 'downstream', a results field "
        "(harness.results.model.RunResults.downstream) this value does not fit (Input should be a "
        "valid dictionary): return that field's type, or rename the key to keep it under "
        "results.json `analyses: {my-count: ...}`")


def test_an_analysis_may_not_replace_results_another_analysis_filled(tmp_path: Path) -> None:
    from harness.analyses.run import AnalysisRun, run_analyses

    class Fills:
        def __init__(self, fields: dict[str, Any]) -> None:
            self.fields = fields

        def run(self, run: Any) -> dict[str, Any]:
            return self.fields

        def sections(self, results: Any, figures: Any) -> list[Any]:
            return []

        def figures(self, results: Any) -> dict[str, bytes]:
            return {}

    def entry(name: str, plugin: str, fields: dict[str, Any]) -> SimpleNamespace:
        return SimpleNamespace(name=name, plugin=plugin, settings=Options(),
                               analysis=Fills(fields))

    entries = [entry("downstream", "harness-analyses", {"downstream": {"avg": {"MR": 70.0}}}),
               entry("my-downstream", "my-plugin", {"downstream": {"avg": {"MR": 99.0}}})]
    run = AnalysisRun(ctx=SimpleNamespace(build=lambda e: e.analysis),  # type: ignore[arg-type]
                      corpus=None, vocab=None, execution=None, out=tmp_path)  # type: ignore[arg-type]
    with pytest.raises(PluginError) as error:
        run_analyses(run, entries)  # type: ignore[arg-type]
    assert str(error.value) == (
        "plugin 'my-plugin': analysis 'my-downstream' returned 'downstream', which analysis "
        "'downstream' (plugin 'harness-analyses') filled already: an analysis may not replace "
        "another's results; rename the key to keep it under results.json "
        "`analyses: {my-downstream: ...}`")


# ----------------------------------------------------- 5. one entry per defence and analysis


def test_a_defence_may_appear_once(tmp_path: Path, registry: Registry) -> None:
    text = SPEC.replace("    - {name: gaussian, levels: [0.5]}\n",
                        "    - {name: gaussian, levels: [0.5]}\n"
                        "    - {name: gaussian, levels: [2]}\n")
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as error:
        load_spec(path, registry=registry)
    assert str(error.value) == (
        f"{path}:{line_of(text, 'levels: [2]')}: privacy.defences.1.name: defence 'gaussian' "
        "appears twice (also entry 0); the privacy analysis keys its points by defence name, so the "
        "two would be merged: keep one entry and list every level in its `levels:`")


def test_an_analysis_may_appear_once(tmp_path: Path, registry: Registry) -> None:
    text = SPEC.replace("analyses: [downstream, privacy]",
                        "analyses:\n  - downstream\n  - privacy\n  - downstream\n")
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as error:
        load_spec(path, registry=registry)
    assert str(error.value) == (
        f"{path}:{line_of(text, '  - privacy') + 1}: analyses.2.name: analysis 'downstream' appears "
        "twice (also entry 0); an analysis runs once per run and files its results under its "
        "name: keep one entry, with its options")


# -------------------------------------------- 6. `harness report` and an analysis not installed


def test_the_runner_records_which_distribution_each_analysis_comes_from(
        tmp_path: Path, registry: Registry) -> None:
    from harness.runner import spec_record

    spec = load_spec(write(tmp_path, SPEC), registry=registry)
    assert spec_record(spec)["analyses"] == [
        {"name": "downstream", "options": {}, "plugin": "harness-analyses",
         "distribution": "v2s-harness"},
        {"name": "privacy", "options": {}, "plugin": "harness-analyses",
         "distribution": "v2s-harness"}]


def test_report_says_when_an_analysis_is_not_installed(caplog: pytest.LogCaptureFixture) -> None:
    from harness.report.write import render_markdown
    from harness.results.model import RunResults

    results = RunResults(spec={"name": "t", "analyses": [
        {"name": "downstream", "options": {}},
        {"name": "my-exact", "options": {"top": 3}, "plugin": "my-plugin",
         "distribution": "v2s-my-plugin"}]}, analyses={"my-exact": {"exact": {"a": 1.0}}})
    with caplog.at_level(logging.WARNING, logger="harness"):
        text = render_markdown(results, {})
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "warning: analysis 'my-exact' (plugin 'my-plugin') is not installed here, so the report "
        "leaves out its section: pip install v2s-my-plugin, then rerun `harness report`"]
    assert "## Analysis my-exact: not shown" in text
    assert ("The run's analysis 'my-exact' (plugin 'my-plugin') is not installed where this "
            "report was made; its results are in results.json. Install v2s-my-plugin "
            "(pip install v2s-my-plugin) and rerun `harness report` to show them.") in text


def test_report_of_older_results_that_do_not_name_the_distribution(
        caplog: pytest.LogCaptureFixture) -> None:
    from harness.report.sections import analyses_of
    from harness.results.model import RunResults

    results = RunResults(spec={"name": "t", "analyses": [{"name": "my-exact"}]})
    with caplog.at_level(logging.WARNING, logger="harness"):
        (missing,) = analyses_of(results)
    assert [r.getMessage() for r in caplog.records] == [
        "warning: analysis 'my-exact' is not installed here, so the report leaves out its "
        "section: install the package that registers it (results.json does not name it), then "
        "rerun `harness report`"]
    (section,) = missing.sections(results, {})
    assert section.title == "Analysis my-exact: not shown"


# ------------------------------------------------------- 7. a defence's non-finite output


class NanDefence:
    """Turns the second row of every block into NaN."""

    def fit(self, vectors: np.ndarray) -> None:
        pass

    def transform(self, vectors: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        out = np.array(vectors, dtype=np.float32)
        out[1:2] = np.nan
        return out

    def output_dim(self, dim: int) -> int:
        return dim

    def describe(self) -> str:
        return "NaN"


def test_a_defence_returning_nan_names_the_defence_its_level_and_the_encoder(
        tmp_path: Path) -> None:
    from harness.analyses.privacy.defend import DefendedEncoder, defend_encoded
    from harness.spec import DefenceEntry
    from harness.stages.base import RunContext
    from harness.stages.encode import Encoded
    from harness.util.cache import Cache

    info = make_info("defence", "nan-defence", lambda options, context: NanDefence(),
                     options=LevelOptions, plugin="nan-plugin")
    entry = DefenceEntry(name="nan-defence").resolved(info, LevelOptions(scale=2.0))
    vectors = tmp_path / "vectors"
    vectors.mkdir()
    for split in ("train", "test"):
        np.save(vectors / f"{split}.npy", np.ones((4, 3), dtype=np.float32))
    encoded = Encoded(encoder="avg", keys={"train": "a", "test": "b"}, dim=3,
                      directories={"train": vectors, "test": vectors}, plugin="harness-encoders")
    ctx = RunContext(spec=SimpleNamespace(seed=1), cache=Cache(tmp_path / "cache"))  # type: ignore[arg-type]
    with pytest.raises(PluginError) as error:
        defend_encoded(ctx, encoded, entry)
    assert str(error.value) == (
        "plugin 'nan-plugin': defence 'nan-defence' at scale 2 on the vectors of encoder 'avg' "
        "(plugin 'harness-encoders'): transform returned a non-finite value (row 1 of the "
        "block)")
    # downstream tasks encode through the encoder and the defence: the same message
    inner = SimpleNamespace(dim=3, encode=lambda s, batch_size: np.ones((len(s), 3)))
    defended = DefendedEncoder(inner, NanDefence(), entry, 1, encoder="avg",
                               encoder_plugin="harness-encoders", noisy=False)
    with pytest.raises(PluginError) as error:
        defended.encode(["a", "b"])
    assert "defence 'nan-defence' at scale 2 on the vectors of encoder 'avg'" in str(error.value)
