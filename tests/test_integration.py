"""Third-party plugins installed for real: `pip install` the example and the broken plugin
packages of tests/plugins/ into this interpreter's environment, then drive the `harness` command.

Marked `integration` (run with `pytest -m integration`); takes about half a minute. The packages
are uninstalled afterwards. Two sessions running this at once in one environment would step on
each other's installs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

HERE = Path(__file__).resolve().parent
PACKAGES = {"v2s-example-plugin": HERE / "plugins" / "example-plugin",
            "v2s-broken-plugin": HERE / "plugins" / "broken-plugin"}
BROKEN_ENTRY_POINTS = ("broken-import", "broken-register", "broken-type", "broken-hookname")

TINY_SPEC = """\
name: plugin-integration
seed: 1
device: cpu
corpus:
  train: {generate: quickstart, sentences: 600}
  test: {generate: quickstart, sentences: 60, seed: 2}
vocab: {bpe_size: 200, dim: 16, epochs: 1}
encoders: [avg, example-bow, example-idf]
decoders:
  - {name: mos-lstm, layers: 1, hidden: 32, epochs: 1}
generation: {beam: 2, max_len: 20}
metrics: [id, perm, id-perm, bleu, example-length]
report: {formats: [md]}
"""


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True,
                          timeout=300, check=False)


def harness(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the `harness` command of this interpreter."""
    return subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True,
                          text=True, timeout=600, env=env, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Install both plugin packages for the module's tests; uninstall them afterwards."""
    assert _pip("--version").returncode == 0, f"pip is not available for {sys.executable}"
    # Build from copies: setuptools writes build/ and *.egg-info next to setup.py.
    sources = tmp_path_factory.mktemp("plugin-sources")
    copies = [str(shutil.copytree(path, sources / path.name,
                                  ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                                "__pycache__")))
              for path in PACKAGES.values()]
    try:
        done = _pip("install", "--no-deps", "--no-build-isolation", "--no-input", *copies)
        assert done.returncode == 0, f"pip install failed:\n{done.stdout}\n{done.stderr}"
        yield
    finally:
        _pip("uninstall", "-y", *PACKAGES)


