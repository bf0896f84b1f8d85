"""The artifact cache: keys, hits and misses, atomic completion, resumable partial builds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.errors import PluginError
from harness.util.cache import META_FILE, Cache, artifact_key
from harness.util.vectors import open_vectors, write_vectors


def test_key_depends_on_every_part_and_not_on_order() -> None:
    base = artifact_key("encode", {"a": 1, "b": {"x": [1, 2]}})
    assert base == artifact_key("encode", {"b": {"x": [1, 2]}, "a": 1})
    assert base != artifact_key("encode", {"a": 2, "b": {"x": [1, 2]}})
    assert base != artifact_key("encode", {"a": 1, "b": {"x": [2, 1]}})
    assert base != artifact_key("train", {"a": 1, "b": {"x": [1, 2]}})


def test_miss_builds_then_hit_reuses(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    calls: list[Path] = []

    def build(directory: Path) -> dict[str, int]:
        calls.append(directory)
        (directory / "out.txt").write_text("hello")
        return {"lines": 1}

    first = cache.produce("stage", {"k": 1}, build)
    second = cache.produce("stage", {"k": 1}, build)
    assert first == second and len(calls) == 1
    assert (first / "out.txt").read_text() == "hello"
    assert calls[0].name.endswith(".partial") and not calls[0].exists()
    assert json.loads((first / META_FILE).read_text())["summary"] == {"lines": 1}
    # built here, then asked for again: reused within the run, but no artifact of an earlier
    # run, so no hit (the run summary counts what earlier runs left)
    assert (cache.hits, cache.builds) == (0, 1)
    cache.produce("stage", {"k": 2}, build)
    assert len(calls) == 2
    again = Cache(tmp_path)  # a later run: both artifacts are hits, each counted once
    for _ in range(3):
        again.produce("stage", {"k": 1}, build)
        again.produce("stage", {"k": 2}, build)
    assert (again.hits, again.builds) == (2, 0) and len(calls) == 2


def test_failed_build_leaves_no_finished_artifact_and_resumes(tmp_path: Path) -> None:
    cache = Cache(tmp_path)

    def crash(directory: Path) -> None:
        (directory / "half.txt").write_text("first half")
        raise KeyboardInterrupt  # a run killed in the middle of the stage

    with pytest.raises(KeyboardInterrupt):
        cache.produce("stage", {"k": 1}, crash)
    key = artifact_key("stage", {"k": 1})
    assert not cache.exists("stage", key)
    seen: list[str] = []

    def resume(directory: Path) -> None:
        seen.append((directory / "half.txt").read_text())
        (directory / "whole.txt").write_text("done")

    final = cache.produce("stage", {"k": 1}, resume)
    assert seen == ["first half"]
    assert (final / "whole.txt").read_text() == "done" and cache.exists("stage", key)


def _encode(batch: list[str]) -> np.ndarray:
    return np.array([[len(s), s.count("a"), float(i)] for i, s in enumerate(batch)],
                    dtype=np.float32)


def test_vectors_are_written_incrementally_and_resume_after_a_kill(tmp_path: Path) -> None:
    sentences = [f"sentence {'a' * i}" for i in range(10)]
    calls = {"n": 0}

    def dying(batch: list[str]) -> np.ndarray:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return _encode(batch)

    path = tmp_path / "train.npy"
    with pytest.raises(KeyboardInterrupt):
        write_vectors(path, sentences, dying, dim=3, plugin="p", batch_size=3)
    progress = json.loads(path.with_suffix(".progress.json").read_text())
    assert progress["done"] == 6
    resumed: list[int] = []

    def counting(batch: list[str]) -> np.ndarray:
        resumed.append(len(batch))
        return _encode(batch)

    write_vectors(path, sentences, counting, dim=3, plugin="p", batch_size=3)
    assert resumed == [3, 1]  # only the rows not yet written
    expected = np.concatenate([_encode(sentences[i:i + 3]) for i in range(0, 10, 3)])
    assert np.array_equal(open_vectors(path), expected)
    assert not path.with_suffix(".progress.json").exists()


def test_float16_storage(tmp_path: Path) -> None:
    path = tmp_path / "v.npy"
    write_vectors(path, ["a b", "c"], _encode, dim=3, plugin="p", dtype="float16")
    assert open_vectors(path).dtype == np.float16


def test_float16_storage_refuses_values_it_cannot_hold(tmp_path: Path) -> None:
    def large(batch):
        return np.full((len(batch), 3), 7e4, dtype=np.float32)  # above float16's 65504

    with pytest.raises(PluginError, match=r"plugin 'p': encode returned a value \(row 0 .*"
                                          r"largest magnitude 70000\) that float16 cannot hold"):
        write_vectors(tmp_path / "v.npy", ["a b", "c"], large, dim=3, plugin="p",
                      dtype="float16")


@pytest.mark.parametrize("bad, message", [
    (lambda batch: np.zeros((len(batch), 2), dtype=np.float32), "shape"),
    (lambda batch: np.full((len(batch), 3), np.nan, dtype=np.float32), "non-finite"),
    (lambda batch: np.zeros((len(batch), 3), dtype=np.int64), "dtype"),
])
def test_malformed_encoder_output_names_the_plugin(tmp_path: Path, bad, message: str) -> None:
    with pytest.raises(PluginError, match=rf"plugin 'my-plugin'.*{message}"):
        write_vectors(tmp_path / "v.npy", ["a", "b"], bad, dim=3, plugin="my-plugin")


def test_a_read_only_cache_finds_what_is_there_and_builds_nothing(tmp_path: Path) -> None:
    """What an analysis's run reads through: a finished artifact is returned (its hit counted
    in the run's cache), a missing one raises naming the stage, and nothing is built."""
    from harness.errors import CacheMiss

    cache = Cache(tmp_path)
    built = cache.produce("train", {"k": 1}, lambda d: (d / "w").write_text("x") and None)
    reader = cache.read_only()
    assert reader.produce("train", {"k": 1}, lambda d: pytest.fail("rebuilt")) == built
    with pytest.raises(CacheMiss, match=r"train avg \(.*is not there.*jobs"):
        reader.produce("train", {"k": 2}, lambda d: pytest.fail("built"), label="avg")
    assert not cache.path("train", artifact_key("train", {"k": 2})).exists()
    assert (cache.builds, reader.builds) == (1, 0)
    with pytest.raises(CacheMiss):
        reader.install("train", "key", lambda d: None)
