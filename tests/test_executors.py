"""Executors by name: the local executor passes the conformance kit's `check_executor`, which
refuses executors that break what the runner relies on; the runner takes the device from the
executor."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.executors import Execution
from harness.executors.local import LocalExecutor
from harness.testing import check_executor


def test_the_local_executor_conforms(tmp_path: Path) -> None:
    check_executor(LocalExecutor(), tmp_path)


class Reversed(LocalExecutor):
    """Runs the jobs right, returns them in the wrong order."""

    def run(self, ctx: Any, corpus: Any, vocab: Any) -> Execution:
        execution = super().run(ctx, corpus, vocab)
        return replace(execution, outcomes=execution.outcomes[::-1])


class Remote(LocalExecutor):
    """Claims a GPU for the driver."""

    def device(self, requested: str) -> str:
        return "cuda"


class Dropping(LocalExecutor):
    """Loses the last encoder's job and says so."""

    def run(self, ctx: Any, corpus: Any, vocab: Any) -> Execution:
        execution = super().run(ctx, corpus, vocab)
        return Execution(execution.outcomes[:-1], {"random-gaussian": "lost"})


@pytest.mark.parametrize(("executor", "message"), [
    (Reversed(), "in the spec's encoder order"),
    (Remote(), "device('cpu') returned 'cuda'"),
    (Dropping(), "reported failures"),
    (object(), "has no device() method"),
])
def test_check_executor_refuses_what_the_runner_cannot_use(executor: Any, message: str,
                                                           tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match=re.escape(message)):
        check_executor(executor, tmp_path)


def test_the_local_executor_decides_the_device_here() -> None:
    from harness.errors import HarnessError

    assert LocalExecutor().device("cpu") == "cpu"
    with pytest.raises(HarnessError, match="cuda:7"):
        LocalExecutor().device("cuda:7")
