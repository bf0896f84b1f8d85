"""A Ray cluster of two nodes on this machine, each started by its own `ray start` process (a
head and a second node that joins it), and a run across both: the encoder jobs land on
different nodes, each encodes its vectors in two shards, each writes its log to the cache, and
the results are the local executor's.

Marked `ray` (about a minute); `pytest -m "not ray"` leaves them out.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.registry.loader import load_registry
from harness.runner import run_spec
from harness.spec import load_spec
from harness.util.cache import Cache

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("one_thread")]
ray = pytest.importorskip("ray", reason='the Ray executor needs pip install "v2s-harness[ray]"')

REPO = Path(__file__).resolve().parent.parent
# Ray turns on token authentication for a cluster started where a token file exists (from any
# earlier local Ray instance); this throwaway cluster and its clients do without.
NO_TOKEN = {"RAY_AUTH_MODE": "disabled"}
SPEC = """
name: two-nodes
seed: 5
device: cpu
corpus:
  train: {generate: quickstart, sentences: 600}
  test: {generate: quickstart, sentences: 40, seed: 9}
vocab: {bpe_size: 200, dim: 16, epochs: 2}
encoders: [avg, hier]
encode: {batch_size: 64}
decoders: [{name: mos-lstm, hidden: 32, epochs: 2, batch_size: 32}]
generation: {beam: 2, max_len: 20}
metrics: [id, bleu]
report: {formats: [md]}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ray_start(*arguments: str) -> subprocess.Popen[bytes]:
    """`ray start ... --block` as a process of its own (stopping it stops its node)."""
    command = shutil.which("ray", path=str(Path(sys.executable).parent)) or "ray"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")])), "OMP_NUM_THREADS": "1",
        **NO_TOKEN}
    return subprocess.Popen([command, "start", "--block", "--disable-usage-stats",
                             "--num-cpus=2", *arguments],
                            env=environment, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def alive_nodes(address: str) -> int:
    """How many nodes of the cluster at `address` are alive (0 while it cannot be reached)."""
    probe = subprocess.run([sys.executable, "-c", (
        f"import ray; ray.init(address={address!r}, log_to_driver=False); "
        "print(sum(n['Alive'] for n in ray.nodes()))")],
        capture_output=True, text=True, check=False, env={**os.environ, **NO_TOKEN})
    return int(probe.stdout.split()[-1]) if probe.returncode == 0 and probe.stdout else 0


@pytest.fixture(scope="module")
def two_nodes() -> Iterator[str]:
    """The address of a two-node Ray cluster on this machine."""
    if ray.is_initialized():
        ray.shutdown()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in NO_TOKEN.items():
            patch.setenv(name, value)
        yield from _two_nodes()


def _two_nodes() -> Iterator[str]:
    address = f"127.0.0.1:{free_port()}"
    head = ray_start("--head", f"--port={address.rsplit(':', 1)[1]}", "--include-dashboard=false")
    nodes = [head]
    try:
        deadline = time.monotonic() + 120
        while alive_nodes(address) < 1:
            assert head.poll() is None and time.monotonic() < deadline, "the head did not start"
            time.sleep(1)
        nodes.append(ray_start(f"--address={address}"))
        while alive_nodes(address) < 2:
            assert nodes[1].poll() is None and time.monotonic() < deadline, \
                "the second node did not join"
            time.sleep(1)
        yield address
    finally:
        for node in reversed(nodes):  # `ray start --block` stops its node on SIGTERM
            if node.poll() is not None:
                continue
            os.killpg(node.pid, signal.SIGTERM)
            try:
                node.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(node.pid, signal.SIGKILL)
        forget(address)


def forget(address: str) -> None:
    """Remove the note `ray start --head` leaves for later `ray.init()` calls to connect to
    this cluster (`ray stop` would remove it, and stop every Ray process on the machine)."""
    from ray._common.utils import get_ray_address_file

    note = Path(get_ray_address_file(None))
    port = address.rsplit(":", 1)[1]
    if note.exists() and note.read_text().strip().endswith(f":{port}"):
        note.unlink()


def write_spec(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spec.yaml").write_text(SPEC, encoding="utf-8")
    return folder / "spec.yaml"


def scores(results: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["encoder"], r["decoder"]): {m: v["value"] for m, v in r["metrics"].items()}
            for r in results["runs"]}


def test_a_run_across_two_nodes(two_nodes: str, tmp_path: Path) -> None:
    option = f"executor={{name: ray, address: '{two_nodes}', cpus: 2, shards: 2}}"
    spec = load_spec(write_spec(tmp_path / "ray"), (option,), load_registry())
    cache = tmp_path / "ray" / "cache"
    results = run_spec(spec, tmp_path / "ray" / "run", cache=Cache(cache)).to_json()

    local = load_spec(write_spec(tmp_path / "local"), (), load_registry())
    expected = run_spec(local, tmp_path / "local" / "run",
                        cache=Cache(tmp_path / "local" / "cache")).to_json()
    assert scores(results) == scores(expected) and len(scores(results)) == 2
    for path in (tmp_path / "local" / "cache").glob("encode/*/*.npy"):
        assert (cache / path.relative_to(tmp_path / "local" / "cache")).read_bytes() == \
            path.read_bytes()
    sharded = [json.loads(p.read_text())["summary"]["shards"]
               for p in cache.glob("encode/*/meta.json")]
    assert sorted(sharded) == [1, 1, 2, 2]  # the training split's 10 batches, in two shards

    logs = {name: (cache / "logs" / "two-nodes" / f"{name}.log").read_text()
            for name in ("avg", "hier")}
    # Each job needs a whole node's 2 CPUs: the two ran on different nodes at once.
    nodes = {name: text.split("[", 1)[1].split("]", 1)[0] for name, text in logs.items()}
    assert nodes["avg"] != nodes["hier"]
    assert all(f"job {name}: done on cpu" in text for name, text in logs.items())
