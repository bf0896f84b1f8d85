"""The probes as a stage of `harness run` (cached: a rerun builds nothing) and through
`harness analogy --file / --expr`, on the tiny spec with a `probes:` section given by --set."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness.analyses.probes import analogy_set, decode_expression, generate
from harness.analyses.probes.analogies import write_generated_set
from harness.cli import main
from harness.registry.loader import load_registry
from harness.results.model import load_results
from harness.runner import run_spec
from harness.spec import load_spec
from harness.text.outputs import shown
from harness.util.cache import Cache
from tests.test_runner import _write_spec
from tests.watched_runs import Watched, watched_run

pytestmark = pytest.mark.usefixtures("one_thread")

PROBES = ["probes.analogies=[{generate: quickstart, items: 10}]",
          "probes.interpolation={pairs: 2, steps: 3}",
          "probes.noise={scales: [0.5, 2.0], sentences: 12}"]


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory):
    """The tiny spec with every probe, run once and watched (`tests.watched_runs`)."""
    root = tmp_path_factory.mktemp("probed")
    spec = load_spec(_write_spec(root), PROBES, registry=load_registry())
    cache = Cache(root / "cache")
    return root, spec, cache, watched_run(spec, root / "run", cache)


@pytest.fixture(scope="module")
def probed(watched):
    """The run's root, spec, cache, results and the avg -> mos-lstm samples."""
    root, spec, cache, run = watched
    samples = [json.loads(line) for line in
               (root / "run" / "samples" / "avg__mos-lstm.jsonl").read_text().splitlines()]
    return root, spec, cache, run.results, samples


def test_the_probes_are_decoded_in_their_job_and_the_analysis_only_reads(
        watched) -> None:
    """The encoder's job decoded its one pair's probes, once; the analysis's run read the
    job's record and decoded nothing."""
    run: Watched = watched[3]
    assert run.jobs == {"avg": ["probes:avg"]}
    assert run.done("probes") == {("avg", "mos-lstm"): 1}
    assert not [unit for unit in run.work if unit[0] == "run"]
    assert run.analysis_builds == 0


def test_a_run_probes_every_pair_and_writes_results_report_and_items(probed) -> None:
    root, spec, _, results, samples = probed
    (pair,) = results.probes
    assert (pair.encoder, pair.decoder) == ("avg", "mos-lstm")
    (solved,) = pair.analogies
    assert solved.overall.items == 10 and solved.source == "generate: quickstart"
    assert set(solved.relations) == {"tense", "negation", "swap", "passive", "capital"}
    items = [json.loads(line) for line in
             (root / "run" / "probes" / "avg__mos-lstm.jsonl").read_text().splitlines()]
    assert len(items) == 10 and items[0]["relation"] == "tense"
    assert sum(bool(i["exact"]) for i in items) == solved.overall.accuracy.successes
    # the run's own test sentences, decoded with the run's search: the ends are its samples
    first = pair.interpolation.paths[0]
    assert (first.x, first.y) == (samples[0]["reference"], samples[1]["reference"])
    assert (first.outputs[0], first.outputs[-1]) == (samples[0]["hypothesis"],
                                                     samples[1]["hypothesis"])
    # noise at scale 0 is the run's own generation: its Id on the first 12 sentences
    baseline = pair.noise.points[0]
    assert [p.scale for p in pair.noise.points] == [0.0, 0.5, 2.0]
    assert baseline.id.successes == sum(s["reference"] == s["hypothesis"] for s in samples[:12])
    assert (pair.noise.sentences, pair.noise.seed) == (12, spec.seed)
    assert load_results(root / "run").probes == results.probes
    report = (root / "run" / "report.md").read_text(encoding="utf-8")
    assert "## Probes: analogies, interpolation, noise" in report
    # the figure leaves out a panel that is 0 at every scale for every encoder; with none left,
    # there is no figure
    drawn = any((p.id.value or 0) > 0 or (p.bleu or 0) > 0
                for probe in results.probes or [] if probe.noise for p in probe.noise.points)
    assert (root / "run" / "figures" / "noise-robustness.png").is_file() == drawn
    assert "probes" in results.provenance.timings


