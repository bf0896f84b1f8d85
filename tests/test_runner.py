"""End to end through every stage on a tiny spec: results schema, cache reuse, resume after kill."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.registry.loader import load_registry
from harness.runner import run_spec
from harness.spec import load_spec
from harness.util.cache import Cache

TINY = """
name: tiny
seed: 3
device: cpu
corpus:
  train: {{generate: quickstart, sentences: 600}}
  test: {{generate: quickstart, sentences: 40, seed: 9}}
  normalise: {{lowercase: true, digits: zero}}
vocab: {{bpe_size: 200, dim: 16, epochs: 2}}
encoders: [avg]
decoders: [{{name: mos-lstm, hidden: 32, epochs: {epochs}, batch_size: 32}}]
generation: {{beam: 2, max_len: 20}}
metrics: [id, perm, id-perm, bleu, ppl]
downstream: {{reference: table.yaml}}
report: {{formats: [md, html]}}
"""

TABLE = """
source: test table
tasks: [MR, CR]
models:  # a row counts only for the model it measured: avg over TINY's vocabulary
  avg: {vectors: run-trained bpe200 16d, dim: 16}
scores:
  avg: {MR: 70.0, CR: 75.0}
  hier: {MR: 68.0, CR: 71.0}
"""


def _write_spec(directory: Path, epochs: int = 2) -> Path:
    (directory / "table.yaml").write_text(TABLE)
    spec = directory / "tiny.yaml"
    spec.write_text(TINY.format(epochs=epochs))
    return spec


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, Cache]:
    root = tmp_path_factory.mktemp("tiny")
    registry = load_registry()
    spec = load_spec(_write_spec(root), registry=registry)
    cache = Cache(root / "cache")
    results = run_spec(spec, root / "run", cache=cache).to_json()
    return root, results, cache


def test_results_follow_the_design_schema(tiny_run: tuple[Path, dict, Cache]) -> None:
    root, results, _ = tiny_run
    on_disk = json.loads((root / "run" / "results.json").read_text())
    assert on_disk == results
    assert results["schema"] == "v2s-harness/results/1"
    assert {"spec", "provenance", "runs", "downstream", "correlations"} <= set(results)
    assert {"harness_version", "git_commit", "spec_sha256", "packages", "seed", "device",
            "timings"} <= set(results["provenance"])
    (run,) = results["runs"]
    assert (run["encoder"], run["decoder"]) == ("avg", "mos-lstm")
    defined = ["id", "perm", "bleu"]
    if run["metrics"]["perm"]["value"] > 0:
        defined.append("id-perm")
    else:  # no output is a permutation of its input: Id/PERM is undefined, null in JSON
        assert run["metrics"]["id-perm"]["value"] is None
        # no trials: the exact interval is the whole range (no information), never a point
        assert run["metrics"]["id-perm"]["ci95"] == [0.0, 100.0]
        assert run["metrics"]["id-perm"]["support"] == 0
    for name in defined:
        entry = run["metrics"][name]
        assert 0.0 <= entry["value"] <= 100.0
        low, high = entry["ci95"]
        assert low <= entry["value"] + 1e-9 and entry["value"] <= high + 1e-9
    assert run["metrics"]["bleu"]["signature"].startswith("nrefs:1")
    # perplexity of the inputs under the decoder: above 1, and consistent with the records
    records = [json.loads(line) for line in
               (root / "run" / "samples" / "avg__mos-lstm.jsonl").read_text().splitlines()]
    expected_ppl = math.exp(sum(r["nll"] for r in records) / sum(r["tokens"] for r in records))
    assert run["metrics"]["ppl"]["value"] == pytest.approx(expected_ppl)
    assert 1.0 < run["metrics"]["ppl"]["value"]
    assert {"epochs", "val_loss", "tokens_per_s"} <= set(run["train"])
    assert run["train"]["epochs"] == 2
    assert run["generate"]["sentences_per_s"] > 0
    assert results["downstream"] == {"avg": {"MR": 70.0, "CR": 75.0}}
    corr = results["correlations"]
    assert corr["method"] == "spearman"
    assert corr["matrix"]["id"]["MR"] == {"rho": None, "p": None, "n": 1}
    assert any("too few encoders" in note for note in corr["notes"])


def test_run_directory_has_samples_and_reports(tiny_run: tuple[Path, dict, Cache]) -> None:
    root, results, _ = tiny_run
    lines = (root / "run" / "samples" / "avg__mos-lstm.jsonl").read_text().splitlines()
    assert len(lines) == results["provenance"]["corpus"]["test"]
    record = json.loads(lines[0])
    assert {"reference", "reference_raw", "hypothesis", "score"} <= set(record)
    assert record["reference"] == record["reference"].lower()
    report = (root / "run" / "report.md").read_text()
    assert "V2S diagnostics" in report and "too few encoders" in report
    assert "<table>" in (root / "run" / "report.html").read_text()


def test_rerun_reuses_every_artifact(tiny_run: tuple[Path, dict, Cache]) -> None:
    root, first, cache = tiny_run
    registry = load_registry()
    spec = load_spec(root / "tiny.yaml", registry=registry)
    again = Cache(cache.root)
    second = run_spec(spec, root / "run2", cache=again).to_json()
    assert again.builds == 0 and again.hits >= 8  # corpus, vocab, encode, train, gen, 4 scores
    assert second["runs"] == first["runs"]


def test_changing_an_option_rebuilds_only_what_depends_on_it(
        tiny_run: tuple[Path, dict, Cache]) -> None:
    root, _, cache = tiny_run
    registry = load_registry()
    spec = load_spec(root / "tiny.yaml", ["generation.beam=1"], registry=registry)
    again = Cache(cache.root)
    run_spec(spec, root / "run3", cache=again)
    assert again.builds == 6  # generation + 5 scores; corpus, vocab, encode, train reused


def test_a_new_test_set_retrains_nothing(tiny_run: tuple[Path, dict, Cache]) -> None:
    """Each corpus part has its own key: the vocabulary, the training vectors and the decoder
    depend on the training split only."""
    root, _, cache = tiny_run
    registry = load_registry()
    spec = load_spec(root / "tiny.yaml", ["corpus.test.sentences=30"], registry=registry)
    again = Cache(cache.root)
    run_spec(spec, root / "run4", cache=again)
    assert again.builds == 8  # corpus, test vectors, generation, 5 scores
    assert again.hits == 3  # vocab, training vectors, decoder


def _harness(*args: str, cache: Path, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "HARNESS_CACHE": str(cache), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "harness.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _epochs_checkpointed(cache: Path) -> int:
    """Epochs completed by the newest checkpoint of a training in progress (0 if none yet)."""
    best = 0
    for path in (cache / "train").glob("*.partial/checkpoints/step-*.json"):
        try:
            best = max(best, len(json.loads(path.read_text())["position"]["history"]))
        except (OSError, ValueError, KeyError):
            continue  # pruned or half-written while we looked
    return best


@pytest.mark.slow
def test_training_killed_halfway_resumes_to_the_same_result(tmp_path: Path) -> None:
    spec = _write_spec(tmp_path, epochs=6)
    # Reference: one uninterrupted run in its own cache.
    ref = _harness("run", str(spec), "--out", "ref", cache=tmp_path / "c1", cwd=tmp_path)
    assert ref.wait(timeout=600) == 0, ref.stderr.read()
    # Interrupted run: killed (SIGKILL, no clean-up) once two epochs are checkpointed.
    proc = _harness("run", str(spec), "--out", "run", cache=tmp_path / "c2", cwd=tmp_path)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if _epochs_checkpointed(tmp_path / "c2") >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = [p for p in (tmp_path / "c2" / "train").iterdir() if p.suffix != ".partial"]
    assert finished == []
    resumed = _harness("run", str(spec), "--out", "run", cache=tmp_path / "c2", cwd=tmp_path)
    _, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert "encode avg train: cached" in err and "train avg -> mos-lstm: resuming" in err
    first = json.loads((tmp_path / "ref" / "results.json").read_text())["runs"]
    second = json.loads((tmp_path / "run" / "results.json").read_text())["runs"]
    for a, b in zip(first, second):
        assert a["metrics"] == b["metrics"]
        assert a["train"]["train_loss"] == b["train"]["train_loss"]
    assert ((tmp_path / "ref" / "samples" / "avg__mos-lstm.jsonl").read_text()
            == (tmp_path / "run" / "samples" / "avg__mos-lstm.jsonl").read_text())


class _CountingEncoder:
    """A trainable encoder: sentence vector = (length, fitted mean length)."""

    fits = 0

    def __init__(self) -> None:
        self.mean = None

    @property
    def dim(self) -> int:
        return 2

    def fingerprint(self) -> str:
        return "counting/1"

    def fit(self, sentences: list[str]) -> None:
        type(self).fits += 1
        self.mean = sum(len(s.split()) for s in sentences) / len(sentences)

    def save(self, directory: Path) -> None:
        (directory / "mean.json").write_text(json.dumps(self.mean))

    def load(self, directory: Path) -> None:
        self.mean = json.loads((directory / "mean.json").read_text())

    def encode(self, sentences: list[str], batch_size: int = 256):
        import numpy as np

        return np.array([[len(s.split()), self.mean] for s in sentences], dtype=np.float32)


def test_trainable_encoder_is_fitted_once_and_loaded_from_the_cache(tmp_path: Path) -> None:
    from harness.protocols import Options
    from harness.registry.components import make_info

    registry = load_registry()
    registry.add(make_info("encoder", "counting", lambda options, context: _CountingEncoder(),
                           options=Options, trainable=True, plugin="test"))
    spec_path = _write_spec(tmp_path, epochs=1)
    spec = load_spec(spec_path, ["encoders=[counting]"], registry=registry)
    cache = Cache(tmp_path / "cache")
    first = run_spec(spec, tmp_path / "run", cache=cache).to_json()
    assert _CountingEncoder.fits == 1 and (cache.root / "fit").is_dir()
    again = Cache(cache.root)
    second = run_spec(spec, tmp_path / "run2", cache=again).to_json()
    assert _CountingEncoder.fits == 1 and again.builds == 0
    assert first["runs"] == second["runs"] and first["runs"][0]["dim"] == 2


def test_table_spec_correlates_published_tables_without_training(tmp_path: Path) -> None:
    from scipy.stats import spearmanr

    from harness.runner import run_tables

    (tmp_path / "diag.yaml").write_text(
        "source: diag\ntasks: [id, bleu]\nscores:\n"
        "  a: {id: 15.0, bleu: 33.0}\n  b: {id: 1.0, bleu: 23.0}\n"
        "  c: {id: 14.0, bleu: 38.0}\n  d: {id: 3.0, bleu: 21.0}\n  e: {id: 20.0}\n")
    (tmp_path / "down.yaml").write_text(
        "source: down\ntasks: [MR, CR]\nscores:\n"
        "  a: {MR: 72.0, CR: 74.0}\n  b: {MR: 63.0, CR: 73.0}\n"
        "  c: {MR: 68.0, CR: 71.0}\n  d: {MR: 85.0, CR: 91.0}\n")
    (tmp_path / "pc.yaml").write_text(
        "name: pc\ndiagnostics: {reference: diag.yaml}\ndownstream: {reference: down.yaml}\n"
        "correlation: {rank_by: id}\n")
    registry = load_registry()
    spec = load_spec(tmp_path / "pc.yaml", registry=registry)
    results = run_tables(spec, tmp_path / "run").to_json()
    matrix = results["correlations"]["matrix"]
    expected = spearmanr([15.0, 1.0, 14.0, 3.0], [72.0, 63.0, 68.0, 85.0]).statistic
    assert matrix["id"]["MR"]["rho"] == pytest.approx(expected)
    assert matrix["id"]["MR"]["n"] == 4  # `e` has no downstream scores: pairwise deletion
    assert matrix["bleu"]["CR"]["n"] == 4
    assert results["correlations"]["ranks"]["id"]["e"] == 1
    assert any("no downstream scores for: e" in n for n in results["correlations"]["notes"])
    assert json.loads((tmp_path / "run" / "results.json").read_text()) == results


def test_computed_downstream_scores_fill_in_for_encoders_the_table_lacks(tmp_path: Path) -> None:
    spec_path = _write_spec(tmp_path, epochs=1)
    registry = load_registry()
    overrides = ["encoders=[avg, avg-max-hier]",
                 "downstream.tasks=[{name: syn-topic, train: 120, dev: 40, test: 60}]"]
    spec = load_spec(spec_path, overrides, registry=registry)
    cache = Cache(tmp_path / "cache")
    results = run_spec(spec, tmp_path / "run", cache=cache).to_json()
    # avg is in the reference table; avg-max-hier is not, so it gets the computed task score
    assert results["downstream_origin"] == {"avg": "reference", "avg-max-hier": "computed"}
    assert results["downstream"]["avg"] == {"MR": 70.0, "CR": 75.0}
    (column,) = results["downstream"]["avg-max-hier"]
    detail = results["downstream_details"]["avg-max-hier"]["syn-topic"]
    assert results["downstream"]["avg-max-hier"][column] == pytest.approx(detail["score"])
    assert detail["n_test"] == 60 and 0.0 <= detail["score"] <= 100.0
    assert (cache.root / "downstream").is_dir() and (cache.root / "task-data").is_dir()
    again = Cache(cache.root)
    assert run_spec(spec, tmp_path / "run2", cache=again).to_json()["downstream"] == \
        results["downstream"]
    assert again.builds == 0


class _NaNEncoder:
    """An encoder plugin gone wrong: its second sentence comes out as NaN."""

    dim = 3

    def fingerprint(self) -> str:
        return "nan/1"

    def encode(self, sentences: list[str], batch_size: int = 256):
        import numpy as np

        out = np.ones((len(sentences), 3), dtype=np.float32)
        out[1:2] = np.nan
        return out


def test_a_broken_encoder_fails_the_run_before_any_decoder_trains(tmp_path: Path) -> None:
    from harness.errors import PluginError
    from harness.protocols import Options
    from harness.registry.components import make_info

    registry = load_registry()
    registry.add(make_info("encoder", "nan-encoder", lambda options, context: _NaNEncoder(),
                           options=Options, plugin="bad-plugin"))
    spec = load_spec(_write_spec(tmp_path), ["encoders=[avg, nan-encoder]"], registry=registry)
    cache = Cache(tmp_path / "cache")
    with pytest.raises(PluginError, match=r"plugin 'bad-plugin': encode returned a non-finite"):
        run_spec(spec, tmp_path / "run", cache=cache)
    assert not (cache.root / "train").exists() and not (tmp_path / "run").exists()


class _RaisingEncoder(_NaNEncoder):
    """An encoder plugin whose own code fails."""

    def encode(self, sentences: list[str], batch_size: int = 256):
        raise ValueError("weights corrupt\nsecond line")


def test_an_exception_in_a_plugin_names_the_plugin(tmp_path: Path) -> None:
    from harness.errors import PluginError
    from harness.protocols import Options
    from harness.registry.components import make_info

    registry = load_registry()
    registry.add(make_info("encoder", "raising", lambda options, context: _RaisingEncoder(),
                           options=Options, plugin="bad-plugin"))
    registry.add(make_info("encoder", "unbuildable", lambda options, context: 1 / 0,
                           options=Options, plugin="worse-plugin"))
    cache = Cache(tmp_path / "cache")
    spec = load_spec(_write_spec(tmp_path), ["encoders=[raising]"], registry=registry)
    with pytest.raises(PluginError, match=r"^plugin 'bad-plugin': encoder 'raising': encode: "
                                          r"ValueError: weights corrupt$"):
        run_spec(spec, tmp_path / "run", cache=cache)
    spec = load_spec(_write_spec(tmp_path), ["encoders=[unbuildable]"], registry=registry)
    with pytest.raises(PluginError, match=r"^plugin 'worse-plugin': building encoder "
                                          r"'unbuildable': ZeroDivisionError"):
        run_spec(spec, tmp_path / "run", cache=cache)
    assert not (tmp_path / "run").exists()
