"""Every registered analysis, imported through the registry as a run imports it, passes the
conformance kit on a tiny real run; the first-party ones fill the results fields the runner
used to fill itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.protocols import Analysis, BuildContext
from harness.registry.loader import load_registry
from harness.testing import check_analysis

pytestmark = pytest.mark.usefixtures("one_thread")

FILLS = {
    "rankings": {"rankings"},
    "floor": {"floor"},
    "lengths": {"lengths"},
    "downstream": {"downstream", "downstream_source", "downstream_origin",
                   "downstream_details", "downstream_missing"},
    "correlation": {"correlations"},
    "probes": {"probes"},
    "privacy": {"privacy"},
}


def test_every_registered_analysis_conforms(tmp_path: Path) -> None:
    registry = load_registry()
    infos = registry.in_order("analysis")
    assert [info.name for info in infos][:7] == list(FILLS)
    fields: dict[str, object] = {}
    for info in infos:
        analysis = registry.create("analysis", info.name, info.options(), BuildContext())
        assert isinstance(analysis, Analysis)
        # one workdir: the tiny run's artifacts are built once and reused by every check
        filled = check_analysis(analysis, tmp_path, options=info.options(),
                                fields={key: fields[key] for key in fields
                                        if any(key in FILLS[need] for need in info.needs)})
        if info.name in FILLS:
            assert set(filled) <= FILLS[info.name]
        fields.update(filled)
    # the tiny run has two encoders, a decoder each: avg, and the floor (a control, so one
    # encoder is under study and nothing is ranked)
    assert fields["rankings"] is None
    assert fields["floor"].encoder == "random-gaussian"  # type: ignore[union-attr]
    assert fields["lengths"].bins  # type: ignore[union-attr]
    assert fields["downstream"] == {}
    assert "too few encoders" in " ".join(fields["correlations"].notes)  # type: ignore[union-attr]
    assert fields.get("probes") is None  # the spec asks for no probe
    assert fields.get("privacy") is None  # nor any defence


def test_a_plugins_own_fields_are_kept_as_json_under_its_name() -> None:
    from harness.analyses.run import results_fields
    from harness.errors import PluginError
    from harness.results.model import RunResults

    fields = results_fields("my-count", {"floor": None, "count": 3, "per": {"a": 1.5}},
                            plugin="my-plugin")
    assert fields == {"floor": None, "analyses": {"my-count": {"count": 3, "per": {"a": 1.5}}}}
    assert RunResults(**fields).to_json()["analyses"] == {"my-count": {"count": 3,
                                                                       "per": {"a": 1.5}}}
    with pytest.raises(PluginError, match="plugin 'my-plugin'.*'my-count'.*cannot hold"):
        results_fields("my-count", {"when": object()}, plugin="my-plugin")
    with pytest.raises(PluginError, match="cannot hold"):
        results_fields("my-count", {"nan": float("nan")}, plugin="my-plugin")


def test_analyses_run_in_order_each_seeing_the_fields_before_it(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from harness.analyses.run import AnalysisRun, run_analyses

    seen = []

    class Recorder:
        def __init__(self, name: str) -> None:
            self.name = name

        def run(self, run):
            seen.append((self.name, sorted(run.fields), run.options))
            return {f"{self.name}-value": len(seen)}

        def sections(self, results, figures):
            return []

        def figures(self, results):
            return {}

    def entry(name: str) -> SimpleNamespace:
        return SimpleNamespace(name=name, plugin="p", settings=f"options of {name}",
                               analysis=Recorder(name))

    entries = [entry("first"), entry("second")]
    ctx = SimpleNamespace(build=lambda e: e.analysis)
    run = AnalysisRun(ctx=ctx, corpus=None, vocab=None, execution=None,  # type: ignore[arg-type]
                      out=tmp_path)
    filled = run_analyses(run, entries)  # type: ignore[arg-type]
    assert seen == [("first", [], "options of first"),
                    ("second", ["analyses"], "options of second")]
    assert filled == {"analyses": {"first": {"first-value": 1},
                                   "second": {"second-value": 2}}}


@pytest.mark.slow
def test_a_run_without_the_correlation_analysis_has_no_trace_of_it(tmp_path: Path) -> None:
    """The core reads an analysis only through what it declares: with `analyses: [rankings]`
    results.json holds no `correlations` field, and neither the report nor its tables mention
    a correlation; the rankings' own parts (its section, ranks.csv) are there."""
    import json

    from harness.registry.loader import load_registry
    from harness.runner import run_spec
    from harness.spec import load_spec
    from harness.testing.runs import TINY_SPEC
    from harness.util.cache import Cache

    path = tmp_path / "spec.yaml"
    spec = TINY_SPEC.replace("encoders: [avg,", "encoders: [avg, max,")  # two to rank
    path.write_text(spec + "analyses: [rankings]\nreport: {formats: [md, html, csv]}\n",
                    encoding="utf-8")
    out = tmp_path / "run"
    run_spec(load_spec(path, registry=load_registry()), out, cache=Cache(tmp_path / "cache"))
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert "correlations" not in results and "rankings" in results
    assert [a["name"] for a in results["spec"]["analyses"]] == ["rankings"]
    for name in ("report.md", "report.html"):
        text = (out / name).read_text(encoding="utf-8").lower()
        assert "correlation" not in text, name
        assert "rank" in text
    assert sorted(p.name for p in (out / "tables").iterdir()) == [
        "diagnostics.csv", "ranks.csv"]


def test_the_jobs_toolkit_names_the_spec_entries_it_lacks(tmp_path: Path) -> None:
    """`harness.plugin.encode`/`train_decoder` use the spec's own entries: a name the spec lacks,
    or more training sentences than the split holds, is a one-line error naming what there is,
    before anything is computed."""
    from harness.errors import HarnessError
    from harness.plugin import JobInputs, encode, train_decoder
    from harness.spec import load_spec
    from harness.stages.base import RunContext
    from harness.stages.corpus import Corpus
    from harness.stages.vocab import Vocab
    from harness.testing.runs import TINY_SPEC
    from harness.util.cache import Cache

    path = tmp_path / "spec.yaml"
    path.write_text(TINY_SPEC, encoding="utf-8")
    spec = load_spec(path, registry=load_registry())
    corpus = Corpus(key="c", train_key="t", test_key="s", fit_key="t", directory=tmp_path,
                    train=["a b"] * 10, test=[], test_raw=[])
    vocab = Vocab(key="v", vocab=None)  # type: ignore[arg-type]  # neither call reads it
    work = JobInputs(RunContext(spec=spec, cache=Cache(tmp_path / "cache")), corpus, vocab,
                     spec.decoders[0].settings)
    with pytest.raises(HarnessError, match=r"no encoder 'bert' in the spec \(avg"):
        encode(work, "bert")
    with pytest.raises(HarnessError, match="11 sentences, but the training split holds 10"):
        train_decoder(work, spec.decoders[0].name, None, sentences=11)  # type: ignore[arg-type]
    with pytest.raises(HarnessError, match=r"no decoder 'lstm' in the spec \(mos-lstm"):
        train_decoder(work, "lstm", None)  # type: ignore[arg-type]
    assert not (tmp_path / "cache").exists()
