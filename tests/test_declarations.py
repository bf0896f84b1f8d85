"""Scores bound to the model that earned them: what each encoder declares it is, the rule that
binds a published row to a model (not a name), `harness validate`'s warning, and what a run
records (results.json `encoders`, `downstream_missing`, `published`).

The published facts the tests lean on are independent of the code: Vec2Sent's Table 1 prints
each encoder's vector size, Table 5 is what it measured; all-MiniLM-L6-v2 has 384 dimensions
(its model card); BPEmb names its files `<lang>.wiki.bpe.vs<size>.d<dim>.w2v.<bin|txt>`; the
GEM implementation Vec2Sent's code calls runs with window_size=7, k=45, h=17, sigma_power=3
(fursovia/geometric_embedding, gem.py: the values of Yang et al.); Vec2Sent's code encodes with
sentence-transformers' default, unnormalised vectors, and tokenises for InferSent and
QuickThought.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from harness.cli import main
from harness.errors import DataError, PluginError
from harness.protocols import declared_model
from harness.registry.loader import ENTRY_POINT_GROUP, load_registry
from harness.results.declarations import (
    PreviewVocabulary,
    imported_vectors,
    pooled_vectors,
    read_table,
    row_mismatch,
    split_declaration,
    trained_vectors,
)
from harness.runner import run_spec
from harness.spec import load_spec, preflight
from harness.spec.preflight import preflight_warnings
from harness.util.cache import Cache

pytestmark = pytest.mark.usefixtures("one_thread")

REPO = Path(__file__).resolve().parents[1]
PAPER = REPO / "benchmarks" / "paper"
TABLE5 = PAPER / "senteval-table5.yaml"
TABLE4 = PAPER / "v2s-table4.yaml"

SPEC = f"""
name: identity
seed: 3
device: cpu
corpus:
  train: {{generate: quickstart, sentences: 400}}
  test: {{generate: quickstart, sentences: 20, seed: 9}}
  normalise: {{lowercase: true, digits: zero}}
