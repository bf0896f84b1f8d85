"""The plugin system: loading entry points one by one, recording failures, filtering by env vars,
`harness list`, and a test per hook (datasette style: a hook without a `test_hook_<name>` test or
a mention in docs/plugins.md fails the suite).

Plugins come from fake entry points naming modules of `tests/fake_plugins/`; nothing is installed
here (tests/test_integration.py installs real packages).
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.errors import UnavailableComponentError, UnknownComponentError
from harness.protocols import BuildContext, PluginFailure
from harness.registry import hookspecs
from harness.registry.components import Registry
from harness.registry.loader import ALLOW_ENV, DISABLE_ENV, ENTRY_POINT_GROUP, load_registry
from harness.testing import check_encoder, check_metric

REPO = Path(__file__).resolve().parents[1]
HEAVY_MODULES = ("torch", "sentencepiece", "fasttext", "sacrebleu")


@pytest.fixture(autouse=True)
def plugin_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `tests.fake_plugins` importable and clear the plugin filter variables."""
    monkeypatch.syspath_prepend(str(REPO))
    monkeypatch.delenv(DISABLE_ENV, raising=False)
    monkeypatch.delenv(ALLOW_ENV, raising=False)


def fake(name: str, module: str) -> md.EntryPoint:
    """An entry point of group "harness" naming `tests.fake_plugins.<module>`."""
    return md.EntryPoint(name=name, value=f"tests.fake_plugins.{module}", group=ENTRY_POINT_GROUP)


def first_party() -> list[md.EntryPoint]:
    """The installed entry points of v2s-harness itself (its first-party plugins)."""
    return [ep for ep in md.entry_points(group=ENTRY_POINT_GROUP)
            if ep.dist is not None and ep.dist.name == "v2s-harness"]


def first_party_encoders() -> md.EntryPoint:
    (ep,) = [ep for ep in first_party() if ep.value == "harness_plugins.encoders"]
    return ep


def failure(registry: Registry, name: str) -> PluginFailure:
    """The recorded failure of plugin `name` (fails the test if there is none)."""
    found = [f for f in registry.failures if f.name == name]
    assert found, f"no failure recorded for {name!r}; failures: {registry.failures}"
    return found[0]


def registered(registry: Registry) -> set[tuple[str, str]]:
    return {(info.kind, info.name) for info in registry}


# ------------------------------------------------------------------------------------- the hooks


def test_hook_register_encoders() -> None:
    registry = load_registry(entry_points=[fake("fake-good", "good_encoder"), *first_party()])
    assert registry.failures == []
    info = registry.get("encoder", "fake-length")
    assert (info.plugin, info.description) == ("fake-good", "fake plugin: token and character counts")
    assert info.options.__name__ == "LengthOptions"
    encoder = registry.create("encoder", "fake-length", info.options(scale=2.0), BuildContext())
    check_encoder(encoder)
    assert encoder.encode(["a b c"]).tolist() == [[6.0, 10.0]]
    # First-party encoders come through the same hook, with their distribution's metadata.
    avg = registry.get("encoder", "avg")
    assert (avg.plugin, avg.distribution) == ("harness-encoders", "v2s-harness")
    assert avg.version == md.version("v2s-harness")


def test_hook_register_decoders() -> None:
    registry = load_registry(entry_points=[fake("fake-both", "decoder_and_metric"), *first_party()])
    assert registry.failures == []
    info = registry.get("decoder", "fake-decoder")
    assert info.plugin == "fake-both"
    assert info.status() == "unavailable: run `harness data fetch fake-decoder` first"
    with pytest.raises(UnavailableComponentError, match="harness data fetch fake-decoder"):
        registry.create("decoder", "fake-decoder", info.options(), BuildContext())
    assert "mos-lstm" in registry.names("decoder")


def test_hook_register_metrics() -> None:
    registry = load_registry(entry_points=[fake("fake-both", "decoder_and_metric"), *first_party()])
    info = registry.get("metric", "fake-exact")
    assert (info.plugin, info.status()) == ("fake-both", "ok")
    check_metric(registry.create("metric", "fake-exact", info.options(), BuildContext()))
    assert {"id", "perm", "id-perm", "bleu"} <= set(registry.names("metric"))


def test_hook_register_tasks() -> None:
    registry = load_registry(entry_points=[fake("fake-task", "task"), *first_party()])
    info = registry.get("task", "fake-task")
    assert (info.kind, info.plugin, info.status()) == ("task", "fake-task", "ok")
    assert registry.failures == []


