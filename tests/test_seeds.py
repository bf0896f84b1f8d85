"""Training variance: a decoder's `seeds: N` trains N decoders per encoder, and the run reports
their mean and spread, with the test sentence as the unit of intervals and tests; seed variance
enters an interval only from 3 seeds on."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.registry.loader import load_registry
from harness.runner import run_spec
from harness.spec import load_spec
from harness.util.cache import Cache

SPEC = """
name: seeds
seed: 3
device: cpu
corpus:
  train: {{generate: quickstart, sentences: 500}}
  test: {{generate: quickstart, sentences: 60, seed: 9}}
  normalise: {{lowercase: true, digits: zero}}
vocab: {{bpe_size: 200, dim: 16, epochs: 2}}
encoders: [avg, hier]
decoders: [{{name: mos-lstm, hidden: 32, epochs: 2, batch_size: 32{seeds}}}]
generation: {{beam: 2, max_len: 20}}
metrics: [id, bleu]
correlation: {{rank_by: bleu}}
comparison: {{resamples: 200}}
report: {{formats: [md]}}
"""


def _run(root: Path, cache: Cache, seeds: int | None, out: str) -> dict:
    path = root / f"{out}.yaml"
    path.write_text(SPEC.format(seeds="" if seeds is None else f", seeds: {seeds}"))
    spec = load_spec(path, registry=load_registry())
    return run_spec(spec, root / out, cache=cache).to_json()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, dict]:
    root = tmp_path_factory.mktemp("seeds")
    two = _run(root, Cache(root / "cache"), 2, "two")
    one = _run(root, Cache(root / "cache"), None, "one")
    return root, two, one


def test_each_seed_is_trained_and_scored(runs: tuple[Path, dict, dict]) -> None:
    _, two, _ = runs
    for run in two["runs"]:
        assert [s["seed"] for s in run["seeds"]] == [3, 4]
        for name in ("id", "bleu"):
            values = [s["metrics"][name]["value"] for s in run["seeds"]]
            score = run["metrics"][name]
            assert score["value"] == pytest.approx(np.mean(values))
            assert score["seeds"]["n"] == 2
            assert score["seeds"]["values"] == pytest.approx(values)
            assert score["seeds"]["std"] == pytest.approx(np.std(values, ddof=1))
            # Id is a rate over the sentences: exact where the seeds agree on every sentence,
            # Korn & Graubard's otherwise; BLEU a bootstrap over whole sentences
            assert score["interval"] in {"id": ("clopper-pearson", "korn-graubard"),
                                         "bleu": ("cluster-bootstrap",)}[name]
            assert score["support"] == 60
            low, high = score["ci95"]
            assert low <= score["value"] <= high
        # the two decoders differ: other initial weights, split and batch order
        assert run["seeds"][0]["train"]["val_loss"] != run["seeds"][1]["train"]["val_loss"]


def test_the_first_seed_is_the_one_seed_run(runs: tuple[Path, dict, dict]) -> None:
    _, two, one = runs
    # The one-seed run came second and built nothing: its decoders are the first seed's.
    assert one["provenance"]["cache"]["builds"] == 0
    for first, single in zip(two["runs"], one["runs"], strict=True):
        assert "seeds" not in single
        for name in ("id", "bleu"):
            assert first["seeds"][0]["metrics"][name]["value"] == single["metrics"][name]["value"]


def test_samples_are_written_per_seed(runs: tuple[Path, dict, dict]) -> None:
    root, two, _ = runs
    names = sorted(p.name for p in (root / "two" / "samples").iterdir())
    assert names == ["avg__mos-lstm-seed4.jsonl", "avg__mos-lstm.jsonl",
                     "hier__mos-lstm-seed4.jsonl", "hier__mos-lstm.jsonl"]
    first = [json.loads(line)["hypothesis"] for line in
             (root / "two" / "samples" / "avg__mos-lstm.jsonl").read_text().splitlines()]
    assert [o["hypothesis"] for e in two["examples"] for o in e["outputs"]
            if o["encoder"] == "avg"] == first[:len(two["examples"])]


def test_rank_intervals_follow_the_paired_test_with_the_sentence_as_unit(
        runs: tuple[Path, dict, dict]) -> None:
    _, two, one = runs
    ranking = two["rankings"]["mos-lstm"]["bleu"]
    assert ranking["seeds"] is True and ranking["resamples"] == 200
    assert ranking["sentences"] == 60 and ranking["correction"] == "holm"
    assert set(ranking["encoders"]) == {"avg", "hier"}
    (difference,) = ranking["differences"]
    assert (difference["a"], difference["b"]) == ("avg", "hier")
    assert difference["test"] == "permutation"  # corpus BLEU: no exact test
    assert difference["p_holm"] == difference["p"]  # one pair: Holm changes nothing
    assert difference["significant"] is (difference["p"] <= 0.05)
    values = {r["encoder"]: r["metrics"]["bleu"]["value"] for r in two["runs"]}
    assert difference["difference"] == pytest.approx(values["avg"] - values["hier"])
    better, worse = sorted(("avg", "hier"), key=lambda e: -values[e])
    expected = ({better: [1, 1], worse: [2, 2]} if difference["significant"]
                else {better: [1, 2], worse: [1, 2]})
    assert {e: ranking["encoders"][e]["rank_ci95"] for e in expected} == expected
    assert one["rankings"]["mos-lstm"]["bleu"]["seeds"] is False


def test_two_seeds_leave_seed_variance_out_and_say_so(runs: tuple[Path, dict, dict]) -> None:
    root, two, _ = runs
    for run in two["runs"]:
        for score in run["metrics"].values():
            assert score["seed_variance"] is False
            assert score["support"] <= 60
            assert "seeds-t" not in score["interval"]
    report = (root / "two" / "report.md").read_text()
    assert "Seed variance is not included in the intervals of" in report
    assert "seed variance not included" in report


def test_training_that_ends_while_still_improving_is_flagged(
        runs: tuple[Path, dict, dict]) -> None:
    _, two, _ = runs
    for run in two["runs"]:
        for seed in run["seeds"]:
            train = seed["train"]
            expected = (not train["stopped_early"]) and train["best_epoch"] == train["epochs"]
            assert train["still_improving"] is expected


def test_the_report_shows_seeds_and_rank_stability(runs: tuple[Path, dict, dict]) -> None:
    root, _, _ = runs
    report = (root / "two" / "report.md").read_text()
    for heading in ("## What this run shows", "## V2S diagnostics", "## Rank stability"):
        assert heading in report
    assert "after Holm's correction" in report
