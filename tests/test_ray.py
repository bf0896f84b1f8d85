"""The Ray executor on a real local Ray instance (2 CPUs): the same results as the local
executor, a job whose worker is killed mid-training retried from its checkpoint, and a job that
fails for good named while the others' results are kept.

Marked `ray` (about a minute and a half); `pytest -m "not ray"` leaves them out.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from harness.errors import HarnessError
from harness.protocols import Options
from harness.registry.components import make_info
from harness.registry.loader import load_registry
from harness.runner import run_spec
from harness.spec import load_spec
from harness.util.cache import Cache

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("one_thread")]
ray = pytest.importorskip("ray", reason='the Ray executor needs pip install "v2s-harness[ray]"')

REPO = Path(__file__).resolve().parent.parent
JOB_TITLE = "ray::harness-encoder-job"

SPEC = """
name: ray-small
seed: 3
device: cpu
corpus:
  train: {generate: quickstart, sentences: 800}
  test: {generate: quickstart, sentences: 40, seed: 9}
  normalise: {lowercase: true, digits: zero}
vocab: {bpe_size: 200, dim: 16, epochs: 2}
encoders: [avg, hier]
decoders: [{name: mos-lstm, hidden: 32, epochs: 3, batch_size: 32, checkpoint_every: 5}]
generation: {beam: 2, max_len: 20}
metrics: [id, perm, bleu, token-f1:content]
downstream: {tasks: [{name: syn-topic, train: 100, dev: 40, test: 60}]}
report: {formats: [md]}
"""


@pytest.fixture(scope="module")
def cluster() -> Any:
    """A local Ray instance with 2 CPUs whose workers import this module as pytest did (the
    failing encoder below lives here)."""
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [
        str(REPO), str(Path(__file__).parent), os.environ.get("PYTHONPATH")]))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def write_spec(folder: Path, text: str = SPEC) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def metrics(results: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Each pair's metric values and intervals (what must not depend on the executor)."""
    return {(r["encoder"], r["decoder"]): {m: (v["value"], v["ci95"]) for m, v in
                                           r["metrics"].items()}
            for r in results["runs"]}


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """The spec's results with the local executor, and its cache."""
    root = tmp_path_factory.mktemp("local")
    spec = load_spec(write_spec(root), (), load_registry())
    return run_spec(spec, root / "run", cache=Cache(root / "cache")).to_json(), root / "cache"


@pytest.fixture(scope="module")
def local_results(local_run: tuple[dict[str, Any], Path]) -> dict[str, Any]:
    return local_run[0]


def vector_files(cache: Path) -> dict[str, bytes]:
    """Every vector file of the cache by artifact: `encode/KEY/SPLIT.npy` -> its bytes."""
    return {str(path.relative_to(cache)): path.read_bytes()
            for path in sorted(cache.glob("encode/*/*.npy"))}


def test_ray_gives_the_local_executors_results(cluster: Any, local_results: dict[str, Any],
                                               tmp_path: Path) -> None:
    spec = load_spec(write_spec(tmp_path), ("executor=ray",), load_registry())
    results = run_spec(spec, tmp_path / "run", cache=Cache(tmp_path / "cache")).to_json()
    assert metrics(results) == metrics(local_results)
    assert len(metrics(results)) == 2
    assert results["downstream"] == local_results["downstream"]
    assert results["correlations"]["diagnostics"] == local_results["correlations"]["diagnostics"]
    assert results["examples"] == local_results["examples"]
    assert results["provenance"]["cache"]["builds"] == local_results["provenance"]["cache"][
        "builds"]  # the jobs' artifacts are counted once, as the local run counts them
    on_disk = sorted(p.name for p in (tmp_path / "run" / "samples").iterdir())
    assert on_disk == ["avg__mos-lstm.jsonl", "hier__mos-lstm.jsonl"]