def test_hook_register_executors(tmp_path: Path) -> None:
    from harness.executors import Executor
    from harness.spec import load_spec

    registry = load_registry(entry_points=[fake("fake-executor", "executor"), *first_party()])
    assert registry.failures == []
    info = registry.get("executor", "fake-inline")
    assert (info.kind, info.plugin, info.status()) == ("executor", "fake-executor", "ok")
    executor = registry.create("executor", "fake-inline", info.options(label="x"), BuildContext())
    assert isinstance(executor, Executor) and executor.label == "x"
    assert {"local", "ray"} <= set(registry.names("executor"))
    # a spec names it like any component, with its own options, validated by its own class
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: t\ncorpus: {train: {generate: quickstart, sentences: 50}, "
                    "test: {generate: quickstart, sentences: 10}}\nencoders: [avg]\n"
                    "executor: {name: fake-inline, label: nightly}\n", encoding="utf-8")
    loaded = load_spec(spec, registry=registry)
    assert (loaded.executor.name, loaded.executor.settings.label) == ("fake-inline", "nightly")


def test_hook_register_defences() -> None:
    from harness.protocols import Defence
    from harness.testing import check_defence

    registry = load_registry(entry_points=first_party())
    assert registry.failures == []
    assert registry.names("defence") == ["binarise", "gaussian", "gaussian-dp", "laplace", "pca",
                                         "quantise", "rotation"]
    info = registry.get("defence", "laplace")
    assert (info.kind, info.plugin, info.options.LEVEL) == ("defence", "harness-defences",
                                                          "epsilon")
    defence = registry.create("defence", "laplace", info.options(epsilon=0.5), BuildContext())
    assert isinstance(defence, Defence) and check_defence(defence)
    assert "epsilon 0.5" in defence.describe()


def test_hook_register_attacks() -> None:
    from harness.protocols import Attack, threat_model
    from harness.testing import check_attack

    registry = load_registry(entry_points=first_party())
    assert registry.failures == []
    assert registry.names("attack") == ["align", "bag-of-words", "corrector", "decoder", "nearest",
                                        "oracle", "prior", "rerank"]
    info = registry.get("attack", "align")
    assert (info.kind, info.plugin) == ("attack", "harness-attacks")
    attack = registry.create("attack", "align", info.options(pairs=5), BuildContext())
    assert isinstance(attack, Attack) and threat_model(attack).leaked == 5
    assert len(check_attack(attack)) == 5


