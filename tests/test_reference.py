"""Reference bundles: the protocol signature, `harness bundle`, joining a bundle, and
`harness leaderboard` with tie groups.

One tiny run (three encoders, one of them the floor) is bundled; a second run, on a cache of
its own (another machine, as far as the cache goes), joins the bundle with one new encoder and
one re-run reference encoder.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from harness.analyses.rankings.board_render import render
from harness.analyses.rankings.leaderboard import Cell, Entry, Leaderboard, build_leaderboard
from harness.analyses.rankings.paired import tie_groups
from harness.cli import main
from harness.reference.bundle import BUNDLE_SCHEMA, MANIFEST, Bundle
from harness.registry.loader import load_registry
from harness.results.model import load_results
from harness.results.signature import (
    PROTOCOL_VERSION,
    Signature,
    differences,
    readable,
    signed,
)
from harness.runner import run_spec
from harness.spec import load_spec
from harness.util.cache import Cache

pytestmark = pytest.mark.integration

TINY = """
name: tiny
seed: 3
device: cpu
corpus:
  train: {generate: quickstart, sentences: 600}
  test: {generate: quickstart, sentences: 40, seed: 9}
  normalise: {lowercase: true, digits: zero}
vocab: {bpe_size: 200, dim: 16, epochs: 2}
encoders: [avg, hier, {name: random-gaussian, dim: 8}]
decoders: [{name: mos-lstm, hidden: 32, epochs: 2, batch_size: 32}]
generation: {beam: 2, max_len: 20}
metrics: [id, bleu, {name: retrieval, k: 8}, info]
downstream: {tasks: [{name: syn-topic, train: 100}], seeds: 2}
"""


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny run, its bundle, and a run on another cache that joins it with `max` and
    re-runs `avg`."""
    root = tmp_path_factory.mktemp("reference")
    spec_file = root / "tiny.yaml"
    spec_file.write_text(TINY)
    registry = load_registry()
    run_spec(load_spec(spec_file, registry=registry), root / "run", cache=Cache(root / "cache"))
    bundle = root / "tiny.zip"
    done = CliRunner().invoke(main, ["bundle", str(root / "run"), "--out", str(bundle)])
    assert done.exit_code == 0, done.output
    joined = load_spec(spec_file, ["encoders=[max, avg]", f"reference.bundle={bundle}",
                                   "reference.rerun=[avg]"], registry)
    run_spec(joined, root / "join", cache=Cache(root / "other-cache"))
    return {"root": root, "spec": spec_file, "run": root / "run", "bundle": bundle,
            "join": root / "join", "other-cache": root / "other-cache"}


# ------------------------------------------------------------------------------- signature


def test_the_hash_is_sha256_of_the_fields_as_canonical_json():
    found = signed({"protocol": 1, "vocab": {"bpe_size": 200, "dim": 16}, "seed": 3})
    assert found.fields == {"protocol": 1, "seed": 3, "vocab.bpe_size": 200, "vocab.dim": 16}
    blob = '{"protocol":1,"seed":3,"vocab.bpe_size":200,"vocab.dim":16}'
    assert found.sha256 == hashlib.sha256(blob.encode()).hexdigest()
    assert found.text.startswith("v2s:1|") and found.text.endswith(f"#{found.sha256[:12]}")
    assert readable(found.fields, found.sha256) == found.text


def test_differences_name_each_field_and_both_values():
    ours = signed({"vocab": {"bpe_size": 200}, "seed": 3})
    theirs = signed({"vocab": {"bpe_size": 150}, "seed": 3, "extra": 1})
    assert differences(ours, theirs) == [("extra", None, 1), ("vocab.bpe_size", 200, 150)]


def test_results_and_report_carry_the_signature_and_protocol_version(reference):
    results = load_results(reference["run"])
    signature = results.signature
    assert isinstance(signature, Signature)
    assert signature.fields["protocol"] == PROTOCOL_VERSION
    text = (reference["run"] / "results.json").read_text()
    assert f'"protocol": {PROTOCOL_VERSION}' in text
    corpus = next((reference["root"] / "cache" / "corpus").glob("*/test.txt"))
    assert signature.fields["data.test_sha256"] == hashlib.sha256(corpus.read_bytes()).hexdigest()
    assert signature.fields["vocab.bpe_size"] == 200
    assert signature.fields["decoders.mos-lstm.seeds"] == [3]
    assert signature.fields["metrics.retrieval.options.k"] == 8
    assert signature.fields["downstream.tasks.syn-topic.seeds"] == [1111, 1112]
    assert not any(key.startswith("encoders") for key in signature.fields)
    report = (reference["run"] / "report.md").read_text()
    assert signature.text.replace("|", "\\|") in report  # a table cell escapes the bars
    assert f"protocol #{signature.sha256[:12]}" in report


