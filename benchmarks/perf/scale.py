"""Out-of-core training at the paper's size: the trainer's peak resident memory at 1.4M sentences
and at 100k, side by side.

In --workdir (default: a new directory under /tmp, deleted at the end unless --keep) it builds,
once (a later run with the same --workdir and sizes reuses them):

- `corpus.txt`: --sentences synthetic sentences (`harness.synthetic`, "quickstart", lower-cased,
  under 15 tokens); the small corpus is its first --small lines (the generator's output for a
  smaller count is a prefix of that for a larger one);
- `vocab/`: a subword vocabulary as the vocab stage trains one (sentencepiece BPE + fastText
  vectors, `harness.text.subwords.train_subword_vocab`) on the first --vocab-sentences sentences;
- `vectors-<N>.npy`: N x --dim float16 random normal values for each corpus size, written a
  chunk at a time through a memory map that is re-opened every 64k rows (the file is never whole
  in memory, nor mapped into this process for long). They measure the data path, not learning.

Then, for each size, a fresh process (so its peak is that of one training run) reads the corpus
file a chunk at a time into compact ids (`TokenIds.encode`), opens the vectors memory-mapped
(`harness.util.vectors.open_vectors`, as the train stage gets them) and trains the quickstart's
`mos-lstm` (1 x 256, one expert, trainable embeddings, standardised inputs, batch 64, lr 0.003)
with `harness.training.trainer.train_decoder` for one epoch over the whole corpus: the
validation split, the standardisation statistics over every training row, the length-bucketed
batch order and the batches read from the file are those of a real run. A forward pre-hook of
the benchmark stops it after --steps optimiser steps (the trainer has no such option, and
needs none).

Prints one JSON object: per size, the peak resident set (`ru_maxrss`; VmHWM, the process' own
peak, on Linux; the largest `psutil` sample when psutil is installed), the resident set before
training and at the first step, the seconds before the first step (split, statistics over all
training rows, batch order), steps/s and tokens/s, and the milliseconds per batch of the data
path alone (rows read, ids padded); the ratio of the peaks; the corpus and vector sizes; and the
machine's float32 matmul rate (10,000 x 356 x 1,024, 2 threads) before and after the runs. The
data are built in a child process too: `ru_maxrss` of a child counts the peak of its parent,
which therefore stays small.
`--baseline` adds a run of the large size on the old data path (ids as lists of lists, rows
read through the memory map) for comparison.

    python benchmarks/perf/scale.py --workdir /tmp/v2s-scale --keep     # ~11 GB on disk
    python benchmarks/perf/scale.py --sentences 200000 --small 20000 --dim 512 --steps 50
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from harness.protocols import BuildContext
from harness.results.provenance import cpu_model
from harness.synthetic import generate_sentences
from harness.text.subwords import SubwordVocab, train_subword_vocab
from harness.training.batches import bucketed_batches, padded_batches, split_validation
from harness.training.rows import file_rows
from harness.training.token_ids import TokenIds, sentence_lengths
from harness.training.trainer import train_decoder
from harness.util.vectors import open_vectors
from harness_plugins.decoders.lstm import build_mos_lstm
from harness_plugins.decoders.options import MosLstmOptions

try:
    import psutil
except ImportError:  # optional: ru_maxrss is always there
    psutil = None

MB = 1 << 20
WRITE_CHUNK = 16_384   # rows generated at a time
MAP_GROUP = 65_536     # rows written through one memory map before it is closed
QUICKSTART = {"layers": 1, "hidden": 256, "experts": 1, "freeze_embeddings": False,
              "standardise": True, "batch_size": 64, "lr": 0.003}


# --- measurements ------------------------------------------------------------------------------

def peak_rss_mb() -> float:
    """Return this process' peak resident set so far (MB), from getrusage."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / MB if sys.platform == "darwin" else peak / 1024  # bytes on macOS, else KB


def own_peak_rss_mb() -> float | None:
    """Return the peak resident set of this process' own memory (MB; VmHWM, Linux only).

    `ru_maxrss` of a process started by another also counts the starter's peak at the time
    (Linux keeps the larger of the two across `exec`); VmHWM does not.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def rss_mb() -> float | None:
    """Return this process' resident set now (MB), or None without psutil."""
    return psutil.Process().memory_info().rss / MB if psutil else None