def test_sharded_encoding_writes_the_unsharded_vectors(
        cluster: Any, local_run: tuple[dict[str, Any], Path], tmp_path: Path) -> None:
    """Each vector file encoded in 3 shards (the job one, two Ray tasks), batches of 64 rows:
    byte for byte the files of the local, unsharded run, and the same results."""
    spec = load_spec(write_spec(tmp_path), ("executor={name: ray, shards: 3}",
                                            "encode.batch_size=64"), load_registry())
    results = run_spec(spec, tmp_path / "run", cache=Cache(tmp_path / "cache")).to_json()
    unsharded = load_spec(write_spec(tmp_path / "local"), ("encode.batch_size=64",),
                          load_registry())
    run_spec(unsharded, tmp_path / "local" / "run", cache=Cache(tmp_path / "local" / "cache"))
    sharded, expected = vector_files(tmp_path / "cache"), vector_files(tmp_path / "local" / "cache")
    assert len(expected) == 4 and sharded == expected
    metas = [json.loads(p.read_text()) for p in (tmp_path / "cache").glob("encode/*/meta.json")]
    assert sorted(m["summary"]["shards"] for m in metas) == [1, 1, 3, 3]  # 13 train batches
    assert metrics(results) == metrics(local_run[0])
    logs = tmp_path / "cache" / "logs" / "ray-small"
    assert sorted(p.name for p in logs.iterdir()) == ["avg.log", "hier.log"]
    assert "job avg: done on cpu" in (logs / "avg.log").read_text()


def test_a_job_encodes_the_shards_whose_tasks_cannot_start(
        cluster: Any, local_run: tuple[dict[str, Any], Path], tmp_path: Path) -> None:
    """A job holding every CPU (as a job holds the GPU its shard tasks would need) does not
    wait for them: it cancels those not started and encodes their shards itself."""
    spec = load_spec(write_spec(tmp_path), ("executor={name: ray, shards: 2, cpus: 2}",
                                            "encoders=[avg]"), load_registry())
    results = run_spec(spec, tmp_path / "run", cache=Cache(tmp_path / "cache")).to_json()
    assert metrics(results) == {("avg", "mos-lstm"): metrics(local_run[0])[("avg", "mos-lstm")]}
    expected = vector_files(local_run[1])
    sharded = vector_files(tmp_path / "cache")
    assert sharded and all(expected[name] == data for name, data in sharded.items())
    metas = [json.loads(p.read_text()) for p in (tmp_path / "cache").glob("encode/*/meta.json")]
    assert sorted(m["summary"]["shards"] for m in metas) == [1, 2]
    assert not list((tmp_path / "cache").glob("encode/*/*.claimed"))
    job_log = (tmp_path / "cache" / "logs" / "ray-small" / "avg.log").read_text()
    assert "encoder 'avg' train rows 512-800: its task had not started; encoded by the job" \
        in job_log


def test_every_node_must_see_the_inputs(cluster: Any, tmp_path: Path) -> None:
    from harness.executors.ray import check_nodes
    from harness.executors.reach import Input

    there = tmp_path / "corpus.txt"
    there.write_text("a b\n")
    check_nodes(ray, [Input("corpus.train.path", str(there))], str(tmp_path))
    with pytest.raises(HarnessError) as refused:
        check_nodes(ray, [Input("corpus.train.path", str(there)),
                          Input("vocab.model", str(tmp_path / "gone.model"))], str(tmp_path))
    message = str(refused.value)
    assert "\n" not in message
    assert f"cannot see {tmp_path / 'gone.model'} (vocab.model)" in message
    assert message.startswith("executor ray: node ")


def job_processes() -> list[int]:
    """PIDs of the worker processes running a harness job now (Ray titles them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if command.startswith(JOB_TITLE.encode()):
                found.append(int(entry.name))
    return found


def kill_at_first_checkpoint(cache: Path, killed: list[int], stop: threading.Event) -> None:
    """SIGKILL the job's worker once its decoder has written a checkpoint."""
    while not stop.is_set():
        if list(cache.glob("train/*.partial/checkpoints/*")):
            for pid in job_processes():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            return
        time.sleep(0.05)


def test_the_ray_executor_conforms(cluster: Any, tmp_path: Path) -> None:
    from harness.executors.ray import RayExecutor
    from harness.testing import check_executor

    check_executor(RayExecutor(), tmp_path)


def test_a_killed_worker_is_retried_and_resumes_from_its_checkpoint(
        cluster: Any, local_results: dict[str, Any], tmp_path: Path) -> None:
    spec = load_spec(write_spec(tmp_path), ("executor={name: ray, retries: 2}",
                                            "encoders=[avg]"), load_registry())
    killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(target=kill_at_first_checkpoint,
                              args=(tmp_path / "cache", killed, stop))
    killer.start()
    try:
        results = run_spec(spec, tmp_path / "run", cache=Cache(tmp_path / "cache")).to_json()
    finally:
        stop.set()
        killer.join()
    assert killed, "no job worker was found to kill"
    assert metrics(results) == {("avg", "mos-lstm"): metrics(local_results)[("avg", "mos-lstm")]}
    log = (next((tmp_path / "cache" / "train").glob("*/train.jsonl"))).read_text()
    assert [json.loads(line)["epoch"] for line in log.splitlines()
            if json.loads(line).get("event") == "epoch"] == [1, 2, 3]