vocab: {{bpe_size: 200, dim: 16, epochs: 1}}
encoders: [avg, hier, sbert]
downstream: {{reference: {TABLE5}}}
report: {{formats: [md], compare: [{TABLE4}, {TABLE5}]}}
"""
TASK = "downstream.tasks=[{name: syn-topic, train: 120, dev: 40, test: 60}]"


def printed(name: str) -> dict:
    return yaml.safe_load((PAPER / name).read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------- the rule


def test_a_row_applies_only_when_the_encoder_declares_every_key_of_its_model() -> None:
    row = {"model": "bert-large-nli-mean-tokens", "dim": 1024}
    assert row_mismatch(row, {"model": "bert-large-nli-mean-tokens", "dim": 1024}) is None
    # `files` is recorded, never compared
    assert row_mismatch(row, {**row, "files": {"w.bin": "00"}}) is None
    # one key differs, or is not declared: not the row's model
    assert "all-MiniLM-L6-v2" in row_mismatch(row, {"model": "all-MiniLM-L6-v2", "dim": 384})
    assert row_mismatch(row, {"model": "bert-large-nli-mean-tokens"}) is not None
    assert row_mismatch(row, {}) is not None  # an encoder that declares nothing
    # JSON equality: lists item by item, and true is not 1
    assert row_mismatch({"weights": ["a", "b"]}, {"weights": ["a", "b"]}) is None
    assert row_mismatch({"weights": ["a", "b"]}, {"weights": ["b", "a"]}) is not None
    assert row_mismatch({"flag": 1}, {"flag": True}) is not None


def test_an_option_the_row_does_not_state_keeps_it_from_binding() -> None:
    """The encoder declares every option that changes its vectors: a row silent about one does
    not say its scores were measured with the encoder's value, so it does not apply, and says
    which keys it leaves out."""
    row = {"model": "bert-large-nli-mean-tokens", "dim": 1024}
    reason = row_mismatch(row, {**row, "normalise": False})
    assert reason == ("its row measured model: bert-large-nli-mean-tokens, dim: 1024; this "
                      "encoder declares model: bert-large-nli-mean-tokens, dim: 1024, "
                      "normalise: False (the row does not state normalise)")
    assert row_mismatch({**row, "normalise": False}, {**row, "normalise": False}) is None
    # a value that differs is reported as such, without the clause
    reason = row_mismatch({**row, "normalise": False}, {**row, "normalise": True})
    assert reason is not None and "does not state" not in reason


def test_a_row_that_declares_no_model_applies_to_nothing() -> None:
    reason = row_mismatch(None, {"model": "anything", "dim": 3})
    assert reason is not None and "declares no model" in reason
    assert row_mismatch({}, {}) is not None
    # a row of another published table that states no model pairs by name (table specs)
    assert row_mismatch({"model": "m"}, None) is None


def test_a_table_reads_its_models_and_names_the_file_and_field_of_a_bad_one(tmp_path: Path
                                                                            ) -> None:
    table = tmp_path / "t.yaml"
    table.write_text("source: t\ntasks: [MR]\nmodels:\n  a: {model: m, dim: 3}\n"
                     "scores:\n  a: {MR: 1.0}\n  b: {MR: 2.0}\n")
    read = read_table(table)
    assert read.models == {"a": {"model": "m", "dim": 3}} and read.kind == "downstream"
    table.write_text("source: t\ntasks: [MR]\nmodels:\n  c: {model: m}\nscores:\n  a: {MR: 1}\n")
    with pytest.raises(DataError, match=r"t\.yaml: models\.c: no such row"):
        read_table(table)
    table.write_text("source: t\ntasks: [MR]\nmodels:\n  a: m\nscores:\n  a: {MR: 1}\n")
    with pytest.raises(DataError, match=r"t\.yaml: models\.a: expected a mapping"):
        read_table(table)
    table.write_text("source: t\nkind: ranks\ntasks: [MR]\nscores:\n  a: {MR: 1}\n")
    with pytest.raises(DataError, match=r"t\.yaml: kind: expected one of diagnostics, "):
        read_table(table)


def test_the_paper_tables_declare_the_models_the_paper_names() -> None:
    table5, table4 = read_table(TABLE5), read_table(TABLE4)
    sizes = {row: values["size"] for row, values in printed("ranks-table1.yaml")["scores"].items()}
    assert (table5.kind, table4.kind) == ("downstream", "diagnostics")
    assert set(table5.models) == set(table5.scores) and set(table4.models) == set(table4.scores)
    # every declared size is Table 1's
    for models in (table5.models, table4.models):
        assert all(model["dim"] == sizes[row] for row, model in models.items() if "dim" in model)
    assert table5.models["sbert"] == {"model": "bert-large-nli-mean-tokens", "dim": 1024,
                                      "normalise": False}
    for row in ("avg", "hier", "avg-max-hier", "gem"):
        assert table5.models[row]["vectors"] == "bpemb-en-50k-300d"
    # GEM as Vec2Sent's code ran it: the wrapped implementation's defaults (Yang et al.'s)
    assert table5.models["gem"] == {"vectors": "bpemb-en-50k-300d", "window": 7, "k": 45,
                                    "h": 17, "sigma_power": 3, "dim": 300}
    assert table5.models["infersent"]["tokenize"] is True
    assert table5.models["quickthought"]["tokenize"] is True
    assert table4.models["laser"] == {"weights": "bilstm.93langs.2018-12-26",
                                      "bpe_codes": "93langs.fcodes", "bpe_vocab": "93langs.fvocab"}
    assert table4.models == {**table5.models, "laser": table4.models["laser"]}
    ranks = read_table(PAPER / "ranks-table1.yaml")
    assert ranks.models == table4.models


# ------------------------------------------------------------------- names of subword vectors


def test_bpemb_files_are_named_after_bpemb_and_other_files_by_name_and_digest() -> None:
    assert imported_vectors("/x/en.wiki.bpe.vs50000.d300.w2v.bin", "ignored") == \
        "bpemb-en-50k-300d"
    assert imported_vectors("de.wiki.bpe.vs3000.d25.w2v.txt", "") == "bpemb-de-3k-25d"
    digest = hashlib.sha256(b"vectors").hexdigest()
    assert imported_vectors("my.vec", digest) == f"my.vec sha256:{digest[:16]}"
    assert trained_vectors(10000, 100) == "run-trained bpe10000 100d"


def test_pooling_encoders_declare_the_vectors_they_pool() -> None:
    from harness.protocols import BuildContext

    registry = load_registry()
    vocab = PreviewVocabulary("bpemb-en-50k-300d", 50, 300)
    context = BuildContext(vocab=vocab)  # type: ignore[arg-type]

    def declared(name: str) -> dict:
        info = registry.get("encoder", name)
        return declared_model(registry.create("encoder", name, info.options(), context))

    assert pooled_vectors(vocab) == "bpemb-en-50k-300d"
    assert pooled_vectors(object()) is None  # a vocabulary that cannot say what it is
    assert declared("avg") == {"vectors": "bpemb-en-50k-300d", "dim": 300}
    assert declared("avg-max-hier") == {"vectors": "bpemb-en-50k-300d", "window": 3, "dim": 900}
    assert declared("gem") == {"vectors": "bpemb-en-50k-300d", "window": 7, "k": 45, "h": 17,
                               "sigma_power": 3.0, "dim": 300}
    # Table 5's rows for these encoders are exactly these declarations
    models = read_table(TABLE5).models
    for name in ("avg", "hier", "avg-max-hier", "gem"):
        assert row_mismatch(models[name], declared(name)) is None


def test_a_gem_with_other_settings_does_not_get_the_papers_gem_row() -> None:
    from harness.protocols import BuildContext
    from harness_plugins.encoders.options import GemOptions, WindowOptions

    registry = load_registry()
    context = BuildContext(vocab=PreviewVocabulary("bpemb-en-50k-300d", 50, 300))  # type: ignore[arg-type]

    def declared(name: str, options: object) -> dict:
        return declared_model(registry.create("encoder", name, options, context))

    other = declared("gem", GemOptions(k=10, h=5, window=2))
    assert {key: other[key] for key in ("window", "k", "h")} == {"window": 2, "k": 10, "h": 5}
    papers = declared("gem", GemOptions(window=7, k=45, h=17, sigma_power=3))
    for table in (TABLE5, TABLE4, PAPER / "ranks-table1.yaml"):
        row = read_table(table).models["gem"]
        reason = row_mismatch(row, other)
        assert reason is not None and "k: 45" in reason and "k: 10" in reason
        assert row_mismatch(row, papers) is None
    # the power of the singular values alone keeps it from binding too
    assert row_mismatch(read_table(TABLE5).models["gem"],
                        declared("gem", GemOptions(sigma_power=2))) is not None
    # a row silent about GEM's settings (the tables before they stated them) binds no GEM
    silent = {"vectors": "bpemb-en-50k-300d", "dim": 300}
    assert row_mismatch(silent, papers).endswith(
        "(the row does not state window, k, h, sigma_power)")
    # the window poolings: Hier's window is 3 in the paper's code
    assert row_mismatch(read_table(TABLE5).models["hier"],
                        declared("hier", WindowOptions(window=2))) is not None


def test_model_encoders_declare_without_loading_anything(tmp_path: Path) -> None:
    from harness_plugins.encoders.adapters.infersent import InferSentEncoder
    from harness_plugins.encoders.adapters.laser import LaserEncoder
    from harness_plugins.encoders.adapters.quickthought import QuickThoughtEncoder
    from harness_plugins.encoders.options import Sent2VecOptions
    from harness_plugins.encoders.sbert import SentenceBertEncoder
    from harness_plugins.encoders.sent2vec import Sent2VecEncoder

    bundled = SentenceBertEncoder()
    declares, files = split_declaration(declared_model(bundled), "p", "sbert")
    assert declares == {"model": "all-MiniLM-L6-v2", "dim": 384, "normalise": False} and \
        list(files) == ["all-MiniLM-L6-v2"]
    assert bundled._model is None  # its files said it all
    # the released model's training command: dim 700, 9 epochs, min count 8, min target count
    # 20, 10 negatives, t = 5e-6, 4 bigrams dropped; the harness's own: Adam 0.01, 2M buckets,
    # 128 sentences a step; the seed the spec gives
    assert declared_model(Sent2VecEncoder(Sent2VecOptions(), seed=5)) == {
        "model": "sent2vec trained on this run's corpus", "epochs": 9, "lr": 0.01,
        "min_count": 8, "min_target_count": 20, "buckets": 2_000_000, "negatives": 10,
        "dropout_k": 4, "subsample": 5e-6, "batch_size": 128, "seed": 5, "dim": 700}
    assert declared_model(Sent2VecEncoder(Sent2VecOptions(seed=2, epochs=1)))["seed"] == 2
    # The adapters name the released files (bytes that are no model: nothing is read but a
    # digest), and so match the paper's rows.
    for name in ("infersent2.safetensors", "crawl-300d-2M.vec", "bilstm.93langs.2018-12-26.pt",
                 "93langs.fcodes", "93langs.fvocab"):
        (tmp_path / name).write_bytes(b"not a model")
    models = read_table(TABLE4).models
    infersent = declared_model(InferSentEncoder(tmp_path / "infersent2.safetensors",
                                                tmp_path / "crawl-300d-2M.vec"))
    assert row_mismatch(models["infersent"], infersent) is None
    assert set(infersent["files"]) == {"infersent2.safetensors", "crawl-300d-2M.vec"}
    laser = declared_model(LaserEncoder(tmp_path / "bilstm.93langs.2018-12-26.pt",
                                        tmp_path / "93langs.fcodes", tmp_path / "93langs.fvocab"))
    assert row_mismatch(models["laser"], laser) is None
    # QuickThought's size comes from the arrays' headers: 2 models x (f, g) x 2 x 600 = 4800
    exports = tmp_path / "mc-qt"
    exports.mkdir()
    for checkpoint in ("BS400-W620-S1200-Glove-UMBC-bidir", "BS400-W300-S1200-UMBC-bidir"):
        np.savez(exports / f"{checkpoint}.npz", **{
            f"{encoder}/{way}/gru_cell/gates/kernel": np.zeros((1, 1200), np.float32)
            for encoder in ("encoder", "encoder_out") for way in ("fw", "bw")})
    quickthought = declared_model(QuickThoughtEncoder(exports))
    assert quickthought["dim"] == 4800 and row_mismatch(models["quickthought"], quickthought) is None
    # tokenisation changes the vectors: the paper's code tokenised for both
    assert declared_model(QuickThoughtEncoder(exports, tokenize=False))["tokenize"] is False
    untokenised = declared_model(InferSentEncoder(tmp_path / "infersent2.safetensors",
                                                  tmp_path / "crawl-300d-2M.vec", tokenize=False))
    assert row_mismatch(models["infersent"], untokenised) is not None


def test_trained_and_control_encoders_declare_every_setting_of_their_vectors() -> None:
    from harness_plugins.encoders.controls import RandomGaussianEncoder
    from harness_plugins.encoders.multiview import DiscriminativeOptions, GenerativeOptions
    from harness_plugins.encoders.multiview.encoder import build_encoder
    from harness_plugins.encoders.options import RandomGaussianOptions

    # the 'small' preset: d 128, 64-d word vectors, N 128 (multiview/encoder.py PRESETS)
    discriminative = declared_model(build_encoder("multiview-d:f",
                                                  DiscriminativeOptions(preset="small"), seed=3))
    assert discriminative == {
        "model": "multiview-d:f trained on this run's corpus", "representation": "unsupervised",
        "hidden": 128, "word_dim": 64, "word_epochs": 5, "min_count": 1, "epochs": 3,
        "batch_size": 128, "lr": 5e-4, "clip": 1.0, "max_words": 30, "pc_sentences": 5000,
        "lowercase": True, "seed": 3, "window": 3, "power_iterations": 5, "dim": 256}
    generative = declared_model(build_encoder("multiview-g", GenerativeOptions(negatives=7),
                                              seed=3))
    assert generative["negatives"] == 7 and generative["beta"] == 0.01
    assert "window" not in generative and "coupling_layers" not in generative
    assert declared_model(RandomGaussianEncoder(RandomGaussianOptions(dim=8), seed=4)) == {
        "model": "random-gaussian (random vectors)", "seed": 4, "dim": 8}


def test_a_declaration_that_is_not_json_names_its_plugin() -> None:
    with pytest.raises(PluginError, match=r"plugin 'p': encoder 'e': declares\(\) must return a "):
        split_declaration(["model"], "p", "e")
    with pytest.raises(PluginError, match="JSON values"):
        split_declaration({"model": object()}, "p", "e")


# ----------------------------------------------------------------------------- validate


def test_validate_warns_for_each_encoder_a_row_does_not_apply_to(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    done = CliRunner().invoke(main, ["validate", str(spec)])
    assert done.exit_code == 0, done.output  # a warning does not stop anything
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 3
    (sbert,) = [w for w in warnings if "encoders.2.name" in w]
    assert "encoder 'sbert'" in sbert and "senteval-table5.yaml" in sbert
    assert "model: bert-large-nli-mean-tokens, dim: 1024" in sbert
    assert "model: all-MiniLM-L6-v2, dim: 384" in sbert
    assert "listed as missing" in sbert
    (avg,) = [w for w in warnings if "encoder 'avg'" in w]
    assert "vectors: bpemb-en-50k-300d" in avg and "vectors: run-trained bpe200 16d" in avg
    loaded = load_spec(spec, [TASK], load_registry())
    assert preflight(loaded) == []
    assert all("computed by the spec's tasks" in str(w) for w in preflight_warnings(loaded))


def test_report_compare_resolves_against_the_spec_and_preflight_reports_a_missing_table(
        tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TABLE5.read_text(encoding="utf-8"))
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace(f"compare: [{TABLE4}, {TABLE5}]", "compare: [t.yaml, gone.yaml]"))
    loaded = load_spec(spec, (), load_registry())
    assert loaded.report.compare == [tmp_path / "t.yaml", tmp_path / "gone.yaml"]
    (problem,) = preflight(loaded)
    line = 1 + next(i for i, text in enumerate(spec.read_text().splitlines())
                    if text.startswith("report:"))
    assert problem.field == "report.compare.1" and problem.line == line
    assert "file not found" in problem.detail
    (tmp_path / "gone.yaml").write_text("source: x\nscores: 3\n")
    (problem,) = preflight(load_spec(spec, (), load_registry()))
    assert problem.field == "report.compare.1" and "needs `scores:`" in problem.detail


# ---------------------------------------------------------------------------------- runs


def _run(root: Path, name: str, overrides: list[str], registry=None) -> dict:
    spec = root / f"{name}.yaml"
    spec.write_text(SPEC)
    loaded = load_spec(spec, overrides, registry or load_registry())
    return run_spec(loaded, root / name, cache=Cache(root / "cache")).to_json()


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, dict]:
    """avg, hier and sbert as shipped, with the paper's Table 5: without tasks, then with."""
    root = tmp_path_factory.mktemp("identity")
    return root, _run(root, "without", []), _run(root, "with", [TASK])