def matmul_gflops(threads: int = 2, repeats: int = 10) -> float:
    """Return the best float32 GFLOP/s of a 10,000 x 356 x 1,024 matmul on `threads` threads."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        a, b = torch.randn(10_000, 356), torch.randn(356, 1_024)
        a @ b  # warm-up
        best = float("inf")
        for _ in range(repeats):
            started = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - started)
    finally:
        torch.set_num_threads(before)
    return 2 * 10_000 * 356 * 1_024 / best / 1e9


def commit() -> str:
    """The harness commit measured (`harness.results.provenance.git_commit`: `-dirty` when the tree had
    uncommitted changes), "unknown" when nothing knows it."""
    from harness.results.provenance import git_commit

    return git_commit() or "unknown"


# --- the data ----------------------------------------------------------------------------------

def corpus_lines(path: Path, count: int) -> Iterator[str]:
    """Yield the first `count` lines of the corpus file, one at a time."""
    with path.open(encoding="utf-8") as handle:
        for line in itertools.islice(handle, count):
            yield line.rstrip("\n")


def write_random_vectors(path: Path, rows: int, dim: int, seed: int) -> None:
    """Write a (rows, dim) float16 .npy of random normal values through a memory map, a chunk at
    a time; the map is closed every MAP_GROUP rows, so the pages written leave the resident
    set."""
    np.lib.format.open_memmap(path, mode="w+", dtype=np.float16, shape=(rows, dim)).flush()
    rng = np.random.default_rng(seed)
    for group in range(0, rows, MAP_GROUP):
        array = np.load(path, mmap_mode="r+")
        for start in range(group, min(group + MAP_GROUP, rows), WRITE_CHUNK):
            count = min(WRITE_CHUNK, rows - start)
            array[start:start + count] = rng.standard_normal((count, dim), dtype=np.float32)
        array.flush()
        del array


def prepare(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Build what the workdir lacks (corpus, vocabulary, vector files); return its description."""
    wanted = {"sentences": args.sentences, "small": args.small, "dim": args.dim,
              "seed": args.seed, "bpe_size": args.bpe_size,
              "vocab_sentences": args.vocab_sentences}
    marker = workdir / "prepared.json"
    if marker.exists() and json.loads(marker.read_text()) == wanted:
        return wanted
    marker.unlink(missing_ok=True)
    started = time.perf_counter()
    sentences = [s.lower() for s in generate_sentences("quickstart", args.sentences,
                                                        seed=args.seed)]
    (workdir / "corpus.txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    shutil.rmtree(workdir / "vocab", ignore_errors=True)
    train_subword_vocab(sentences[:args.vocab_sentences], workdir / "vocab",
                        bpe_size=args.bpe_size, dim=100, epochs=5)
    del sentences
    for size in sorted({args.small, args.sentences}):
        write_random_vectors(workdir / f"vectors-{size}.npy", size, args.dim, args.seed + size)
    marker.write_text(json.dumps(wanted))
    print(f"prepared {workdir} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return wanted


def ids_as_lists_mb(vocab: SubwordVocab, path: Path, count: int) -> tuple[float, float]:
    """Return the MB that the first `count` sentences' ids take as lists of lists (traced) and
    as `TokenIds`."""
    lines = list(corpus_lines(path, count))
    tracemalloc.start()
    lists = vocab.encode(lines)
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return size / MB, TokenIds.from_sequences(lists).nbytes / MB


# --- one training run (a process of its own) ---------------------------------------------------

class _Enough(Exception):
    """Raised by the benchmark's hook once the timed steps are done."""


def train_run(args: argparse.Namespace, workdir: Path, size: int) -> dict[str, Any]:
    """Train --steps steps on the first `size` sentences; return what was measured."""
    if args.threads:
        torch.set_num_threads(args.threads)
    rss_start = rss_mb()
    vocab = SubwordVocab.load(workdir / "vocab")
    corpus = workdir / "corpus.txt"
    if args.baseline_run:  # the old data path: lists of lists, rows read through the map
        ids: Any = vocab.encode(list(corpus_lines(corpus, size)))
        vectors = np.load(workdir / f"vectors-{size}.npy", mmap_mode="c")
        tokens = sum(map(len, ids))
    else:
        ids = TokenIds.encode(vocab.encode, corpus_lines(corpus, size))
        vectors = open_vectors(workdir / f"vectors-{size}.npy")
        tokens = len(ids.values)
    options = MosLstmOptions(**QUICKSTART, epochs=1, checkpoint_every=0)
    torch.manual_seed(args.seed)
    model = build_mos_lstm(options, BuildContext(vocab=vocab, input_dim=vectors.shape[1]))
    batches = int(len(ids) * (1 - options.val_fraction)) // options.batch_size
    if batches <= args.steps:
        sys.exit(f"{size} sentences make {batches} batches; --steps must be fewer")

    seen = {"calls": 0, "tokens": 0, "rss_samples": [], "times": {}}

    def stop_after_steps(module: torch.nn.Module, inputs: tuple[Any, ...]) -> None:
        if not module.training:
            return
        seen["calls"] += 1
        calls, now = seen["calls"], time.perf_counter()
        if psutil:
            seen["rss_samples"].append(rss_mb())
        if calls == 1:
            seen["times"]["first_step"] = now
            seen["rss_first_step"] = rss_mb()
        if calls == args.warmup + 1:
            seen["times"]["timed_from"] = now
        if calls == args.steps + 1:
            seen["times"]["timed_to"] = now
            raise _Enough
        if calls > args.warmup:  # [bos] + ids are the non-padding inputs: one per target
            seen["tokens"] += int((inputs[0] != vocab.pad_id).sum())

    model.register_forward_pre_hook(stop_after_steps)
    run_dir = workdir / f"run-{size}"
    shutil.rmtree(run_dir, ignore_errors=True)  # never resume an earlier run
    rss_before = rss_mb()
    started = time.perf_counter()
    try:
        train_decoder(model, vocab, vectors, ids, options, seed=args.seed, device="cpu",
                      checkpoint_dir=run_dir / "checkpoints", log_path=run_dir / "train.jsonl",
                      progress=False, label=f"scale {size}")
        raise RuntimeError("the epoch ended before --steps")
    except _Enough:
        pass
    peak, own_peak = peak_rss_mb(), own_peak_rss_mb()  # before the timing below adds to them
    times = seen["times"]
    timed = times["timed_to"] - times["timed_from"]
    samples = [s for s in seen["rss_samples"] if s is not None]
    return {
        "sentences": size, "tokens": tokens, "data_path": "old" if args.baseline_run else "new",
        "ids_mb": (ids.nbytes / MB) if isinstance(ids, TokenIds) else None,
        "vectors_gb": os.path.getsize(workdir / f"vectors-{size}.npy") / 1e9,
        "peak_rss_mb": peak, "own_peak_rss_mb": own_peak,
        "psutil_peak_sampled_mb": max([*samples, rss_before or 0.0]) if psutil else None,
        "rss_start_mb": rss_start, "rss_before_training_mb": rss_before,
        "rss_at_first_step_mb": seen.get("rss_first_step"),
        "seconds_before_first_step": times["first_step"] - started,
        "timed_steps": args.steps - args.warmup,
        "steps_per_s": (args.steps - args.warmup) / timed,
        "tokens_per_s": seen["tokens"] / timed,
        "data_ms_per_batch": data_path_ms(vocab, vectors, ids, options, args.seed,
                                          skip=args.steps + 1, count=200),
    }


def data_path_ms(vocab: SubwordVocab, vectors: Any, ids: Any, options: MosLstmOptions,
                 seed: int, *, skip: int, count: int) -> float:
    """Return the mean milliseconds the trainer's data path takes per batch (rows read as the
    trainer reads them, ids padded) over `count` batches of its first epoch after `skip`."""
    train_index, _ = split_validation(len(ids), options.val_fraction, seed)
    order = bucketed_batches(train_index, sentence_lengths(ids), options.batch_size, seed,
                             epoch=1)[skip:skip + count]
    started = time.perf_counter()
    for _ in padded_batches(order, vocab, file_rows(vectors), ids, torch.device("cpu")):
        pass
    return (time.perf_counter() - started) * 1000 / len(order)


def in_process(args: argparse.Namespace, workdir: Path, *mode: str) -> dict[str, Any]:
    """Run this script in `mode` (--prepare, or --run N) in a fresh Python process; return the
    JSON object it prints."""
    command = [sys.executable, __file__, *mode, "--workdir", str(workdir),
               "--sentences", str(args.sentences), "--small", str(args.small),
               "--dim", str(args.dim), "--steps", str(args.steps), "--warmup", str(args.warmup),
               "--seed", str(args.seed), "--bpe-size", str(args.bpe_size),
               "--vocab-sentences", str(args.vocab_sentences)]
    if args.threads:
        command += ["--threads", str(args.threads)]
    result = subprocess.run(command, check=True, text=True, stdout=subprocess.PIPE)
    return json.loads(result.stdout.strip().splitlines()[-1])


# --- the benchmark -----------------------------------------------------------------------------

def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, help="build (or reuse) the data here "
                        "(default: a new directory under /tmp)")
    parser.add_argument("--keep", action=argparse.BooleanOptionalAction, default=None,
                        help="keep the workdir afterwards (default: keep a given --workdir, "
                             "delete a temporary one)")
    parser.add_argument("--sentences", type=int, default=1_400_000, help="the large corpus")
    parser.add_argument("--small", type=int, default=100_000, help="the small corpus")
    parser.add_argument("--dim", type=int, default=4_096, help="sentence vector dimension")
    parser.add_argument("--steps", type=int, default=300, help="optimiser steps of each run")
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps of those")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bpe-size", type=int, default=1_000)
    parser.add_argument("--vocab-sentences", type=int, default=100_000,
                        help="sentences the vocabulary is trained on")
    parser.add_argument("--baseline", action="store_true", help="also train the large size "
                        "on the old data path (lists of ids, rows read through the map)")
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--run", type=int, help=argparse.SUPPRESS)  # one training process
    parser.add_argument("--baseline-run", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not 0 < args.warmup < args.steps:
        parser.error("--warmup must be positive and below --steps")
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    if args.prepare or args.run is not None:  # a child process: one JSON line on stdout
        if args.prepare:
            prepare(args, args.workdir)
            lists, compact = ids_as_lists_mb(SubwordVocab.load(args.workdir / "vocab"),
                                             args.workdir / "corpus.txt", args.small)
            report = {"lists_of_ints": lists, "token_ids": compact, "ratio": lists / compact}
        else:
            report = train_run(args, args.workdir, args.run)
        print(json.dumps(report))
        return report
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="v2s-scale-", dir="/tmp"))
    keep = args.keep if args.keep is not None else args.workdir is not None
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        # Everything big happens in child processes: this one's peak stays below theirs, so
        # their ru_maxrss (which counts the peak of the process that started them) is their own.
        ids_mb = in_process(args, workdir, "--prepare")
        rate_before, load_before = matmul_gflops(), os.getloadavg()[0]
        launcher_peak = peak_rss_mb()
        small = in_process(args, workdir, "--run", str(args.small))
        large = in_process(args, workdir, "--run", str(args.sentences))
        baseline = in_process(args, workdir, "--run", str(args.sentences), "--baseline-run") \
            if args.baseline else None
        rate_after, load_after = matmul_gflops(), os.getloadavg()[0]
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    report = {
        "benchmark": "scale", "date": time.strftime("%Y-%m-%d"),
        "machine": platform.platform(), "processor": cpu_model() or platform.processor(),
        "cores": os.cpu_count(),
        "memory_gb": psutil.virtual_memory().total / 1e9 if psutil else None,
        "torch": torch.__version__, "threads": args.threads or torch.get_num_threads(),
        # Before and after the training runs: other work on the machine shows as a lower rate.
        "matmul_gflops_2_threads": rate_before, "matmul_gflops_2_threads_after": rate_after,
        "load_average_1min": [load_before, load_after], "commit": commit(),
        "command": "python benchmarks/perf/scale.py " + " ".join(argv or sys.argv[1:]),
        "model": {"name": "mos-lstm", **QUICKSTART, "input_dim": args.dim,
                  "vectors": "float16, memory-mapped"},
        "steps": args.steps, "warmup": args.warmup,
        "ids_of_small_corpus_mb": ids_mb, "launcher_peak_rss_mb": launcher_peak,
        "small": small, "large": large,
        "corpus_ratio": args.sentences / args.small,
        "peak_rss_ratio_large_to_small": large["peak_rss_mb"] / small["peak_rss_mb"],
        "peak_rss_growth_mb": large["peak_rss_mb"] - small["peak_rss_mb"],
        "own_peak_rss_ratio_large_to_small": _ratio(large["own_peak_rss_mb"],
                                                    small["own_peak_rss_mb"]),
        "steps_per_s_ratio_large_to_small": large["steps_per_s"] / small["steps_per_s"],
    }
    if baseline is not None:
        report["large_old_data_path"] = baseline
        report["peak_rss_ratio_old_to_new"] = baseline["peak_rss_mb"] / large["peak_rss_mb"]
    print(json.dumps(report, indent=1))
    return report


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


if __name__ == "__main__":
    main()
