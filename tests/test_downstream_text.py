"""What text a downstream task hands each encoder: normalised like the run's corpus for an
encoder built from that corpus, as the task gives it for a pretrained one."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from harness.protocols import TaskResult
from harness.spec.schema import Normalise
from harness.stages.encode import Encoded
from harness.stages.evaluate import evaluate_tasks
from harness.util.cache import Cache

TASK_TEXT = ["The Cat sat in 1999 .", "A DOG barked twice"]


class RecordingEncoder:
    """Remembers what it was asked to encode."""

    dim = 2

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, sentences: list[str], batch_size: int = 256) -> np.ndarray:
        self.seen += sentences
        return np.ones((len(sentences), self.dim), dtype=np.float32)


class OneTask:
    """A task that encodes its two sentences and scores nothing."""

    name, version = "text-task", "1"

    def files(self, data_dir: Path) -> list[Path]:
        return []

    def evaluate(self, encode: Any, data_dir: Path, **kwargs: Any) -> TaskResult:
        encode(TASK_TEXT)
        return TaskResult(task=self.name, metric="acc", score=0.0, scores={}, n_train=0,
                          n_dev=0, n_test=2, config="test", seed=1)


def run_task(tmp_path: Path, pretrained: bool) -> tuple[list[str], dict[str, Any]]:
    """The text the encoder saw, and the cache key parts of the task's result."""
    encoder = RecordingEncoder()
    encoded = Encoded(encoder="enc", keys={}, dim=2, directories={}, identity={"e": 1},
                      model=encoder, pretrained=pretrained)
    component = SimpleNamespace(identity=lambda: {"plugin": "p", "name": "text-task"},
                                plugin="p")
    spec = SimpleNamespace(
        components=lambda kind: [component], seed=1,
        downstream=SimpleNamespace(config="test", data_dir=tmp_path,
                                   task_seeds=lambda component, seeded=True: [1111]),
        encode=SimpleNamespace(batch_size=8),
        corpus=SimpleNamespace(normalise=Normalise(lowercase=True, digits="zero")))
    cache = Cache(root=tmp_path / "cache")
    ctx = SimpleNamespace(spec=spec, cache=cache, build_once=lambda c: OneTask(),
                          add_time=lambda stage, seconds: None, device="cpu", built={})
    evaluate_tasks(ctx, [encoded])  # type: ignore[arg-type]
    (meta,) = (tmp_path / "cache").rglob("meta.json")
    return encoder.seen, meta.read_text()


@pytest.mark.parametrize(("pretrained", "seen"), [
    (True, TASK_TEXT),
    (False, ["the cat sat in 0000 .", "a dog barked twice"]),
])
def test_task_text_is_normalised_only_for_encoders_built_from_the_corpus(
        tmp_path: Path, pretrained: bool, seen: list[str]) -> None:
    text, meta = run_task(tmp_path, pretrained)
    assert text == seen
    # The cached result says which text it was computed on.
    assert ('"normalise": null' in meta) is pretrained
