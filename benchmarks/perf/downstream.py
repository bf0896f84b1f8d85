"""Time each downstream task with a cheap encoder; print one JSON object per task.

    OMP_NUM_THREADS=2 python benchmarks/perf/downstream.py \\
        --data-dir ../shared/data/senteval/downstream --config prototyping

The encoder is a random projection of a bag of words (each lower-cased token hashed to a fixed
Gaussian vector, vectors averaged): cheap to compute, so the time is the evaluation's own. Each
line: {"task", "config", "seconds", "n", "n_train", "n_dev", "n_test", "metric", "score",
"encode_seconds"}; a last line {"total_seconds"}. `--synthetic DIR` times the quickstart's
synthetic suite instead (generated into DIR).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from harness_plugins.tasks.senteval.tasks import FAMILIES, senteval_task


class HashedBagOfWords:
    """Mean of fixed random Gaussian vectors of the sentence's hashed tokens."""

    def __init__(self, dim: int = 300, buckets: int = 1 << 16, seed: int = 0) -> None:
        self.table = np.random.default_rng(seed).standard_normal((buckets, dim)).astype(np.float32)
        self.seconds = 0.0

    def __call__(self, sentences: list[str]) -> np.ndarray:
        started = time.perf_counter()
        out = np.zeros((len(sentences), self.table.shape[1]), dtype=np.float32)
        for row, sentence in enumerate(sentences):
            ids = [zlib.crc32(token.encode()) % len(self.table) for token in sentence.lower().split()]
            if ids:
                out[row] = self.table[ids].mean(axis=0)
        self.seconds += time.perf_counter() - started
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data/senteval/downstream"))
    parser.add_argument("--synthetic", type=Path, default=None,
                        help="time the synthetic suite, generated into this directory")
    parser.add_argument("--tasks", default=None, help="comma-separated task names (default: all)")
    parser.add_argument("--config", default="prototyping", choices=["prototyping", "literature"])
    parser.add_argument("--seed", type=int, default=1111)
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)

    if args.synthetic is not None:
        from harness_plugins.tasks.synthetic import SYNTHETIC_TASKS, synthetic_task

        names = args.tasks.split(",") if args.tasks else list(SYNTHETIC_TASKS)
        tasks = [synthetic_task(name) for name in names]
        directories = {}
        for task in tasks:
            directories[task.name] = args.synthetic / task.data_key()
            task.generate(directories[task.name])
    else:
        names = args.tasks.split(",") if args.tasks else list(FAMILIES)
        tasks = [senteval_task(name) for name in names]
        directories = {task.name: args.data_dir for task in tasks}

    total = time.perf_counter()
    for task in tasks:
        encoder = HashedBagOfWords(dim=args.dim)
        result = task.evaluate(encoder, directories[task.name], config=args.config,
                               seed=args.seed, device=args.device)
        print(json.dumps({"task": result.task, "config": result.config,
                          "seconds": result.seconds,
                          "n": sum(task.load(directories[task.name]).sizes().values()),
                          "n_train": result.n_train, "n_dev": result.n_dev,
                          "n_test": result.n_test, "metric": result.metric,
                          "score": round(result.score, 4),
                          "encode_seconds": round(encoder.seconds, 3)}), flush=True)
    print(json.dumps({"total_seconds": round(time.perf_counter() - total, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
