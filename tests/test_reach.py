"""What a run's jobs read (`harness.executors.reach`): the spec's paths and the forwarded
environment's, and a node's check that it sees them and shares the cache."""

from __future__ import annotations

from pathlib import Path

from harness.executors.reach import Input, Token, job_inputs, refusal, unreachable
from harness.registry.loader import load_registry
from harness.spec import load_spec


def test_the_inputs_are_the_existing_paths_of_the_spec_and_environment(tmp_path: Path) -> None:
    corpus = tmp_path / "train.txt"
    corpus.write_text("a b c\n", encoding="utf-8")
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"")
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(
        "name: reach\ncorpus:\n  train: {path: train.txt}\n"
        "  test: {generate: quickstart, sentences: 5}\n"
        "encoders: [avg]\ndecoders: [mos-lstm]\n"
        "downstream: {data_dir: not-there-yet}\n", encoding="utf-8")
    spec = load_spec(spec_file, (), load_registry())
    environment = {"HARNESS_LASER_WEIGHTS": str(weights), "HF_HUB_OFFLINE": "1",
                   "HARNESS_INFERSENT_WEIGHTS": str(tmp_path / "missing.pkl")}
    assert job_inputs(spec, environment) == [
        Input("corpus.train.path", str(corpus)),
        Input("environment variable HARNESS_LASER_WEIGHTS", str(weights))]


def test_a_node_reports_missing_inputs_and_a_cache_it_does_not_share(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    there = Input("corpus.train.path", str(tmp_path))
    gone = Input("vocab.model", str(tmp_path / "gone.model"))
    token = Token.place(str(cache))
    seen = unreachable([there, gone], str(cache), token)
    assert seen["missing"] == [{"where": "vocab.model", "path": str(tmp_path / "gone.model")}]
    assert seen["cache"] is None
    assert refusal("10.0.0.2 (ab12cd34)", seen, str(cache)) == (
        f"executor ray: node 10.0.0.2 (ab12cd34) cannot see {tmp_path / 'gone.model'} "
        "(vocab.model), which this machine reads; every node must see the run's inputs and "
        "cache at the same path: a shared filesystem mounted alike on every node "
        "(docs/paper-protocol.md, \"Cluster\")")
    assert refusal("n", unreachable([there], str(cache), token), str(cache)) is None
    # A folder of the node's own at the cache's path lacks the token the driver wrote.
    own = tmp_path / "elsewhere"
    own.mkdir()
    line = refusal("n", unreachable([there], str(own), token), str(own))
    assert line is not None and line.startswith(f"executor ray: node n does not share the "
                                                f"cache {own} (a file the driver wrote there")
    token.remove(str(cache))
    assert sorted(p.name for p in cache.iterdir()) == []
