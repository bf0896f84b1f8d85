"""Tests of harness.analyses.correlation.stability: stability of the diagnostics between two
result sets (Table 3)."""

from __future__ import annotations

import pytest
from scipy import stats as scipy_stats

from harness.analyses.correlation.stability import compare_runs, diagnostic_values, render_comparison
from harness.errors import DataError
from harness.results.model import RunResults

MOS = {"avg": (15.2, 33.5), "gem": (1.2, 23.8), "hier": (15.0, 37.9), "infersent": (21.2, 53.5),
       "laser": (18.5, 52.9), "sbert": (3.3, 21.5)}
LSTM = {"avg": (12.0, 30.1), "gem": (0.8, 20.0), "hier": (9.0, 35.0), "infersent": (19.9, 50.2),
        "laser": (20.4, 49.0), "quickthought": (17.0, 44.0)}


def results(name: str, decoder: str, table: dict[str, tuple[float, float]],
            extra: dict[str, float] | None = None) -> RunResults:
    return RunResults.model_validate(results_data(name, decoder, table, extra))


def results_data(name: str, decoder: str, table: dict[str, tuple[float, float]],
                 extra: dict[str, float] | None = None) -> dict:
    """A results.json of one decoder's runs, by hand."""
    runs = []
    for encoder, (id_value, bleu) in table.items():
        metrics = {"id": {"value": id_value, "ci95": [id_value - 1, id_value + 1]},
                   "bleu": {"value": bleu, "ci95": [bleu - 1, bleu + 1]}}
        if extra and encoder in extra:
            metrics["mover"] = {"value": extra[encoder], "ci95": [0, 100]}
        runs.append({"encoder": encoder, "decoder": decoder, "metrics": metrics})
    return {"schema": "v2s-harness/results/1", "spec": {"name": name, "seed": 1},
            "provenance": {"corpus": {"train": 200000}}, "runs": runs,
            "correlations": {"decoder": decoder}}


def test_compare_is_spearman_over_the_common_encoders():
    a = results("high", "mos-lstm", MOS)
    b = results("low", "simple-lstm", LSTM)
    comparison = compare_runs(a, b)
    common = ["avg", "gem", "hier", "infersent", "laser"]
    for index, metric in enumerate(["id", "bleu"]):
        entry = comparison.diagnostics[metric]
        rho = scipy_stats.spearmanr([MOS[e][index] for e in common],
                                    [LSTM[e][index] for e in common])[0]
        assert entry.rho == pytest.approx(rho)
        assert entry.n == 5 and entry.encoders == common
        assert entry.p_method == "exact"
    # id ranks over the common five: MOS gem 1, hier 2, avg 3, laser 4, infersent 5; LSTM the
    # same but infersent 4, laser 5 -> sum d^2 = 2, rho = 1 - 6 * 2 / (5 * 24) = 0.9
    assert comparison.diagnostics["id"].rho == pytest.approx(0.9)
    assert comparison.a.model_dump(mode="json") == {
        "name": "high", "decoder": "mos-lstm", "train_sentences": 200000, "seed": 1}
    assert comparison.b.decoder == "simple-lstm"


def test_compare_lists_diagnostics_only_one_run_has():
    a = results("a", "mos-lstm", MOS, extra={e: 50.0 + i for i, e in enumerate(MOS)})
    b = results("b", "mos-lstm", LSTM)
    comparison = compare_runs(a, b, method="kendall")
    assert comparison.only_a == ["mover"] and comparison.only_b == []
    assert comparison.method == "kendall"
    common = ["avg", "gem", "hier", "infersent", "laser"]
    tau = scipy_stats.kendalltau([MOS[e][1] for e in common], [LSTM[e][1] for e in common])[0]
    assert comparison.diagnostics["bleu"].rho == pytest.approx(tau)


def test_compare_two_decoders_of_one_run():
    data = results_data("both", "mos-lstm", MOS)
    data["runs"] += results_data("both", "simple-lstm", LSTM)["runs"]
    combined = RunResults.model_validate(data)
    comparison = compare_runs(combined, combined, decoder_a="mos-lstm", decoder_b="simple-lstm")
    assert comparison.diagnostics["id"].rho == pytest.approx(0.9)
    with pytest.raises(DataError, match="no runs with decoder 'transformer'"):
        compare_runs(combined, combined, decoder_b="transformer")


def test_undefined_correlation_is_noted():
    a = results("a", "mos-lstm", {"avg": (1.0, 2.0), "gem": (2.0, 3.0)})
    b = results("b", "mos-lstm", {"avg": (1.0, 2.0), "gem": (2.0, 3.0)})
    comparison = compare_runs(a, b)
    assert comparison.diagnostics["id"].rho is None
    assert comparison.diagnostics["id"].n == 2
    assert any("id: undefined over 2 common encoders" in note for note in comparison.notes)


