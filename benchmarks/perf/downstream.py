"""SentEval's classifier fits one at a time (as SentEval trains them) and all at once (what a run
uses), side by side in one process on the same vectors, threads and seeds; one JSON line per task.

    OMP_NUM_THREADS=2 python benchmarks/perf/downstream.py \\
        --data-dir ../shared/data/senteval/downstream --seeds 5 --dim 384

Each task is evaluated by `senteval_task(name).validations(...)` (the procedure `evaluate_seeds`
runs, with the chosen L2 penalties) at `--seeds` classifier seeds from 1111, once with the
default trainer (`batched.stacked`: every fit of a round at once, every seed together) and once
with `batched.one_at_a_time` (SentEvalClassifier per fit, seed after seed). The vectors are
computed before either is timed, so the seconds are the task's own: loading, features,
classifiers.

The encoder: `--encoder hashed` (default) averages fixed random Gaussian vectors of the lower-cased
tokens (`--dim` wide), cheap to compute; `--encoder sbert` is the bundled all-MiniLM-L6-v2 (its
vectors kept in `--vectors DIR`, as senteval_fidelity.py keeps them).

Each line: task, seeds, n (examples), the seconds the encoder took for the task's sentences (0
for vectors kept from an earlier call), the seconds of each side and their ratio, per seed both
sides' scores, their difference in test examples, and whether the chosen L2 penalties are the
same; and fit by fit, how many of the fits differ in their best dev accuracy or their passes.
A task without a classifier (STS12-16, SICK-R and STSB, which train SentEval's relatedness
model) is timed once and says so. Last line: the suite's totals and the machine's float32 matmul
rate (`matmul.py`). `--no-baseline` times the batched side alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from matmul import rate  # noqa: E402

from harness_plugins.tasks.senteval.batched import one_at_a_time, trainer_for  # noqa: E402
from harness_plugins.tasks.senteval.configs import get_config  # noqa: E402
from harness_plugins.tasks.senteval.tasks import (  # noqa: E402
    FAMILIES,
    Classification,
    Vectors,
    senteval_task,
)


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


class Remembered:
    """An encoder's vectors of the lists it was asked for, computed once: both sides of a task
    read the same vectors, and neither pays for them."""

    def __init__(self, encode) -> None:
        self.encode, self.seen = encode, {}

    def __call__(self, sentences: list[str]) -> np.ndarray:
        key = tuple(sentences)
        if key not in self.seen:
            self.seen = {key: self.encode(sentences)}
        return self.seen[key]


class Recorded:
    """A trainer that keeps what it trained: every fit's best dev accuracy and passes."""

    def __init__(self, trainer) -> None:
        self.trainer, self.fits = trainer, []

    def __call__(self, *args):
        fitted = self.trainer(*args)
        self.fits += [(accuracy, passes) for group in fitted
                      for accuracy, passes in zip(group.dev_accuracy, group.passes)]
        return fitted


def _timed(call):
    started = time.perf_counter()
    value = call()
    return value, round(time.perf_counter() - started, 2)


