"""Vector files written in shards (`harness.util.vectors`): the plan, concurrent writers, resuming
per shard, and the encode stage with a shard runner giving the unsharded vectors."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from harness.errors import HarnessError
from harness.registry.loader import load_registry
from harness.spec import load_spec
from harness.stages.base import RunContext, ShardWork
from harness.stages.corpus import prepare_corpus
from harness.stages.encode import encode_corpus
from harness.stages.vocab import prepare_vocab
from harness.util.cache import Cache
from harness.util.vectors import (
    Shard,
    claim_shard,
    create_vector_file,
    finish_vector_file,
    open_vectors,
    plan_shards,
    shard_claimed,
    shard_done,
    write_shard,
    write_vectors,
)

SENTENCES = [f"sentence {i} " + "word " * (i % 7) for i in range(103)]


def encode(batch: Sequence[str]) -> np.ndarray:
    """A deterministic stand-in encoder: length, words and the number in each sentence."""
    return np.array([[len(s), len(s.split()), float(s.split()[1])] for s in batch], np.float32)


def test_the_plan_cuts_whole_batches_as_evenly_as_possible() -> None:
    # 103 rows in batches of 10: 11 batches (the last of 3 rows).
    assert plan_shards(103, 3, 10) == [Shard(0, 30), Shard(30, 70), Shard(70, 103)]
    assert plan_shards(103, 1, 10) == [Shard(0, 103)]
    assert plan_shards(103, 20, 10) == [Shard(10 * k, min(103, 10 * k + 10)) for k in range(11)]
    assert plan_shards(5, 4, 10) == [Shard(0, 5)]
    assert plan_shards(0, 3, 10) == [Shard(0, 0)]


def test_shards_written_at_once_give_the_unsharded_file(tmp_path: Path) -> None:
    write_vectors(tmp_path / "one.npy", SENTENCES, encode, dim=3, plugin="p", batch_size=10)
    path = tmp_path / "sharded.npy"
    plan = create_vector_file(path, len(SENTENCES), dim=3, shards=4, batch_size=10)
    assert len(plan) == 4
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda shard: write_shard(path, SENTENCES, shard, encode, dim=3,
                                                plugin="p", batch_size=10), plan))
    finish_vector_file(path, plan, len(SENTENCES))
    assert path.read_bytes() == (tmp_path / "one.npy").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.npy", "sharded.npy"]


def test_a_killed_shard_resumes_after_its_last_batch_and_keeps_the_plan(tmp_path: Path) -> None:
    path = tmp_path / "v.npy"
    plan = create_vector_file(path, len(SENTENCES), dim=3, shards=2, batch_size=10)
    assert plan == [Shard(0, 50), Shard(50, 103)]
    calls = {"n": 0}

    def dying(batch: Sequence[str]) -> np.ndarray:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # the second shard's worker killed in its third batch
        return encode(batch)

    with pytest.raises(KeyboardInterrupt):
        write_shard(path, SENTENCES, plan[1], dying, dim=3, plugin="p", batch_size=10)
    assert shard_done(path, plan[1], len(SENTENCES)) == 20
    progress = json.loads((tmp_path / "v.50-103.progress.json").read_text())
    assert progress == {"rows": 103, "dim": 3, "done": 20}
    # A rerun with another shard count resumes the recorded plan.
    assert create_vector_file(path, len(SENTENCES), dim=3, shards=5, batch_size=10) == plan
    seen: list[int] = []

    def counting(batch: Sequence[str]) -> np.ndarray:
        seen.append(len(batch))
        return encode(batch)

    for shard in plan:
        write_shard(path, SENTENCES, shard, counting, dim=3, plugin="p", batch_size=10)
    assert seen == [10] * 5 + [10, 10, 10, 3]  # the first shard whole, rows 70-103 of the second
    with pytest.raises(HarnessError, match="rows 103-104 were not written; run again"):
        finish_vector_file(path, [*plan, Shard(103, 104)], len(SENTENCES))
    finish_vector_file(path, plan, len(SENTENCES))
    np.testing.assert_array_equal(open_vectors(path), encode(SENTENCES))


def test_another_batch_size_makes_a_new_plan_and_claims_are_cleared(tmp_path: Path) -> None:
    """Shards are whole batches: a rerun with another batch size starts the file over rather
    than resume boundaries of the old batches; claims are forgotten with the old progress."""
    path = tmp_path / "v.npy"
    plan = create_vector_file(path, len(SENTENCES), dim=3, shards=2, batch_size=10)
    write_shard(path, SENTENCES, plan[0], encode, dim=3, plugin="p", batch_size=10)
    claim_shard(path, plan[1])
    assert shard_claimed(path, plan[1]) and shard_done(path, plan[0], len(SENTENCES)) == 50
    replanned = create_vector_file(path, len(SENTENCES), dim=3, shards=2, batch_size=8)
    assert replanned == [Shard(0, 48), Shard(48, 103)]  # 13 batches: 6 and 7
    assert shard_done(path, replanned[0], len(SENTENCES)) == 0
    assert not shard_claimed(path, plan[1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.npy", "v.shards.json"]


class ThreadShards:
    """A shard runner whose other processes are threads; records what it was given."""

    count = 3

    def __init__(self) -> None:
        self.calls: list[tuple[ShardWork, list[Shard]]] = []

    def run(self, work: ShardWork, pending: Sequence[Shard],
            local: Callable[[Shard], None]) -> None:
        self.calls.append((work, list(pending)))
        with ThreadPoolExecutor(len(pending)) as pool:
            list(pool.map(local, pending))


def test_the_encode_stage_with_a_shard_runner_writes_the_same_vectors(tmp_path: Path) -> None:
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(
        "name: shards\nseed: 1\ndevice: cpu\n"
        "corpus:\n  train: {generate: quickstart, sentences: 300}\n"
        "  test: {generate: quickstart, sentences: 20, seed: 9}\n"
        "vocab: {bpe_size: 150, dim: 8, epochs: 1}\n"
        "encoders: [avg]\ndecoders: [mos-lstm]\nencode: {batch_size: 32}\n", encoding="utf-8")
    spec = load_spec(spec_file, (), load_registry())
    results = {}
    for name, runner in (("plain", None), ("sharded", ThreadShards())):
        ctx = RunContext(spec=spec, cache=Cache(tmp_path / name), shards=runner)
        corpus = prepare_corpus(ctx)
        vocab = prepare_vocab(ctx, corpus)
        results[name] = encode_corpus(ctx, spec.encoders[0], corpus, vocab)
    plain, sharded = results["plain"], results["sharded"]
    assert plain.keys == sharded.keys
    for split in ("train", "test"):
        assert np.array_equal(plain.vectors(split), sharded.vectors(split))
    runner = ctx.shards
    assert isinstance(runner, ThreadShards)
    # Only the training split has more than one batch to share out (300 rows = 10 batches).
    ((work, pending),) = runner.calls
    assert (work.encoder, work.split, work.path.name) == ("avg", "train", "train.npy")
    assert pending == [Shard(0, 96), Shard(96, 192), Shard(192, 300)]
