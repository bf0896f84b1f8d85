"""Shared test set-up: one torch thread (the CI machine has 2 shared cores) and test markers."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_configure(config) -> None:  # noqa: ANN001 - pytest hook
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
    config.addinivalue_line(
        "markers", "integration: installs the example plugin packages with pip")