@pytest.fixture()
def clean_env() -> dict[str, str]:
    """This process's environment without plugin filters, on one OpenMP thread."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HARNESS_PLUGINS", "HARNESS_DISABLE_PLUGINS")}
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def test_list_shows_installed_and_failed_plugins(installed: None, clean_env: dict[str, str]) -> None:
    done = harness("list", env=clean_env)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "example-bow" in out and "example-length" in out
    executors = out[out.index("Executors ("):out.index("Failed plugins")]
    assert "example-processes" in executors and "local" in executors
    analyses = out[out.index("Analyses ("):out.index("Executors (")]
    assert "example-length-gap" in analyses and "correlation" in analyses
    failed = out[out.index("Failed plugins"):]
    for name in BROKEN_ENTRY_POINTS:
        assert name in failed
    assert "avg" in out and "mos-lstm" in out


def test_list_strict_exits_2_while_a_broken_plugin_is_installed(
        installed: None, clean_env: dict[str, str]) -> None:
    done = harness("list", "--strict", env=clean_env)
    assert done.returncode == 2 and "example-bow" in done.stdout
    assert done.stderr.startswith(f"error: --strict: {len(BROKEN_ENTRY_POINTS)} plugins failed")
    skip = {**clean_env, "HARNESS_DISABLE_PLUGINS": ",".join(BROKEN_ENTRY_POINTS)}
    assert harness("list", "--strict", env=skip).returncode == 0


def test_list_json_records_failures(installed: None, clean_env: dict[str, str]) -> None:
    done = harness("list", "--json", env=clean_env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    bow = {e["name"]: e for e in data["encoders"]}["example-bow"]
    assert (bow["plugin"], bow["version"], bow["status"]) == ("example", "0.1.0", "ok")
    idf = {e["name"]: e for e in data["encoders"]}["example-idf"]
    assert (idf["plugin"], idf["version"], idf["status"]) == ("example", "0.1.0", "ok")
    assert {e["name"] for e in data["metrics"]} >= {"example-length", "id", "bleu"}
    assert {e["name"] for e in data["executors"]} >= {"example-processes", "local", "ray"}
    gap = {e["name"]: e for e in data["analyses"]}["example-length-gap"]
    assert (gap["plugin"], gap["status"], gap["needs"]) == ("example", "ok", [])
    assert {e["name"] for e in data["analyses"]} >= {"downstream", "correlation", "probes"}
    failures = {f["name"]: f for f in data["failed_plugins"]
                if f["distribution"] == "v2s-broken-plugin"}
    assert set(failures) == set(BROKEN_ENTRY_POINTS)
    assert failures["broken-import"]["error"].startswith("import failed: ImportError")
    assert "RuntimeError" in failures["broken-register"]["error"]
    assert "factory must be callable" in failures["broken-type"]["error"]
    assert "register_encoder" in failures["broken-hookname"]["error"]
    names = {e["name"] for kind in ("encoders", "decoders", "metrics") for e in data[kind]}
    assert not names & {"broken-register-encoder", "broken-type-encoder",
                        "broken-hookname-encoder"}


def test_disable_env_hides_broken_plugins(installed: None, clean_env: dict[str, str]) -> None:
    env = {**clean_env, "HARNESS_DISABLE_PLUGINS": ",".join(BROKEN_ENTRY_POINTS)}
    data = json.loads(harness("list", "--json", env=env).stdout)
    assert not [f for f in data["failed_plugins"] if f["distribution"] == "v2s-broken-plugin"]
    assert "example-bow" in {e["name"] for e in data["encoders"]}


def test_run_with_third_party_encoder_and_metric(installed: None, clean_env: dict[str, str],
                                                 tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(TINY_SPEC, encoding="utf-8")
    env = {**clean_env, "HARNESS_CACHE": str(tmp_path / "cache")}
    done = harness("run", str(spec), "--out", str(tmp_path / "run"), env=env)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    results = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    runs = {(r["encoder"], r["decoder"]): r for r in results["runs"]}
    assert set(runs) == {("avg", "mos-lstm"), ("example-bow", "mos-lstm"),
                         ("example-idf", "mos-lstm")}
    for run in runs.values():
        assert set(run["metrics"]) == {"id", "perm", "id-perm", "bleu", "example-length"}
        length = run["metrics"]["example-length"]
        assert 0.0 <= length["value"] <= 100.0
        assert length["ci95"][0] <= length["ci95"][1]
    # `analyses: all` ran the plugin's analysis too, and the report shows its section
    gaps = results["length_gaps"]["pairs"]  # the typed field the analysis declares
    assert set(gaps) == {"avg", "example-bow", "example-idf"}
    assert "## Length gap (example plugin)" in (tmp_path / "run" / "report.md").read_text(
        encoding="utf-8")


def test_a_third_party_executor_gives_the_local_executors_results(
        installed: None, clean_env: dict[str, str], tmp_path: Path) -> None:
    """`example-processes` runs each job in a worker process through the one job assembly:
    the results equal the local executor's (each run on a cache of its own)."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(TINY_SPEC, encoding="utf-8")
    values = {}
    choices = {"local": (), "example-processes": ("--executor", "example-processes",
                                                  "--executor-option", "workers=2")}
    for executor, options in choices.items():
        env = {**clean_env, "HARNESS_CACHE": str(tmp_path / f"cache-{executor}")}
        done = harness("run", str(spec), "--out", str(tmp_path / executor), *options, env=env)
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        results = json.loads((tmp_path / executor / "results.json").read_text(encoding="utf-8"))
        assert results["spec"]["executor"]["name"] == executor
        values[executor] = {(r["encoder"], name): (m["value"], m["ci95"])
                            for r in results["runs"] for name, m in r["metrics"].items()}
    assert values["example-processes"] == values["local"]
    assert len(values["local"]) == 15  # 3 encoders x 5 metrics


def test_example_plugin_suite_passes_when_installed(installed: None,
                                                    clean_env: dict[str, str]) -> None:
    """The third party's own tests, conformance kit included, with nothing skipped."""
    suite = Path(__file__).parent / "plugins" / "example-plugin"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(suite)], capture_output=True, text=True, env=clean_env,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skipped" not in done.stdout and " passed" in done.stdout