def test_published_tables_count_as_a_result_set():
    published = RunResults.model_validate(
        {"runs": [], "spec": {"name": "paper"},
         "diagnostics": {"id": {e: v[0] for e, v in MOS.items()}},
         "diagnostics_source": "Kerscher & Eger 2020, Table 4"})
    comparison = compare_runs(published, results("ours", "mos-lstm", MOS))
    assert comparison.diagnostics["id"].rho == pytest.approx(1.0)
    assert "A: paper, published: Kerscher & Eger 2020, Table 4" in render_comparison(comparison)
    assert comparison.only_b == ["bleu"]
    assert diagnostic_values(published) == {"id": {e: v[0] for e, v in MOS.items()}}


def test_primary_decoder_defaults():
    def primary(data: dict) -> str | None:
        return RunResults.model_validate(data).primary_decoder()

    assert primary({"runs": [{"encoder": "e", "decoder": "x"}, {"encoder": "e", "decoder": "y"}],
                    "spec": {"name": "s", "decoders": [{"name": "y"}, {"name": "x"}]}}) == "y"
    assert primary({"runs": [{"encoder": "e", "decoder": "x"}]}) == "x"
    assert primary({"runs": []}) is None


def test_render_comparison_text():
    comparison = compare_runs(results("high", "mos-lstm", MOS), results("low", "simple-lstm", LSTM))
    text = render_comparison(comparison)
    lines = text.splitlines()
    assert lines[0].startswith("Stability of the V2S diagnostics: spearman correlation")
    assert "A: high, decoder mos-lstm, 200000 training sentences, seed 1" in text
    assert "B: low, decoder simple-lstm" in text
    id_line = next(line for line in lines if line.strip().startswith("id "))
    assert "0.90" in id_line and "(exact)" in id_line
    assert id_line.rstrip().endswith("avg, gem, hier, infersent, laser")
    empty = render_comparison(comparison.model_copy(update={"diagnostics": {}}))
    assert "no diagnostic in common" in empty


def test_undefined_values_are_left_out_of_the_comparison():
    """A null value (Id/PERM without permutations) is no value: the encoder drops out of that
    diagnostic's comparison only."""
    a = results("high", "mos-lstm", MOS)
    data = results_data("low", "simple-lstm", LSTM)
    data["runs"][0]["metrics"]["id"] = {"value": None, "ci95": [None, None]}  # avg
    b = RunResults.model_validate(data)
    comparison = compare_runs(a, b)
    assert comparison.diagnostics["id"].encoders == ["gem", "hier", "infersent", "laser"]
    assert comparison.diagnostics["id"].n == 4
    assert comparison.diagnostics["bleu"].n == 5
    assert "avg" not in diagnostic_values(b)["id"]


def test_the_header_names_both_run_directories_and_what_differs():
    data_a = results_data("qs", "mos-lstm", MOS)
    data_b = results_data("qs", "mos-lstm", MOS)
    data_a["spec"]["decoders"] = [{"name": "mos-lstm", "options": {"hidden": 128}}]
    data_b["spec"]["decoders"] = [{"name": "mos-lstm", "options": {"hidden": 256, "epochs": 8}}]
    data_a["provenance"]["git_commit"], data_b["provenance"]["git_commit"] = "abc1234", "def5678"
    data_b["provenance"]["timings"] = {"train": 12.0}  # timings are not settings
    comparison = compare_runs(RunResults.model_validate(data_a), RunResults.model_validate(data_b),
                              run_dirs=("runs/small", "runs/large"))
    assert [(d.setting, d.a, d.b) for d in comparison.differences] == [
        ("spec.decoders.0.options.hidden", 128, 256),
        ("spec.decoders.0.options.epochs", None, 8),
        ("provenance.git_commit", "abc1234", "def5678")]
    lines = render_comparison(comparison).splitlines()
    assert lines[1:7] == [
        "  A: runs/small (qs, decoder mos-lstm, 200000 training sentences, seed 1)",
        "  B: runs/large (qs, decoder mos-lstm, 200000 training sentences, seed 1)",
        "  What differs (A | B):",
        "    spec.decoders.0.options.hidden  128 | 256",
        "    spec.decoders.0.options.epochs  (not set) | 8",
        "    provenance.git_commit           abc1234 | def5678"]
    same = compare_runs(RunResults.model_validate(data_a), RunResults.model_validate(data_a))
    assert same.differences == []
    assert "  The two specs and their provenance are the same." in render_comparison(same)
