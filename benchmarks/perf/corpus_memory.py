"""Peak memory of the corpus and vocabulary stages, and of a job's corpus, per corpus size: does
it grow with the corpus?

For each size in --sizes (default 1,000,000 and 10,000,000 sentences), each step runs in a
fresh child process (so `ru_maxrss` is that step's peak), in --workdir (default: a new
directory under /tmp, deleted at the end unless --keep):

- generate: --size synthetic sentences (`harness.synthetic.iter_sentences`, "quickstart",
  seed 1) streamed to `source.txt`, one per line. Data preparation, not a stage of a run: the
  generator's set of the sentences seen (uniqueness) grows with the count;
- corpus: the project's `prepare_corpus` (a cache miss) on a spec whose `corpus.train` is that
  file (max_tokens 15, lowercase, digits zeroed; test: 1,000 generated sentences, seed 2);
- vocab: `prepare_corpus` (a cache hit) and `prepare_vocab` (a cache miss: sentencepiece BPE,
  --bpe-size 1000, on the file, sampled above 1M sentences; fastText, --dim 16, --epochs 1, on
  the segmented corpus). fastText trains in a grandchild process: its peak is `child_rss_mb`;
- job: what an encode job touches of its corpus: `prepare_corpus` (a cache hit), `len`, a full
  streaming pass, `train[:n // 2]` iterated, and 256 batches of 256 lines read as the encode
  stage reads them (`train[start:start + 256]`) from the middle (the sparse index is built).

Each step reports its peak resident set: `peak_rss_mb` (VmHWM: the process' own, Linux) and
`maxrss_mb` (`ru_maxrss`, which also counts the small launcher), the peak of its children
(`child_rss_mb`: `ru_maxrss` of the fastText process, which counts the step's own resident set
when it started, so an upper bound), and its wall time. Prints a table, the ratio of each step's peak at the
largest size to that at the smallest, and the machine's matmul rate (benchmarks/perf/matmul.py,
2 threads) before and after; `--json PATH` writes all of it.

    python benchmarks/perf/corpus_memory.py                         # 1M and 10M (about 2 GB of disk)
    python benchmarks/perf/corpus_memory.py --sizes 1000000 --json /tmp/corpus-memory.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
STEPS = ("generate", "corpus", "vocab", "job")
TEST_SENTENCES = 1000
BATCH, BATCHES = 256, 256


def spec_text(source: Path, bpe_size: int, dim: int, epochs: int) -> str:
    """The YAML of the spec each step loads: the corpus and vocabulary of a real run."""
    return (f"name: corpus-memory\nseed: 1\ncorpus:\n  train: {{path: {source}}}\n"
            f"  test: {{generate: quickstart, sentences: {TEST_SENTENCES}, seed: 2}}\n"
            "  max_tokens: 15\n  normalise: {lowercase: true, digits: zero}\n"
            f"vocab: {{bpe_size: {bpe_size}, dim: {dim}, epochs: {epochs}}}\n"
            "encoders: [avg]\n")


def context(folder: Path) -> Any:
    """The run context of the spec in `folder`, over the cache in `folder`/cache."""
    from harness.spec import load_spec
    from harness.stages.base import RunContext
    from harness.util.cache import Cache

    return RunContext(spec=load_spec(folder / "spec.yaml"),  # type: ignore[arg-type]
                      cache=Cache(root=folder / "cache"))


def generate(folder: Path, size: int) -> dict[str, Any]:
    """Stream `size` synthetic sentences to `folder`/source.txt."""
    from harness.synthetic import iter_sentences

    with (folder / "source.txt").open("w", encoding="utf-8") as handle:
        for sentence in iter_sentences("quickstart", size, 1):
            handle.write(sentence + "\n")
    return {"source_mb": round((folder / "source.txt").stat().st_size / 1e6, 1)}


def job(folder: Path) -> dict[str, Any]:
    """Touch the training split as an encode job does; return what was read, and how fast."""
    from harness.stages.corpus import prepare_corpus

    timings, started = {}, time.perf_counter()
    train = prepare_corpus(context(folder)).train
    count = len(train)
    timings["prepare_and_len_s"] = time.perf_counter() - started
    started = time.perf_counter()
    characters, as_list = 0, 0
    for sentence in train:
        characters += len(sentence)
        as_list += sys.getsizeof(sentence) + 8  # the str and its slot in a list
    timings["full_pass_s"] = time.perf_counter() - started
    started = time.perf_counter()
    prefix = sum(1 for _ in train[:count // 2])
    timings["prefix_pass_s"] = time.perf_counter() - started
    started = time.perf_counter()
    middle = count // 2
    batched = sum(len(list(train[start:start + BATCH]))
                  for start in range(middle, min(count, middle + BATCH * BATCHES), BATCH))
    timings["batches_s"] = time.perf_counter() - started
    return {"sentences": count, "characters": characters, "prefix_lines": prefix,
            "batched_lines": batched, "split_as_list_mb": round(as_list / 1e6, 1),
            "train_txt_mb": round(train.path.stat().st_size / 1e6, 1),
            **{key: round(value, 2) for key, value in timings.items()}}


def run_step(step: str, folder: Path, size: int) -> dict[str, Any]:
    """Run one step in this (child) process; return its own measurements."""
    from harness.stages.corpus import prepare_corpus
    from harness.stages.vocab import prepare_vocab

    started = time.perf_counter()
    if step == "generate":
        extra = generate(folder, size)
    elif step == "corpus":
        shutil.rmtree(folder / "cache", ignore_errors=True)
        extra = {"train_sentences": len(prepare_corpus(context(folder)).train)}
    elif step == "vocab":
        ctx = context(folder)
        vocab = prepare_vocab(ctx, prepare_corpus(ctx))
        extra = {"pieces": len(vocab.vocab), "dim": vocab.vocab.dim}
    else:
        extra = job(folder)
    return {"seconds": round(time.perf_counter() - started, 1), "peak_rss_mb": own_peak_mb(),
            "maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "child_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
                                  / 1024, 1), **extra}


def own_peak_mb() -> float | None:
    """This process' own peak resident set (VmHWM, MB), or None off Linux."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def in_child(args: argparse.Namespace, step: str, folder: Path, size: int) -> dict[str, Any]:
    """Run `step` in a fresh Python process and return the JSON line it prints."""
    command = [sys.executable, str(Path(__file__).resolve()), "--step", step,
               "--folder", str(folder), "--sizes", str(size)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"step {step} at {size} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def matmul() -> dict[str, Any]:
    """The machine's float32 matmul rate (benchmarks/perf/matmul.py, 2 threads)."""
    done = subprocess.run([sys.executable, str(HERE / "matmul.py"), "--threads", "2",
                           "--repeats", "5"], capture_output=True, text=True, check=True)
    rate = json.loads(done.stdout)["threads"]["2"]
    return {**rate, "loadavg": round(os.getloadavg()[0], 2)}


def table(results: dict[int, dict[str, dict[str, Any]]]) -> str:
    """The steps' peaks and times per size, and the ratio of the largest size's to the
    smallest's."""
    sizes = sorted(results)
    lines = ["| step | " + " | ".join(f"{size:,}: peak RSS MB (children), s" for size in sizes)
             + (" | peak ratio |" if len(sizes) > 1 else " |"),
             "|---" * (len(sizes) + 1 + (len(sizes) > 1)) + "|"]
    for step in STEPS:
        cells = [f"{r['peak_rss_mb'] or r['maxrss_mb']:,.0f} ({r['child_rss_mb']:,.0f}), "
                 f"{r['seconds']:,.1f}" for r in (results[size][step] for size in sizes)]
        if len(sizes) > 1:
            cells.append(f"{ratio(results, step, sizes):.2f}")
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ratio(results: dict[int, dict[str, dict[str, Any]]], step: str, sizes: list[int]
          ) -> float:
    """Peak RSS of `step` at the largest size over that at the smallest."""
    def peak(size: int) -> float:
        row = results[size][step]
        return row["peak_rss_mb"] or row["maxrss_mb"]

    return peak(sizes[-1]) / peak(sizes[0])


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,10000000",
                        help="comma-separated corpus sizes (sentences)")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true", help="keep --workdir's files")
    parser.add_argument("--bpe-size", type=int, default=1000)
    parser.add_argument("--dim", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None, help="also write the report here")
    parser.add_argument("--step", choices=STEPS, help=argparse.SUPPRESS)  # a child process
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    if args.step:
        report = run_step(args.step, args.folder, sizes[0])
        print(json.dumps(report))
        return report
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="v2s-corpus-memory-"))
    results: dict[int, dict[str, dict[str, Any]]] = {}
    try:
        before = matmul()
        for size in sizes:
            folder = workdir / f"n{size}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "spec.yaml").write_text(spec_text(folder / "source.txt", args.bpe_size,
                                                        args.dim, args.epochs))
            results[size] = {step: in_child(args, step, folder, size) for step in STEPS}
            print(f"{size:,}: " + json.dumps(results[size]), file=sys.stderr)
        after = matmul()
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    report = {"benchmark": "corpus_memory", "date": time.strftime("%Y-%m-%d"),
              "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
              "settings": {"bpe_size": args.bpe_size, "dim": args.dim, "epochs": args.epochs,
                           "max_tokens": 15, "test_sentences": TEST_SENTENCES},
              "matmul_gflops_2_threads": {"before": before, "after": after},
              "sizes": {str(size): steps for size, steps in results.items()},
              "peak_ratio": ({step: round(ratio(results, step, sorted(results)), 2)
                              for step in STEPS} if len(results) > 1 else None)}
    print(table(results))
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    main()