def test_the_signature_leaves_the_encoders_out(reference):
    assert (load_results(reference["join"]).signature
            == load_results(reference["run"]).signature)


# ---------------------------------------------------------------------------------- bundle


def test_the_bundle_holds_each_encoders_statistics_scores_and_shared_files(reference):
    results = load_results(reference["run"])
    bundle = Bundle(reference["bundle"])
    manifest = json.loads(zipfile.ZipFile(reference["bundle"]).read(MANIFEST))
    assert manifest["schema"] == BUNDLE_SCHEMA
    assert list(bundle.manifest.encoders) == ["avg", "hier", "random-gaussian"]
    assert bundle.signature == results.signature
    assert bundle.manifest.encoders["random-gaussian"].description.control
    hier = bundle.manifest.encoders["hier"]
    assert hier.runs[0].metrics["info"] == next(r for r in results.runs
                                                if r.encoder == "hier").metrics["info"]
    topic = hier.downstream["syn-topic"]
    assert topic.spread is not None and topic.spread.seeds == (1111, 1112)
    # the statistics are the score stage's own files, bit for bit
    cache = reference["root"] / "cache" / "score"
    files = {np.load(path).tobytes() for path in cache.glob("*/statistics.npy")}
    stats = bundle.archive.statistics()
    assert all(array.tobytes() in files for by in stats.values() for seeds in by.values()
               for array in seeds)
    assert {a.stage for a in bundle.archive.index.shared} == {"vocab", "nll"}


# ------------------------------------------------------------------------------------ join


def test_a_join_trains_only_the_encoders_the_bundle_lacks_and_no_unconditional_model(reference):
    trained = [json.loads((d / "meta.json").read_text())["parts"]["encoded"]
               for d in (reference["other-cache"] / "train").iterdir() if (d / "meta.json").exists()]
    assert len(trained) == 2  # max and the re-run avg: no hier, no floor, no unconditional model
    vocab = next((reference["other-cache"] / "vocab").iterdir())
    assert (vocab / "vectors.npy").read_bytes() == next(
        (reference["root"] / "cache" / "vocab").iterdir()).joinpath("vectors.npy").read_bytes()


def test_joined_rows_are_marked_and_every_analysis_sees_them(reference):
    results = load_results(reference["join"])
    bundle = Bundle(reference["bundle"])
    marks = {r.encoder: r.bundle for r in results.runs}
    assert marks == {"avg@tiny": bundle.id, "hier": bundle.id, "random-gaussian": bundle.id,
                     "max": None, "avg": None}
    assert results.reference.sha256 == bundle.sha256 and results.reference.rerun == ["avg"]
    assert results.reference.encoders["avg@tiny"] == "avg"
    ranked = results.rankings["mos-lstm"]["info"].encoders
    assert set(ranked) == {"avg@tiny", "hier", "max", "avg"}  # the floor is a control
    assert results.floor.encoder == "random-gaussian"
    assert set(results.floor.gains["mos-lstm"]["info"]) == {"avg@tiny", "hier", "max", "avg"}
    assert set(results.downstream) == {"avg@tiny", "hier", "random-gaussian", "max", "avg"}
    assert "(bundle)" in (reference["join"] / "report.md").read_text()


def test_the_primary_test_is_the_bundles_and_the_one_at_n_plus_one_is_exploratory(reference):
    correlations = load_results(reference["join"]).correlations
    registered, joined = correlations.primary_reference, correlations.primary
    assert registered is not None and joined is not None
    assert sorted(registered.encoders) == ["avg@tiny", "hier"]  # the bundle's studied encoders
    assert sorted(joined.encoders) == ["avg", "avg@tiny", "hier", "max"]
    assert "exploratory" in (reference["join"] / "report.md").read_text()


def test_the_rerun_reference_encoder_is_not_different_from_its_bundled_self(reference):
    results = load_results(reference["join"])
    rows = {r.encoder: r for r in results.runs}
    for metric, rerun in rows["avg"].metrics.items():
        bundled = rows["avg@tiny"].metrics[metric]
        assert bundled.ci95[0] <= rerun.value <= bundled.ci95[1]
    for metric, ranking in results.rankings["mos-lstm"].items():
        (pair,) = [d for d in ranking.differences if {d.a, d.b} == {"avg", "avg@tiny"}]
        assert not pair.significant, metric


def test_a_signature_mismatch_is_refused_naming_the_field_before_anything_is_built(reference,
                                                                                   tmp_path):
    out = tmp_path / "refused"
    done = CliRunner().invoke(main, ["run", str(reference["spec"]), "--set", "encoders=[max]",
                                     "--set", "vocab.bpe_size=150", "--reference",
                                     str(reference["bundle"]), "--out", str(out),
                                     "--cache", str(tmp_path / "cache")])
    assert done.exit_code == 2
    assert "vocab.bpe_size: the bundle has 200, this run 150" in done.output
    assert "\n" + "vocab.bpe_size" in done.output  # a line of its own
    assert not out.exists()
    assert not (tmp_path / "cache" / "vocab").exists() and not (tmp_path / "cache" / "train").exists()