def test_a_rerun_builds_nothing_and_a_changed_probe_rebuilds_only_the_probes(probed) -> None:
    root, _, cache, results, _ = probed
    registry = load_registry()
    builds = cache.builds
    again = run_spec(load_spec(root / "tiny.yaml", PROBES, registry=registry), root / "run",
                     cache=cache)
    assert cache.builds == builds and again.probes == results.probes
    changed = load_spec(root / "tiny.yaml", [*PROBES, "probes.noise.scales=[1.0]"],
                        registry=registry)
    run_spec(changed, root / "changed", cache=cache)
    assert cache.builds == builds + 1  # the probes artifact only
    without = load_spec(root / "tiny.yaml", registry=registry)
    plain = run_spec(without, root / "plain", cache=cache)
    assert plain.probes is None and not (root / "plain" / "probes").exists()
    assert "probes" not in json.loads((root / "plain" / "results.json").read_text())


def test_analogy_file_solves_and_scores_every_item(probed) -> None:
    root, spec, cache, results, _ = probed
    tsv = root / "quickstart-analogies.tsv"
    write_generated_set(tsv, items=10)
    run = analogy_set(spec, cache, tsv)
    (solved,) = run.pairs
    assert solved.result.overall == results.probes[0].analogies[0].overall
    env = {"HARNESS_CACHE": str(cache.root)}
    printed = CliRunner().invoke(main, ["analogy", str(root / "tiny.yaml"), "--file", str(tsv)],
                                 env=env)
    assert printed.exit_code == 0, printed.output
    lines = printed.stdout.splitlines()
    assert lines[0].startswith("1. the german cook greeted julia . : the german cook greets "
                               "julia . :: z : the painter thanks the turkish student .  [tense]")
    assert lines[1] == "   expected: the painter thanked the turkish student ."
    assert lines[2].startswith(f"   avg -> mos-lstm  {shown(solved.items[0].output)}  (")
    assert any(line.startswith("avg -> mos-lstm: accuracy ") and "(n=10)" in line
               for line in lines)
    assert any(line.startswith("  capital: accuracy ") and "(n=2)" in line for line in lines)
    as_json = CliRunner().invoke(main, ["analogy", str(root / "tiny.yaml"), "--file", str(tsv),
                                        "--form", "classic", "--json"], env=env)
    data = json.loads(as_json.stdout)
    assert data["set"] == {"name": tsv.name, "source": str(tsv), "form": "classic", "items": 10}
    (pair,) = data["outputs"]
    assert len(pair["items"]) == 10 and pair["summary"]["overall"]["items"] == 10


def test_an_expression_decodes_like_generate_and_like_the_analogy(probed) -> None:
    root, spec, cache, _, samples = probed
    a, b = samples[0]["reference"], samples[1]["reference"]
    (alone,) = decode_expression(spec, cache, "x", {"x": a}).probes
    assert alone.outputs == generate(spec, cache, [a]).probes[0].outputs
    (same,) = decode_expression(spec, cache, "x - y + y", {"x": a, "y": b}).probes
    assert same.outputs == alone.outputs
    env = {"HARNESS_CACHE": str(cache.root)}
    expr = CliRunner().invoke(main, ["analogy", str(root / "tiny.yaml"), "--expr",
                                     "0.5*x + 0.5*(y)", "--let", f"x={a}", "--let", f"y={b}",
                                     "--json"], env=env)
    assert expr.exit_code == 0, expr.output
    data = json.loads(expr.stdout)
    assert data["rows"] == [f"0.5*x + 0.5*(y)  where x = {a}; y = {b}"]
    three = CliRunner().invoke(main, ["analogy", str(root / "tiny.yaml"), a, b, b, "--json"],
                               env=env)
    assert json.loads(three.stdout)["outputs"][0]["outputs"] == alone.outputs
