"""Probes of trained decoders: regenerating any sentence, analogies, interpolation (paper
section 4), through the library and the `generate` / `analogy` commands."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness.analyses.probes import analogy, generate, interpolate
from harness.cli import main
from harness.registry.loader import load_registry
from harness.runner import run_spec
from harness.spec import load_spec, preflight
from harness.text.outputs import shown
from harness.util.cache import Cache
from tests.test_runner import _write_spec

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory):
    """The tiny spec, run once: its cache holds the trained decoder the probes use."""
    root = tmp_path_factory.mktemp("probes")
    registry = load_registry()
    spec = load_spec(_write_spec(root), registry=registry)
    cache = Cache(root / "cache")
    run_spec(spec, root / "run", cache=cache)
    samples = [json.loads(line) for line in
               (root / "run" / "samples" / "avg__mos-lstm.jsonl").read_text().splitlines()]
    return root, spec, registry, cache, samples


def test_generate_regenerates_test_sentences_as_the_run_did(trained) -> None:
    """Same sentence, same vector, same search: the run's own samples."""
    _, spec, registry, cache, samples = trained
    builds = cache.builds
    result = generate(spec, cache, [s["reference"] for s in samples[:5]])
    (probe,) = result.probes
    assert (probe.encoder, probe.decoder) == ("avg", "mos-lstm")
    assert probe.outputs == [s["hypothesis"] for s in samples[:5]]
    assert result.rows == [s["reference"] for s in samples[:5]]
    assert cache.builds == builds  # everything came from the cache


def test_an_analogy_with_a_equal_to_b_decodes_c(trained) -> None:
    """u = r - s + v with r = s is v itself."""
    _, spec, registry, cache, samples = trained
    a, c = samples[0]["reference"], samples[1]["reference"]
    (probe,) = analogy(spec, cache, a, a, c).probes
    assert probe.outputs == [samples[1]["hypothesis"]]


def test_interpolation_ends_at_both_sentences(trained) -> None:
    _, spec, registry, cache, samples = trained
    x, y = samples[2]["reference"], samples[3]["reference"]
    result = interpolate(spec, cache, x, y, 4)
    assert result.rows == ["alpha=1.00", "alpha=0.67", "alpha=0.33", "alpha=0.00"]
    outputs = result.probes[0].outputs
    assert (outputs[0], outputs[-1]) == (samples[2]["hypothesis"], samples[3]["hypothesis"])


def test_the_commands_print_each_pairs_outputs_and_refuse_bad_requests(trained) -> None:
    root, _, _, cache, samples = trained
    spec = str(root / "tiny.yaml")
    env = {"HARNESS_CACHE": str(cache.root)}
    reference = samples[0]["reference"]
    done = CliRunner().invoke(main, ["generate", spec, reference], env=env)
    assert done.exit_code == 0, done.output
    assert done.stdout == f"{reference}\n  avg -> mos-lstm  {shown(samples[0]['hypothesis'])}\n"
    as_json = CliRunner().invoke(main, ["analogy", spec, reference, reference, reference,
                                        "--json"], env=env)
    assert json.loads(as_json.stdout)["outputs"] == [
        {"encoder": "avg", "decoder": "mos-lstm", "outputs": [samples[0]["hypothesis"]]}]
    for args, message in ((["generate", spec, "a", "b", "c", "--interpolate", "3"],
                           "--interpolate needs exactly two sentences, got 3"),
                          (["generate", spec, "a", "--encoder", "sbert"],
                           "'sbert' not among the spec's encoders (avg)"),
                          (["generate", spec], "expected 1 non-empty sentence, got 0")):
        refused = CliRunner().invoke(main, args, env=env)
        assert refused.exit_code == 2 and message in refused.stderr, refused.output


def test_problems_of_metrics_or_tasks_do_not_stop_a_probe(trained) -> None:
    """Missing SentEval files stop `harness run`, not a probe, which runs no task."""
    root, _, registry, cache, samples = trained
    (root / "no-senteval").mkdir(exist_ok=True)
    spec = load_spec(root / "tiny.yaml", ["downstream.tasks=[MR]",
                                          f"downstream.data_dir={root / 'no-senteval'}"],
                     registry=registry)
    assert [p.field for p in preflight(spec)] == ["downstream.tasks.0.name"]
    (probe,) = generate(spec, cache, [samples[0]["reference"]]).probes
    assert probe.outputs == [samples[0]["hypothesis"]]