def test_a_rerun_name_the_bundle_lacks_is_refused(reference, tmp_path):
    done = CliRunner().invoke(main, ["run", str(reference["spec"]), "--set", "encoders=[max]",
                                     "--set", "reference.rerun=[max]", "--reference",
                                     str(reference["bundle"]), "--out", str(tmp_path / "x"),
                                     "--cache", str(tmp_path / "cache")])
    assert done.exit_code == 2 and "reference.rerun: 'max' is not in bundle" in done.output


def test_a_missing_bundle_is_refused_naming_the_shipped_ones(reference, tmp_path):
    done = CliRunner().invoke(main, ["validate", str(reference["spec"]), "--set",
                                     "reference=nowhere.zip"])
    assert done.exit_code == 2 and "reference bundle nowhere.zip: no such file" in done.output


def test_retrieval_distractors_and_the_chance_pairing_rebuild_identically():
    """What a joined run rebuilds instead of reading from the bundle: the same sets from the
    same seed (digests pinned when the bundle format was made)."""
    from harness.protocols import unrelated_pairing
    from harness_plugins.metrics.graded import distractor_sets

    sets = distractor_sets(500, 100, 1)
    assert hashlib.sha256(sets.tobytes()).hexdigest()[:16] == "7f446d8f7d823dbf"
    pairing = np.asarray(unrelated_pairing(500, 1))
    assert hashlib.sha256(pairing.tobytes()).hexdigest()[:16] == "8ef085587254ccf8"


# ----------------------------------------------------------------------------- leaderboard


def test_tie_groups_cut_where_every_encoder_above_beats_every_encoder_below():
    order = ["a", "b", "c", "d"]
    # a beats c and d, b and c beat d: the only clean cut is before d (b does not beat c)
    assert tie_groups(order, {("a", "c"), ("a", "d"), ("b", "d"), ("c", "d")}) == {
        "a": 1, "b": 1, "c": 1, "d": 2}
    # without c over d there is no clean cut at all
    assert tie_groups(order, {("a", "c"), ("a", "d"), ("b", "d")}) == dict.fromkeys(order, 1)
    every = {(x, y) for i, x in enumerate(order) for y in order[i + 1:]}
    assert tie_groups(order, every) == {"a": 1, "b": 2, "c": 3, "d": 4}
    assert tie_groups(order, set()) == dict.fromkeys(order, 1)


def test_the_leaderboard_ranks_joined_rows_once_with_tie_groups(reference):
    board = build_leaderboard([reference["join"], reference["bundle"]])
    names = [e.encoder for e in board.entries]
    assert sorted(names) == ["avg", "avg@tiny", "hier", "max", "random-gaussian"]
    assert names[-1] == "random-gaussian"  # the control, unranked, last
    results = load_results(reference["join"])
    ranking = results.rankings["mos-lstm"]["info"]
    for entry in board.entries:
        cell = entry.cells["info"]
        if entry.control:
            assert cell.rank is None
            continue
        assert cell.rank == ranking.encoders[entry.encoder].rank
        assert cell.group == ranking.groups[entry.encoder]
        assert tuple(cell.rank_ci95) == tuple(ranking.encoders[entry.encoder].rank_ci95)
        assert entry.joined == (entry.encoder in {"avg@tiny", "hier"})
    assert board.pairs["info"] == 6
    csv_text = render(board, "csv")
    assert csv_text.splitlines()[0].startswith("encoder,source,joined,control,id,")
    assert "| avg@tiny (joined) |" in render(board, "md")


def test_the_leaderboard_refuses_sources_of_two_protocols(reference, tmp_path):
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(reference["bundle"]) as source, zipfile.ZipFile(other, "w") as copy:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == MANIFEST:
                manifest = json.loads(data)
                fields = {**manifest["signature"]["fields"], "generation.beam": 5}
                manifest["signature"] = signed(fields).model_dump()
                data = json.dumps(manifest).encode()
            copy.writestr(item, data)
    done = CliRunner().invoke(main, ["leaderboard", str(reference["bundle"]), str(other)])
    assert done.exit_code == 2
    assert "generation.beam:" in done.output and "has 5" in done.output


