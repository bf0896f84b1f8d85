"""Shared test set-up: one torch thread (the CI machine has 2 shared cores) and test markers."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
# cuBLAS reproducible under torch's deterministic algorithms (tests/test_gpu.py); read when CUDA
# starts, so set before any test touches it. No effect without a GPU.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")


@pytest.fixture(scope="module")
def one_thread() -> Iterator[None]:
    """One torch thread for the module, whatever set it before: tiny models run faster on one
    thread on a busy shared machine. torch is imported here, not at the top, so that tests of
    what `harness list` imports see a clean interpreter."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def pytest_configure(config) -> None:  # noqa: ANN001 - pytest hook
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
    config.addinivalue_line(
        "markers", "integration: installs the example plugin packages with pip")
    config.addinivalue_line(
        "markers", "ray: starts a local Ray instance (the Ray executor's tests)")
    config.addinivalue_line(
        "markers", "gpu: needs a CUDA device; skipped, with that reason, where torch sees none")
