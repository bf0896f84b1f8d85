"""Encoding one encoder's corpus in shards on Ray against one process: wall time and ratios.

    python benchmarks/perf/sharded_encoding.py --corpus ../shared/data/newstest-en/train.txt \\
        --encoder sbert --cpus 2 --json sharded.json

The corpus and vocabulary are prepared once; then each configuration encodes the training
split into a cache of its own (a copy of the prepared one), through the harness's own code:

- `local`: the local executor's encode stage in this process, on `--cpus` torch threads (what
  a user runs without Ray);
- `ray-1`: one Ray task with `--cpus` CPUs encodes it whole (the Ray executor, `shards: 1`);
- `ray-N`: the same task with `--cpus / N` CPUs each, encoding shard 1 itself while N-1 Ray
  tasks encode the others (`shards: N`; each process uses as many torch threads as it has CPUs).

Every configuration must write the same bytes (checked). Prints one JSON object: seconds per
configuration, sentences per second, and each one's speed-up over `local`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
import yaml

from harness.executors.jobs import job_setup
from harness.executors.ray import RayShards, Resources, use_cpus
from harness.registry.loader import load_registry
from harness.spec import Spec, load_spec
from harness.stages.base import RunContext
from harness.stages.corpus import prepare_corpus
from harness.stages.encode import build_encoder, encode_corpus
from harness.stages.vocab import prepare_vocab
from harness.util.cache import Cache


def spec_for(args: argparse.Namespace, folder: Path) -> Spec:
    """The benchmark's spec: the corpus file as the training split, one encoder."""
    text = {"name": "sharded-encoding", "seed": 1, "device": "cpu",
            "corpus": {"train": {"path": str(args.corpus.resolve()), "limit": args.sentences},
                       "test": {"generate": "quickstart", "sentences": 10}},
            "vocab": {"bpe_size": 2000, "dim": 50, "epochs": 1},
            "encoders": [args.encoder], "decoders": ["mos-lstm"],
            "encode": {"batch_size": args.batch_size}}
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(text), encoding="utf-8")
    return load_spec(path, (), load_registry())


def encode_job(spec: Spec, cache_root: str, shards: int, cpus: float) -> float:
    """Encode the spec's encoder in this process (a Ray task), sharded `shards` ways; return
    the encode stage's seconds."""
    use_cpus(cpus)
    ctx, encoder, corpus, vocab = job_setup(spec, spec.encoders[0].name, Path(cache_root))
    if shards > 1:
        ctx.shards = RayShards(spec, cache_root, corpus, shards, Resources(cpus, 0.0, 0))
    encode_corpus(ctx, encoder, corpus, vocab)
    return ctx.timings["encode"]


def warm(spec: Spec, cache_root: str) -> None:
    """Import what a job imports, and build the encoder once, in a Ray worker."""
    from harness.stages.encode import build_encoder

    ctx, encoder, corpus, vocab = job_setup(spec, spec.encoders[0].name, Path(cache_root))
    build_encoder(ctx, encoder, corpus, vocab)


def vectors(cache: Path) -> bytes:
    """The training split's vector file of the only encoder in `cache`."""
    (path,) = [p for p in cache.glob("encode/*/train.npy")]
    return path.read_bytes()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--sentences", type=int, default=None, help="first N lines only")
    parser.add_argument("--encoder", default="sbert")
    parser.add_argument("--shards", default="2", help="shard counts to time, e.g. 2,4")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the machine to use")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    import ray

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        spec = spec_for(args, root)
        prepared = root / "prepared"
        ctx = RunContext(spec=spec, cache=Cache(prepared))
        corpus = prepare_corpus(ctx)
        prepare_vocab(ctx, corpus)
        # The fit of a trainable encoder is not part of encoding: done once, copied to all.
        setup, encoder, corpus, vocab = job_setup(spec, spec.encoders[0].name, prepared)
        build_encoder(setup, encoder, corpus, vocab)

        seconds: dict[str, float] = {}
        caches: dict[str, Path] = {}
        torch.set_num_threads(args.cpus)
        caches["local"] = root / "local"
        shutil.copytree(prepared, caches["local"])
        started = time.perf_counter()
        encode_corpus(RunContext(spec=spec, cache=Cache(caches["local"])), encoder, corpus, vocab)
        seconds["local"] = time.perf_counter() - started

        ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
        try:
            # Worker processes that have imported the harness and the encoder's libraries, as
            # a cluster's are after its first job.
            ray.get([ray.remote(warm).options(num_cpus=1).remote(spec, str(prepared))
                     for _ in range(args.cpus)])
            for shards in [1, *(int(s) for s in args.shards.split(","))]:
                label, cpus = f"ray-{shards}", args.cpus / shards
                caches[label] = root / label
                shutil.copytree(prepared, caches[label])
                task = ray.remote(encode_job).options(num_cpus=cpus)
                started = time.perf_counter()
                ray.get(task.remote(spec, str(caches[label]), shards, cpus))
                seconds[label] = time.perf_counter() - started
        finally:
            ray.shutdown()
        expected = vectors(caches["local"])
        identical = all(vectors(cache) == expected for cache in caches.values())
        sentences = len(corpus.train)
    result: dict[str, Any] = {
        "encoder": args.encoder, "sentences": sentences, "cpus": args.cpus,
        "batch_size": args.batch_size, "identical_vectors": identical,
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
        "sentences_per_s": {k: round(sentences / v, 1) for k, v in seconds.items()},
        "speedup_over_local": {k: round(seconds["local"] / v, 3) for k, v in seconds.items()},
        "speedup_over_ray_1": {k: round(seconds["ray-1"] / v, 3) for k, v in seconds.items()
                               if k.startswith("ray")}}
    print(json.dumps(result, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
