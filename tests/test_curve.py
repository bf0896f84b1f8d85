"""The learning curve (`curve.train_sizes`): decoders also trained on prefixes of the training
split, scored on the same test set, reported as a figure and a table; bad sizes refused before
any training."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from harness.errors import HarnessError
from harness.executors.plan import decoders_to_train
from harness.registry.loader import load_registry
from harness.runner import run_spec
from harness.spec import load_spec
from harness.util.cache import Cache

SPEC = """
name: curve
seed: 3
device: cpu
corpus:
  train: {{generate: quickstart, sentences: 600}}
  test: {{generate: quickstart, sentences: 40, seed: 9}}
vocab: {{bpe_size: 200, dim: 16, epochs: 2}}
encoders: [avg, {{name: random-gaussian, dim: 16}}]
decoders: [{{name: mos-lstm, hidden: 32, epochs: 3, batch_size: 32, lr: 0.01}}]
generation: {{beam: 1, max_len: 20}}
metrics: [id, bleu, token-f1]  # token-f1: above 0 even after 1 epoch, so the figure has a panel
curve: {{train_sizes: {sizes}}}
report: {{formats: [md, html]}}
"""


def spec_at(directory: Path, sizes: str):
    path = directory / "curve.yaml"
    path.write_text(SPEC.format(sizes=sizes))
    return load_spec(path, registry=load_registry())


@pytest.fixture(scope="module")
def curve_run(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("curve")
    results = run_spec(spec_at(root, "[150, 300]"), root / "run", cache=Cache(root / "cache"))
    return root, results


def test_each_pair_has_a_point_per_size_the_full_split_last(curve_run) -> None:
    _, results = curve_run
    assert [r.encoder for r in results.runs] == ["avg", "random-gaussian"]
    for run in results.runs:
        points = run.by_size
        assert [p.sentences for p in points] == [150, 300, 600]
        assert points[-1].metrics == run.metrics and points[-1].train == run.train
        # each prefix trained its own decoder: three epochs of 150 or 300 sentences, fewer steps
        steps = [p.train.steps for p in points]
        assert steps[0] < steps[1] < steps[2]
        assert all({"id", "bleu", "token-f1"} == set(p.metrics) for p in points)
        assert all(p.metrics["bleu"].ci95[0] <= p.metrics["bleu"].value
                   <= p.metrics["bleu"].ci95[1] for p in points)


def test_the_report_draws_and_tabulates_the_curve(curve_run) -> None:
    root, _ = curve_run
    report = (root / "run" / "report.md").read_text()
    assert "## Training-set size" in report
    assert "| encoder | diagnostic | 150 | 300 | 600 |" in report
    assert (root / "run" / "figures" / "training-size.png").stat().st_size > 1000
    assert "Controls (random-gaussian) are drawn grey and dashed." in report
    # no diagnostic is above 0 at all three sizes here: no fit (never through two points)
    assert "Growth with training sentences" not in report


def test_a_diagnostic_above_zero_at_three_sizes_gets_its_fitted_exponent() -> None:
    from harness.report.sizes import fit_rows
    from harness.results.model import PairResult
    from harness.stats.curves import fit_power_law

    def point(size: int, value: float) -> dict:
        return {"sentences": size, "metrics": {"bleu": {"value": value, "ci95": [0, 100]}}}

    run = PairResult.model_validate({
        "encoder": "avg", "decoder": "mos-lstm", "metrics": {"bleu": {"value": 9.0}},
        "by_size": [point(1000, 2.0), point(2000, 3.5), point(4000, 9.0)]})
    fit = fit_power_law([1000, 2000, 4000], [2.0, 3.5, 9.0])
    low, high = fit.slope_ci95
    assert fit_rows([run]) == [["avg", "bleu", "3", f"{fit.slope:.2f}",
                                f"[{low:.2f}, {high:.2f}]"]]


def test_results_without_a_curve_have_no_points(tmp_path: Path) -> None:
    from harness.results.model import PairResult

    assert "by_size" not in PairResult(encoder="a", decoder="b").model_dump(mode="json")


@pytest.mark.parametrize("sizes", ["[300, 150]", "[0]", "[150, 150]"])
def test_sizes_must_increase_from_one(tmp_path: Path, sizes: str) -> None:
    with pytest.raises((ValidationError, HarnessError), match="increasing numbers of training"):
        spec_at(tmp_path, sizes)


def test_a_size_not_below_the_training_split_is_refused_before_training(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "cache")
    # refused as the spec is read: the generated split states its 600 sentences
    with pytest.raises(HarnessError, match=r"curve.train_sizes.1: 600 is not below the 600 "):
        run_spec(spec_at(tmp_path, "[150, 600]"), tmp_path / "run", cache=cache)
    assert not list((tmp_path / "cache").glob("train/*"))


def test_validate_counts_the_curve_decoders(tmp_path: Path) -> None:
    """2 encoders x (1 seed + 2 curve points) = 6 decoders, as `harness validate` says."""
    from click.testing import CliRunner

    from harness.cli import main

    spec = spec_at(tmp_path, "[150, 300]")
    assert decoders_to_train(spec) == 6
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "curve.yaml")])
    assert result.exit_code == 0, result.output
    assert "6 decoders to train" in result.output


def test_a_diagnostic_at_zero_for_every_size_and_encoder_is_left_out_of_the_figure() -> None:
    from harness.report.sizes import SIZES_FILE, size_panels, sizes_section
    from harness.results.model import RunResults

    def point(size: int, bleu: float) -> dict:
        return {"sentences": size, "metrics": {
            "id": {"value": 0.0, "ci95": [0.0, 1.2], "support": 300},
            "bleu": {"value": bleu, "ci95": [bleu - 0.1, bleu + 0.1], "support": 300}}}

    runs = [{"encoder": e, "decoder": "mos-lstm", "metrics": point(600, b)["metrics"],
             "by_size": [point(300, b / 2), point(600, b)]} for e, b in (("a", 1.0), ("b", 2.0))]
    results = RunResults.model_validate({"runs": runs})
    assert list(size_panels(results)) == ["bleu"]
    assert list(size_panels(results, silent=True)) == ["id"]
    part = sizes_section(results, {SIZES_FILE: b""})
    assert part is not None and ("Left out of the figure, being zero or undefined at every size "
                                 "for every encoder: id (the table has them).") in part.text


def test_a_curve_for_some_encoders_trains_only_theirs(tmp_path: Path) -> None:
    """`curve.encoders`: 2 encoders x 1 seed + 2 points for avg only = 4 decoders; an encoder
    not in the spec is refused at its line."""
    spec = SPEC.format(sizes="[150, 300]").replace(
        "curve: {train_sizes: [150, 300]}", "curve: {train_sizes: [150, 300], encoders: [avg]}")
    (tmp_path / "curve.yaml").write_text(spec)
    loaded = load_spec(tmp_path / "curve.yaml", registry=load_registry())
    assert decoders_to_train(loaded) == 4
    results = run_spec(loaded, tmp_path / "run", cache=Cache(tmp_path / "cache"))
    by_size = {r.encoder: r.by_size for r in results.runs}
    assert [p.sentences for p in by_size["avg"]] == [150, 300, 600]
    assert by_size["random-gaussian"] is None
    (tmp_path / "bad.yaml").write_text(spec.replace("encoders: [avg]}", "encoders: [gem]}"))
    with pytest.raises(HarnessError, match=r"bad.yaml:\d+.*gem not among the spec's encoders"):
        load_spec(tmp_path / "bad.yaml", registry=load_registry())


def test_info_counts_one_unconditional_model_per_seed_and_point(tmp_path: Path) -> None:
    """With `info`, each decoder's unconditional twin is trained per seed and curve size too:
    4 pair decoders + 1 + 2 unconditional models = 7."""
    spec = SPEC.format(sizes="[150, 300]").replace(
        "curve: {train_sizes: [150, 300]}", "curve: {train_sizes: [150, 300], encoders: [avg]}"
    ).replace("metrics: [id, bleu, token-f1]", "metrics: [id, info]")
    (tmp_path / "curve.yaml").write_text(spec)
    assert decoders_to_train(load_spec(tmp_path / "curve.yaml", registry=load_registry())) == 7


def test_with_seeds_each_curve_point_trains_every_seed_and_averages_them(tmp_path: Path) -> None:
    """decoders: seeds: 3 with two curve sizes: 2 encoders x 3 seeds x (1 + 2 sizes) = 18
    decoders; each point's scores are the means over its three seeds, as the full size's."""
    path = tmp_path / "curve.yaml"
    path.write_text(SPEC.format(sizes="[150, 300]").replace(
        "decoders: [{name: mos-lstm, ", "decoders: [{name: mos-lstm, seeds: 3, "))
    spec = load_spec(path, registry=load_registry())
    assert decoders_to_train(spec) == 18
    results = run_spec(spec, tmp_path / "run", cache=Cache(tmp_path / "cache"))
    trained = [d for d in (tmp_path / "cache" / "train").iterdir() if not d.name.endswith(".partial")]
    assert len(trained) == 18
    for run in results.runs:
        for point in run.by_size[:-1]:
            token_f1 = point.metrics["token-f1"]
            assert token_f1.seeds is not None and token_f1.seeds.n == 3
            assert token_f1.value == pytest.approx(sum(token_f1.seeds.values) / 3)