def warm_up(device: str) -> None:
    """Train a few tiny fits with both trainers, so that neither side's timing includes the
    imports and first calls that the first evaluation in a process pays."""
    from harness_plugins.tasks.senteval import evaluation
    from harness_plugins.tasks.senteval.configs import CONFIGS

    rng = np.random.default_rng(0)
    x = rng.standard_normal((60, 8)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    for trainer in (None, one_at_a_time):
        evaluation.inner_kfold(x, y, 2, CONFIGS["prototyping"], seeds=[1], device=device,
                               trainer=trainer)


def compare(task, encode, data_dir: Path, config: str, seeds: list[int], device: str,
            baseline: bool) -> dict:
    """One task's line: each side's seconds, and what each side scored at each seed."""
    data = task.load(data_dir)
    # The vectors are computed now, outside the timings (the encoder's cost, beside them).
    _, encode_seconds = _timed(lambda: Vectors(encode, data, task.name))
    line = {"task": task.name, "seeds": len(seeds), "n": sum(data.sizes().values()),
            "encode_seconds": encode_seconds}
    if not isinstance(task, Classification):
        results, line["seconds_batched"] = _timed(lambda: task.evaluate_seeds(
            encode, data_dir, config=config, seeds=seeds, device=device))
        line["classifier"] = False
        line["scores"] = [r.score for r in results]
        return line
    together = Recorded(trainer_for(get_config(config).classifier))
    batched, line["seconds_batched"] = _timed(lambda: replace(task, trainer=together).validations(
        encode, data_dir, config=config, seeds=seeds, device=device))
    line["classifier"] = True
    line["scores_batched"] = [v.test_accuracy for v in batched.validations]
    if not baseline:
        return line
    single = Recorded(one_at_a_time)
    alone, line["seconds_one_at_a_time"] = _timed(lambda: replace(
        task, trainer=single).validations(encode, data_dir, config=config, seeds=seeds,
                                          device=device))
    # Fit by fit (in the same order on both sides): how many differ in their best dev accuracy
    # or in the passes they made before stopping.
    line["fits"] = len(together.fits)
    line["fits_differing"] = sum(a != b for a, b in zip(together.fits, single.fits))
    line["ratio"] = round(line["seconds_one_at_a_time"] / line["seconds_batched"], 1)
    line["scores_one_at_a_time"] = [v.test_accuracy for v in alone.validations]
    # One test example is 100 / n_test points (for the nested k-fold, 100 / fold size averaged
    # over 5 folds: the same 100 / n_test).
    example = 100.0 / batched.sizes[2]
    line["difference_in_examples"] = [
        round((b.test_accuracy - a.test_accuracy) / example, 2)
        for b, a in zip(batched.validations, alone.validations)]
    line["same_l2"] = [b.l2reg == a.l2reg
                       for b, a in zip(batched.validations, alone.validations)]
    line["dev_batched"] = [v.dev_accuracy for v in batched.validations]
    line["dev_one_at_a_time"] = [v.dev_accuracy for v in alone.validations]
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data/senteval/downstream"))
    parser.add_argument("--tasks", default=None, help="comma-separated task names (default: all)")
    parser.add_argument("--config", default="prototyping", choices=["prototyping", "literature"])
    parser.add_argument("--seed", type=int, default=1111, help="the first classifier seed")
    parser.add_argument("--seeds", type=int, default=5, help="classifier seeds from --seed on")
    parser.add_argument("--encoder", default="hashed", choices=["hashed", "sbert"])
    parser.add_argument("--dim", type=int, default=384, help="the hashed encoder's width")
    parser.add_argument("--vectors", type=Path, default=Path(".vectors"),
                        help="where sbert's vectors are kept")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--no-baseline", dest="baseline", action="store_false")
    args = parser.parse_args(argv)

    if args.encoder == "sbert":
        from senteval_common import CachedEncoder

        encoder = CachedEncoder(args.vectors / "sbert-prepared.npz")
    else:
        encoder = HashedBagOfWords(dim=args.dim)
    names = args.tasks.split(",") if args.tasks else list(FAMILIES)
    seeds = list(range(args.seed, args.seed + args.seeds))
    totals = {"seconds_batched": 0.0, "seconds_one_at_a_time": 0.0}
    warm_up(args.device)
    for name in names:
        line = compare(senteval_task(name), Remembered(encoder), args.data_dir, args.config,
                       seeds, args.device, args.baseline)
        line.update(config=args.config, encoder=args.encoder)
        for key in totals:
            # A task without a classifier is timed once and counts on both sides.
            totals[key] += line.get(key, line["seconds_batched"])
        print(json.dumps(line), flush=True)
    summary = {"total_seconds_batched": round(totals["seconds_batched"], 1)}
    if args.baseline:
        summary["total_seconds_one_at_a_time"] = round(totals["seconds_one_at_a_time"], 1)
        summary["ratio"] = round(totals["seconds_one_at_a_time"] / totals["seconds_batched"], 1)
    summary["matmul"] = rate(threads=torch.get_num_threads(), repeats=5)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