def test_hook_register_analyses(tmp_path: Path) -> None:
    from harness.errors import SpecError
    from harness.protocols import Analysis
    from harness.spec import load_spec

    registry = load_registry(entry_points=[fake("fake-analysis", "analysis"), *first_party()])
    assert registry.failures == []
    info = registry.get("analysis", "fake-count")
    assert (info.kind, info.plugin, info.status(), info.needs) == (
        "analysis", "fake-analysis", "ok", ("downstream",))
    analysis = registry.create("analysis", "fake-count", info.options(label="n"), BuildContext())
    assert isinstance(analysis, Analysis) and analysis.label == "n"
    first = ["rankings", "floor", "lengths", "downstream", "correlation", "probes", "privacy"]
    assert set(registry.names("analysis")) == {*first, "fake-count"}
    head = ("name: t\ncorpus: {train: {generate: quickstart, sentences: 50}, "
            "test: {generate: quickstart, sentences: 10}}\nencoders: [avg]\n")
    spec = tmp_path / "spec.yaml"
    # `all` (the default): the first-party analyses in order, then the plugin's
    spec.write_text(head, encoding="utf-8")
    assert [a.name for a in load_spec(spec, registry=registry).analyses] == [*first, "fake-count"]
    # a list: each after those it needs, options validated by its own class
    spec.write_text(head + "analyses: [{name: fake-count, label: tally}, downstream]\n",
                    encoding="utf-8")
    loaded = load_spec(spec, registry=registry).analyses
    assert [a.name for a in loaded] == ["downstream", "fake-count"]
    assert loaded[1].settings.label == "tally"
    spec.write_text(head + "analyses: [fake-count]\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"spec.yaml:4.*needs the analysis 'downstream'"):
        load_spec(spec, registry=registry)
    spec.write_text(head + "analyses: [fake-cuont]\n", encoding="utf-8")
    with pytest.raises(SpecError, match="did you mean 'fake-count'"):
        load_spec(spec, registry=registry)


def test_hook_register_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    """A third-party plugin adds a command and a `data` subcommand; `harness` runs them with
    the core's -v/--debug and one-line errors and lists them with the core's commands."""
    import harness.registry.loader
    from harness.cli import main

    registry = load_registry(entry_points=[fake("fake-command", "command"), *first_party()])
    assert registry.failures == []
    assert {path: info.plugin for path, info in registry.commands.items()} == {
        "compare": "harness-analyses", "generate": "harness-analyses",
        "analogy": "harness-analyses", "leaderboard": "harness-analyses",
        "data senteval": "harness-tasks", "fake-hello": "fake-command",
        "data fake-fetch": "fake-command"}
    assert registry.get("encoder", "fake-command-encoder").plugin == "fake-command"
    monkeypatch.setattr(harness.registry.loader, "load_registry", lambda: registry)
    runner = CliRunner()
    done = runner.invoke(main, ["fake-hello", "world", "--shout"])
    assert (done.exit_code, done.stdout) == (0, "HELLO WORLD\n")
    failed = runner.invoke(main, ["fake-hello", "nobody"])
    assert (failed.exit_code, failed.stderr) == (2, "error: nobody to greet\n")
    usage = runner.invoke(main, ["fake-hello", "--help"], prog_name="harness").stdout
    assert usage.startswith("Usage: harness fake-hello [OPTIONS] WHO")
    assert all(option in usage for option in ("--shout", "--verbose", "--debug"))
    listed = runner.invoke(main, ["--help"]).stdout
    assert any(line.split() == ["fake-hello", "Greet", "WHO", "(a", "fake", "plugin's",
                                "command)."] for line in listed.splitlines())
    assert "generate" in listed and "run" in listed
    data = runner.invoke(main, ["data", "--help"]).stdout
    assert all(name in data for name in ("fake-fetch", "senteval", "newscrawl"))
    fetched = runner.invoke(main, ["data", "fake-fetch", "--dir", "somewhere"])
    assert (fetched.exit_code, fetched.stdout) == (0, "fetched into somewhere\n")
    # without the plugin the command is unknown, as click says of any unknown name
    monkeypatch.setattr(harness.registry.loader, "load_registry", lambda: load_registry(first_party()))
    missing = runner.invoke(main, ["fake-hello", "world"])
    assert missing.exit_code == 2 and "No such command 'fake-hello'" in missing.stderr


def hookspec_names() -> list[str]:
    """Every hook declared in harness.registry.hookspecs."""
    return sorted(name for name, value in vars(hookspecs).items()
                  if callable(value) and hasattr(value, "harness_spec"))


def test_every_hook_has_a_test() -> None:
    names = hookspec_names()
    assert names, "found no hookspecs in harness.registry.hookspecs"
    missing = [name for name in names if f"test_hook_{name}" not in globals()]
    assert not missing, f"add a test_hook_<name> test in {__file__} for: {missing}"
    assert sorted([*hookspecs.HOOK_FOR_KIND.values(), hookspecs.COMMAND_HOOK]) == names


def test_every_hook_is_documented() -> None:
    guide = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    missing = [name for name in hookspec_names() if name not in guide]
    assert not missing, f"document these hooks in docs/plugins.md: {missing}"


# -------------------------------------------------------------------------- failures stay local

BROKEN = [
    ("fake-import", "import_fails", "import failed: ImportError: fake plugin needs "
                                    "'a-missing-dependency'"),
    ("fake-raises", "raises", "register_encoders raised RuntimeError: fake plugin exploded "
                              "while registering"),
    ("fake-wrong-type", "wrong_type", "encoder 'fake-wrong-type': factory must be callable, got str"),
    ("fake-misspelt", "misspelt_hook", "unknown hook 'register_encoder'"),
]


@pytest.mark.parametrize(("name", "module", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_plugin_is_recorded_and_others_load(name: str, module: str, message: str) -> None:
    registry = load_registry(entry_points=[fake(name, module), fake("fake-good", "good_encoder"),
                                           *first_party()])
    assert [f.name for f in registry.failures] == [name]
    assert message in failure(registry, name).error
    assert {("encoder", "fake-length"), ("encoder", "avg"), ("decoder", "mos-lstm"),
            ("metric", "id")} <= registered(registry)
    assert all(info.plugin != name for info in registry)


def test_all_broken_plugins_at_once() -> None:
    entry_points = [fake(name, module) for name, module, _ in BROKEN]
    registry = load_registry(entry_points=[*entry_points, fake("fake-good", "good_encoder")])
    assert sorted(f.name for f in registry.failures) == sorted(name for name, _, _ in BROKEN)
    for name, _, message in BROKEN:
        assert message in failure(registry, name).error
    assert registered(registry) == {("encoder", "fake-length")}


def test_registrations_are_all_or_nothing() -> None:
    # `raises` registers fake-partial before raising: it must not land.
    registry = load_registry(entry_points=[fake("fake-raises", "raises")])
    assert registered(registry) == set()
    assert failure(registry, "fake-raises").error.startswith("register_encoders raised")


def test_duplicate_name_is_refused_naming_both_plugins() -> None:
    registry = load_registry(entry_points=[fake("fake-duplicate", "duplicate"),
                                           first_party_encoders()])
    assert len(registry.failures) == 1
    (refused,) = registry.failures
    assert "'avg'" in refused.error
    assert "'fake-duplicate'" in refused.error and "'harness-encoders'" in refused.error
    # The refused plugin left nothing behind; the other one registered everything it had.
    assert all(info.plugin != refused.name for info in registry)
    winner = registry.get("encoder", "avg").plugin
    assert {winner, refused.name} == {"fake-duplicate", "harness-encoders"}


def test_first_party_plugin_wins_a_duplicate_name() -> None:
    registry = load_registry(entry_points=[fake("fake-duplicate", "duplicate"),
                                           first_party_encoders()])
    assert registry.get("encoder", "avg").plugin == "harness-encoders"
    assert [f.name for f in registry.failures] == ["fake-duplicate"]
    assert ("encoder", "fake-extra") not in registered(registry)


def test_unknown_name_suggests_close_names() -> None:
    registry = load_registry(entry_points=first_party())
    with pytest.raises(UnknownComponentError, match="did you mean 'avg'") as caught:
        registry.get("encoder", "avgg")
    assert caught.value.suggestions == ["avg"]
    assert "harness list" in str(caught.value)
    with pytest.raises(UnknownComponentError, match="known: .*mos-lstm"):
        registry.get("decoder", "transformer-xl")


def test_unknown_name_names_the_plugins_that_failed_to_load() -> None:
    # A spec naming a component of a plugin that failed to import learns that it failed, and
    # why, not only that the name is unknown.
    registry = load_registry(entry_points=[fake("fake-import", "import_fails"),
                                           first_party_encoders()])
    with pytest.raises(UnknownComponentError) as caught:
        registry.get("encoder", "tfidf-svd")
    (failure,) = registry.failures
    message = str(caught.value)
    assert message.startswith("unknown encoder 'tfidf-svd': known: ")
    assert (f"; 1 plugin failed to load, and may be where it comes from: plugin 'fake-import' "
            f"({failure.distribution} {failure.version}): {failure.error} (see `harness list`)"
            ) in message
    assert "import failed" in failure.error and "\n" not in message


# ---------------------------------------------------------------------- environment variables

ALL_FAKES = [fake("fake-good", "good_encoder"), fake("fake-both", "decoder_and_metric"),
             fake("fake-import", "import_fails"), fake("fake-raises", "raises")]


def test_disable_plugins_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DISABLE_ENV, "fake-import, fake-raises,,fake-both ")
    registry = load_registry(entry_points=ALL_FAKES)
    assert registry.failures == []  # disabled plugins are never imported
    assert registered(registry) == {("encoder", "fake-length")}


def test_allow_plugins_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW_ENV, "fake-both,fake-import")
    registry = load_registry(entry_points=ALL_FAKES)
    assert [f.name for f in registry.failures] == ["fake-import"]
    assert registered(registry) == {("decoder", "fake-decoder"), ("metric", "fake-exact")}


def test_disable_wins_over_allow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW_ENV, "fake-good,fake-both")
    monkeypatch.setenv(DISABLE_ENV, "fake-both")
    registry = load_registry(entry_points=ALL_FAKES)
    assert registered(registry) == {("encoder", "fake-length")}