def test_shipped_encoders_get_no_table5_scores_and_say_why(shipped: tuple[Path, dict, dict]
                                                           ) -> None:
    _, results, _ = shipped
    assert results["downstream"] == {} and not results.get("downstream_origin")
    missing = results["downstream_missing"]
    assert set(missing) == {"avg", "hier", "sbert"}
    assert "bert-large-nli-mean-tokens" in missing["sbert"] and "all-MiniLM-L6-v2" in \
        missing["sbert"]
    assert "bpemb-en-50k-300d" in missing["avg"] and "run-trained bpe200 16d" in missing["avg"]
    note = next(n for n in results["correlations"]["notes"] if n.startswith("no downstream"))
    assert all(f"{name} (Kerscher & Eger 2020, Table 5: " in note for name in missing)


def test_shipped_encoders_get_computed_scores_when_the_spec_has_tasks(
        shipped: tuple[Path, dict, dict]) -> None:
    _, _, results = shipped
    assert results["downstream_origin"] == {"avg": "computed", "hier": "computed",
                                            "sbert": "computed"}
    table5 = printed("senteval-table5.yaml")["scores"]
    for name, row in results["downstream"].items():
        assert set(row) == {"syn-topic"} and row != table5[name]
    assert "downstream_missing" not in results


def test_results_record_each_encoders_identity(shipped: tuple[Path, dict, dict]) -> None:
    root, results, _ = shipped
    encoders = results["encoders"]
    assert set(encoders) == {"avg", "hier", "sbert"}
    (vocab_key,) = [p.name for p in (root / "cache" / "vocab").iterdir() if p.is_dir()]
    assert encoders["avg"] == {
        "name": "avg", "plugin": "harness-encoders",
        "version": md.version("v2s-harness"), "options": {}, "files": {}, "vocab": vocab_key,
        "dim": 16, "declares": {"vectors": "run-trained bpe200 16d", "dim": 16}}
    assert encoders["hier"]["declares"] == {"vectors": "run-trained bpe200 16d", "window": 3,
                                            "dim": 16}
    from harness_plugins.encoders.adapters.common import file_identity
    from harness_plugins.encoders.sbert import resolve_model

    sbert = encoders["sbert"]
    assert sbert["declares"] == {"model": "all-MiniLM-L6-v2", "dim": 384, "normalise": False}
    assert sbert["vocab"] is None and sbert["dim"] == 384
    assert sbert["files"] == {"all-MiniLM-L6-v2": file_identity(resolve_model("minilm")[0])}
    saved = json.loads((root / "without" / "results.json").read_text())
    assert saved["encoders"] == encoders