class _BrokenEncoder:
    """An encoder whose weights are corrupt: every job it runs in fails the same way."""

    dim = 4

    def fingerprint(self) -> str:
        return "broken/1"

    def encode(self, sentences: list[str], batch_size: int = 256) -> Any:
        raise ValueError("weights corrupt")


def _build_broken(options: Options, context: Any) -> _BrokenEncoder:
    return _BrokenEncoder()


def test_a_failing_job_is_named_and_the_others_results_are_kept(cluster: Any,
                                                                tmp_path: Path) -> None:
    registry = load_registry()
    registry.add(make_info("encoder", "broken", _build_broken, plugin="bad-plugin"))
    spec = load_spec(write_spec(tmp_path), ("executor=ray", "encoders=[avg, broken]"), registry)
    with pytest.raises(HarnessError) as failure:
        run_spec(spec, tmp_path / "run", cache=Cache(tmp_path / "cache"))
    message = str(failure.value)
    assert "\n" not in message
    assert message.startswith("1 of 2 encoder jobs failed")
    assert "plugin 'bad-plugin': encoder 'broken': encode: ValueError: weights corrupt" in message
    written = json.loads((tmp_path / "run" / "results.json").read_text())
    assert [(r["encoder"], r["decoder"]) for r in written["runs"]] == [("avg", "mos-lstm")]
    assert set(written["failures"]) == {"broken"}
    assert "avg" in written["downstream"] and "broken" not in written["downstream"]


ANALYSED = ("privacy.defences=[{name: gaussian, levels: [0.5, 2.0]}]", "privacy.leakage=bleu",
            "privacy.canaries=0", "privacy.attacks=[decoder, {name: align, pairs: 20}]",
            "probes.noise={scales: [0.5], sentences: 8}")
"""The privacy analysis (an attacker per encoder and defence level, and ALGEN's alignment,
which reads the other encoder's vectors and decoder as its surrogate; no canaries, whose floor,
random-gaussian, the spec lacks) and a probe."""


def test_the_analyses_jobs_run_as_ray_tasks_of_their_own_as_they_run_locally(
        cluster: Any, tmp_path: Path) -> None:
    """Each planned job (the privacy analysis's attacker clean and at each level, the probes'
    decoding) runs as a Ray task of its own (counted from its log), after the jobs it needs (the
    surrogate's decoder is found built, not trained again), with the local executor's privacy
    and probe results."""
    local = run_spec(load_spec(write_spec(tmp_path / "local"), ANALYSED, load_registry()),
                     tmp_path / "local" / "run",
                     cache=Cache(tmp_path / "local" / "cache")).to_json()
    spec = load_spec(write_spec(tmp_path), (*ANALYSED, "executor=ray"), load_registry())
    results = run_spec(spec, tmp_path / "run", cache=Cache(tmp_path / "cache")).to_json()
    assert results["privacy"] == local["privacy"] and len(results["privacy"]["points"]) == 2
    assert results["probes"] == local["probes"] and len(results["probes"]) == 2
    logs = tmp_path / "cache" / "logs" / "ray-small"
    for encoder, other in (("avg", "hier"), ("hier", "avg")):
        # its own decoder, in its job
        assert (logs / f"{encoder}.log").read_text().count(
            f"train {encoder} -> mos-lstm: building") == 1
        # the clean attacker is that decoder; each level's attacker trains in its own task
        clean = (logs / f"privacy.{encoder}.clean.log").read_text()
        assert "-> mos-lstm: building" not in clean and "align" in clean
        for level in (0, 1):
            found = (logs / f"privacy.{encoder}.gaussian@{level}.log").read_text()
            assert found.count(f"train {encoder} -> mos-lstm: building") == 1
            assert f"train {other} -> mos-lstm: building" not in found  # the surrogate's
        assert (logs / f"probes.{encoder}.log").read_text().count(
            f"probes {encoder} -> mos-lstm: building") == 1