def test_a_misspelt_plugin_name_in_the_variables_is_reported(monkeypatch: pytest.MonkeyPatch,
                                                             caplog) -> None:
    monkeypatch.setenv(ALLOW_ENV, "fake-good,fake-godo")
    with caplog.at_level("WARNING", logger="harness.registry.loader"):
        registry = load_registry(entry_points=ALL_FAKES)
    assert registered(registry) == {("encoder", "fake-length")}
    assert "HARNESS_PLUGINS names 'fake-godo', which is no installed plugin" in caplog.text


def test_empty_allow_list_loads_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOW_ENV, "")
    registry = load_registry(entry_points=ALL_FAKES)
    assert registered(registry) == set() and registry.failures == []


# ------------------------------------------------------------------------------- harness list


def test_list_command_text() -> None:
    from harness.cli import main

    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 0, result.output
    for heading in ("Encoders", "Decoders", "Metrics"):
        assert heading in result.stdout
    for name in ("avg", "mos-lstm", "id-perm", "bleu"):
        assert name in result.stdout


def test_list_command_json_schema() -> None:
    from harness.cli import main

    result = CliRunner().invoke(main, ["list", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # the DESIGN keys, plus "tasks" (downstream tasks) as an extension
    assert set(data) == {"encoders", "decoders", "metrics", "tasks", "defences", "attacks",
                         "analyses",
                         "executors", "failed_plugins"}
    assert {e["name"]: e["needs"] for e in data["analyses"]}["correlation"] == ["downstream"]
    # an analysis's spec section and results fields, as it declares them (AnalysisParts)
    assert {e["name"]: (e["section"], e["results"]) for e in data["analyses"]} == {
        "rankings": (None, ["rankings"]), "floor": (None, ["floor"]),
        "lengths": ("breakdown", ["lengths"]), "downstream": (None, []),
        "correlation": ("correlation", ["correlations"]), "probes": ("probes", ["probes"]),
        "privacy": ("privacy", ["privacy"])}
    assert {e["name"] for e in data["executors"]} == {"local", "ray"}
    for kind in ("encoders", "decoders", "metrics"):
        assert data[kind], f"no {kind} listed"
        for entry in data[kind]:
            # the DESIGN keys, plus "needs" on metrics (what a metric is handed beyond the
            # samples, e.g. ["encoder"]) and "control" and "pretrained" on encoders as
            # extensions
            extension = {"metrics": {"needs"},
                         "encoders": {"control", "pretrained"}}.get(kind, set())
            assert set(entry) == {"name", "plugin", "version", "description", "status", *extension}
            assert entry["status"] == "ok" or entry["status"].startswith("unavailable: ")
    for entry in data["failed_plugins"]:  # the DESIGN's keys; `version` is an extension
        assert {"name", "distribution", "error"} <= set(entry)
    assert "avg" in [e["name"] for e in data["encoders"]]
    assert "mos-lstm" in [e["name"] for e in data["decoders"]]
    controls = {e["name"] for e in data["encoders"] if e["control"]}
    assert controls == {"random-gaussian", "random-lstm"}
    pretrained = {e["name"] for e in data["encoders"] if e["pretrained"]}
    assert pretrained == {"sbert", "infersent", "quickthought", "laser", "mpnet",
                          "minilm-l3-onnx", "e5-small-q4", "glove-avg", "glove-max",
                          "glove-hier", "glove-avg-max-hier", "glove-borep", "glove-esn"}


def test_list_strict_fails_when_a_plugin_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    """For plugin authors' CI: the listing is printed either way; --strict exits with 2 and one
    error line naming the failed plugins when any failed, 0 when none did."""
    import harness.registry.loader
    from harness.cli import main

    broken = load_registry(entry_points=[fake("fake-good", "good_encoder"),
                                         fake("fake-raises", "raises")])
    assert [f.name for f in broken.failures] == ["fake-raises"]
    monkeypatch.setattr(harness.registry.loader, "load_registry", lambda: broken)
    lenient = CliRunner().invoke(main, ["list"])
    assert lenient.exit_code == 0 and "fake-raises" in lenient.stdout
    strict = CliRunner().invoke(main, ["list", "--strict"])
    assert strict.exit_code == 2 and "Failed plugins (1)" in strict.stdout
    assert strict.stderr == ("error: --strict: 1 plugin failed to load (fake-raises); see failed "
                             "plugins above\n")
    healthy = load_registry(entry_points=[fake("fake-good", "good_encoder")])
    monkeypatch.setattr(harness.registry.loader, "load_registry", lambda: healthy)
    assert CliRunner().invoke(main, ["list", "--strict", "--json"]).exit_code == 0


def test_list_command_imports_nothing_heavy(tmp_path: Path) -> None:
    code = textwrap.dedent(f"""
        import json, sys
        from harness.cli import main
        main(["list"], standalone_mode=False)
        print(json.dumps([m for m in {HEAVY_MODULES!r} if m in sys.modules]))
        """)
    env = {k: v for k, v in os.environ.items() if k not in (DISABLE_ENV, ALLOW_ENV)}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert imported == [], f"`harness list` imported {imported}; keep them inside factories"


# ----------------------------------------------------- faults only building would otherwise show


def test_the_kit_refuses_a_default_of_the_wrong_type_and_an_unimportable_factory() -> None:
    import tests.fake_plugins.latent_faults as latent
    from harness.testing import check_registration

    with pytest.raises(AssertionError) as caught:
        check_registration(latent, "latent")
    message = str(caught.value)
    assert ("plugin 'latent': encoder 'bad-default': option `dim` has the default 'big', which "
            "its own type refuses (Input should be a valid integer, unable to parse string as an "
            "integer); fix the default in BadDefaultOptions") in message
    assert ("plugin 'latent': encoder 'missing-module': its factory imports "
            "tests.fake_plugins.no_such_implementation, which fails here: "
            "ModuleNotFoundError") in message
    assert "scale" not in message  # a valid default is not reported


def test_validate_names_the_plugin_and_option_before_any_run(tmp_path: Path) -> None:
    from harness.spec import load_spec, preflight

    registry = load_registry(entry_points=[*first_party(), fake("latent", "latent_faults")])
    assert registry.failures == []  # it registers cleanly: only the checks find the faults
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: t\ncorpus:\n  train: {generate: quickstart, sentences: 10}\n"
                    "  test: {generate: quickstart, sentences: 5}\n"
                    "encoders: [avg, bad-default, missing-module]\n"
                    "decoders: [mos-lstm]\nmetrics: [id]\n")
    problems = [str(p) for p in preflight(load_spec(spec, registry=registry))]
    assert problems[0].startswith(f"{spec}:5: encoders.1.name: plugin 'latent': encoder "
                                  "'bad-default': option `dim` has the default 'big'")
    assert problems[1].startswith(f"{spec}:5: encoders.2.name: plugin 'latent': encoder "
                                  "'missing-module': its factory imports "
                                  "tests.fake_plugins.no_such_implementation")
    assert len(problems) == 2


def test_every_first_party_component_passes_the_checks() -> None:
    from harness.registry.checks import component_problems, factory_imports

    registry = load_registry(entry_points=first_party())
    assert [p for info in registry for p in component_problems(info)] == []
    # the checks do see the modules first-party factories import inside their bodies
    assert factory_imports(registry.get("encoder", "avg").factory) == [
        "harness_plugins.encoders.pooling"]


def editable_distribution(root: Path, source: str) -> md.EntryPoint:
    """The entry point of a plugin package `v2s_editable_probe` (its `__init__.py` holding
    `source`) installed in editable mode (PEP 660: `direct_url.json` says `editable`)."""
    package = root / "src" / "v2s_editable_probe"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(source, encoding="utf-8")
    info = root / "v2s_editable_probe-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: v2s-editable-probe\n"
                                   "Version: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[harness]\nprobe = v2s_editable_probe\n",
                                           encoding="utf-8")
    (info / "direct_url.json").write_text(json.dumps(
        {"url": (root / "src").as_uri(), "dir_info": {"editable": True}}), encoding="utf-8")
    (ep,) = md.PathDistribution(info).entry_points
    return ep


def test_an_edited_editable_plugin_gets_a_new_version_and_so_new_cache_keys(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin installed with `pip install -e` is read where it is edited: its version in
    every cache key carries a digest of its source, so editing it builds its artifacts again
    instead of reading the old ones back."""
    good = (REPO / "tests" / "fake_plugins" / "good_encoder.py").read_text(encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    ep = editable_distribution(tmp_path, good)
    first = load_registry([ep]).get("encoder", "fake-length")
    assert first.version.startswith("1.0+source.") and len(first.version) == len("1.0+source.") + 12
    assert load_registry([ep]).get("encoder", "fake-length").version == first.version
    ep = editable_distribution(tmp_path, good + "\n# an edit\n")
    edited = load_registry([ep]).get("encoder", "fake-length")
    assert edited.version != first.version and edited.version.startswith("1.0+source.")
    # installed as a wheel (no direct_url.json): the version as released
    (tmp_path / "v2s_editable_probe-1.0.dist-info" / "direct_url.json").unlink()
    (ep,) = md.PathDistribution(tmp_path / "v2s_editable_probe-1.0.dist-info").entry_points
    assert load_registry([ep]).get("encoder", "fake-length").version == "1.0"