def board_of_three() -> Leaderboard:
    def entry(name: str, value: float, rank: int, group: int) -> Entry:
        return Entry(encoder=name, source="s", joined=name == "b", control=False,
                     cells={"id": Cell(value=value, ci95=(value - 1, value + 1), rank=rank,
                                       rank_ci95=(rank, rank), group=group)},
                     downstream={"MR": (80.0 - value, None)})

    return Leaderboard(signature="v2s:1|#x", decoder="mos-lstm", diagnostics=["id"],
                       higher_is_better={"id": True}, tasks=["MR"], sentences=10,
                       entries=[entry("a", 30.0, 1, 1), entry("b", 20.0, 2, 2),
                                entry("c", 10.0, 3, 3)])


def test_the_html_leaderboard_sorts_by_a_column_in_chromium(tmp_path):
    import subprocess

    from tests.test_report_browser import chromium

    browser = chromium()
    page = tmp_path / "board.html"
    page.write_text(render(board_of_three(), "html"), encoding="utf-8")

    def rows(column: str) -> list[str]:
        command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                   f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                   page.resolve().as_uri() + f"#sort={column}"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        return [line.split('data-encoder="')[1].split('"')[0]
                for line in done.stdout.split("<tr") if 'data-encoder="' in line]

    assert rows("id") == ["a", "b", "c"]  # higher is better: descending
    assert rows("MR") == ["c", "b", "a"]  # downstream, descending
    assert rows("id-rank") == ["a", "b", "c"]  # ranks ascending
    assert rows("encoder") == ["a", "b", "c"]


def test_the_shipped_quickstart_bundle_is_joinable_by_the_quickstart_spec(tmp_path):
    """benchmarks/quickstart.yaml's signature is the shipped bundle's: a change that moves the
    quickstart's numbers (or `PROTOCOL_VERSION`) must ship a bundle made again."""
    from harness.reference.bundles import shipped_bundle
    from harness.reference.join import check_signature, open_join
    from harness.reference.signature import protocol_fields
    from harness.stages.base import RunContext
    from harness.stages.corpus import prepare_corpus

    spec = load_spec(Path(__file__).resolve().parents[1] / "benchmarks" / "quickstart.yaml",
                     ["encoders=[max]", "reference=quickstart"], load_registry())
    assert spec.reference.bundle == str(shipped_bundle("quickstart"))
    ctx = RunContext(spec=spec, cache=Cache(tmp_path / "cache"))
    join = open_join(spec)
    check_signature(join, signed(protocol_fields(ctx, prepare_corpus(ctx))))  # raises if differ
    assert set(join.bundle.manifest.encoders) == {
        "avg", "hier", "avg-max-hier", "gem", "sent2vec", "sbert", "multiview-d",
        "random-gaussian", "random-lstm"}


def test_the_shipped_reference_bundle_is_the_reference_specs_population():
    """The shipped `reference` bundle holds benchmarks/reference.yaml's 27 encoders and two
    controls, each with its family, and every signature field the spec alone decides (the
    protocol's version, decoders, generation, metrics, vocabulary settings) is the spec's: a
    change that moves them must make the bundle again from a run of that spec (docs/results.md,
    "Bundles"). The data's fields need Tatoeba and SentEval's files, which tests do not have;
    joining checks them."""
    from harness.reference.bundles import shipped_bundle
    from harness.reference.signature import spec_fields
    from harness.results.signature import flatten

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "reference.yaml"
    # The spec's Tatoeba files are not here: generated text stands in for them (the data's
    # fields are not compared here; joining checks them).
    spec = load_spec(path, ["encoders=[avg]", "corpus.train={generate: quickstart, sentences: 50}",
                            "corpus.test={generate: quickstart, sentences: 100, seed: 2}"],
                     load_registry())
    bundle = Bundle(shipped_bundle("reference"))
    expected = dict(flatten(spec_fields(spec)))
    recorded = bundle.signature.fields
    assert {key: recorded.get(key) for key in expected} == expected
    spec_encoders = yaml.safe_load(path.read_text(encoding="utf-8"))["encoders"]
    families = {e["name"]: e.get("family") for e in spec_encoders}
    described = {name: (encoder.description.family if encoder.description else None)
                 for name, encoder in bundle.manifest.encoders.items()}
    assert described == families
    assert sum(family is not None for family in families.values()) == 27


def test_validate_takes_the_reference_as_run_does():
    """`harness validate --reference NAME` checks the spec as `harness run --reference NAME`
    would run it: a shipped bundle's name is found, an unknown one is a one-line error."""
    spec = str(Path(__file__).resolve().parents[1] / "benchmarks" / "quickstart.yaml")
    done = CliRunner().invoke(main, ["validate", spec, "--reference", "quickstart",
                                     "--set", "encoders=[max]"])
    assert done.exit_code == 0 and "ok (1 encoder" in done.output
    done = CliRunner().invoke(main, ["validate", spec, "--reference", "nosuch"])
    assert done.exit_code == 2
    (line,) = [text for text in done.output.splitlines() if text.startswith("error:")]
    assert "reference bundle nosuch: no such file" in line and "quickstart, reference" in line