def test_published_tables_are_shown_beside_never_matched_by_name(
        shipped: tuple[Path, dict, dict]) -> None:
    _, results, _ = shipped
    table4, table5 = results["published"]
    assert (table4["source"], table4["kind"]) == ("Kerscher & Eger 2020, Table 4", "diagnostics")
    assert (table5["kind"], table5["columns"][:2]) == ("downstream", ["STS", "MR"])
    assert table5["scores"]["sbert"]["MR"] == 84.79
    assert table5["models"]["sbert"] == {"model": "bert-large-nli-mean-tokens", "dim": 1024,
                                         "normalise": False}
    assert set(table4["matches"]) == set(table4["scores"]) and not any(table4["matches"].values())
    assert not any(table5["matches"].values())


def test_an_encoder_declaring_the_rows_model_gets_the_row(tmp_path: Path) -> None:
    first_party = [ep for ep in md.entry_points(group=ENTRY_POINT_GROUP)
                   if ep.dist is not None and ep.dist.name == "v2s-harness"
                   and ep.value != "harness_plugins.encoders.models"]
    stand_in = md.EntryPoint(name="fake-declared", value="tests.fake_plugins.declared_encoder",
                             group=ENTRY_POINT_GROUP)
    registry = load_registry(entry_points=[stand_in, *first_party])
    assert registry.failures == []
    results = _run(tmp_path, "declared", ["encoders=[avg, sbert]"], registry)
    assert results["downstream_origin"] == {"sbert": "reference"}
    assert results["downstream"]["sbert"] == printed("senteval-table5.yaml")["scores"]["sbert"]
    assert results["encoders"]["sbert"]["files"] == {"weights.bin": "0123abcd"}
    assert results["published"][1]["matches"]["sbert"] is True
    assert results["published"][1]["matches"]["avg"] is False
    # the same stand-in declaring another model does not get it
    other = _run(tmp_path, "other", ["encoders=[{name: sbert, model: another-model}]"], registry)
    assert other["downstream"] == {}
    assert "model: another-model" in other["downstream_missing"]["sbert"]
    # nor does the same model with its vectors normalised
    normalised = _run(tmp_path, "normalised", ["encoders=[{name: sbert, normalise: true}]"],
                      registry)
    assert normalised["downstream"] == {}
    assert "normalise: True" in normalised["downstream_missing"]["sbert"]
