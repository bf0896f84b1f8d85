"""The machine's bare float32 matrix-product rate, recorded beside every figure in
docs/performance.md so that figures taken on a loaded or slower machine can be told apart.

One product of a 10,000 x 356 by a 356 x 1,024 float32 matrix (the shape of the decoders' gate
product at 10,000 rows: 7.3 GFLOP), timed `--repeats` times per thread count after one untimed
product; the best time gives the rate (the least disturbed run on a shared machine), the median
shows how disturbed it was. Prints one JSON object, with the load average before and after.

    python benchmarks/perf/matmul.py [--threads 1,2] [--repeats 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch

ROWS, INNER, COLUMNS = 10_000, 356, 1_024
FLOP = 2 * ROWS * INNER * COLUMNS


def rate(threads: int, repeats: int) -> dict[str, float]:
    """Best and median GFLOP/s of the product on `threads` torch threads."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        generator = torch.Generator().manual_seed(0)
        left = torch.randn(ROWS, INNER, generator=generator)
        right = torch.randn(INNER, COLUMNS, generator=generator)
        torch.mm(left, right)
        seconds = []
        for _ in range(repeats):
            started = time.perf_counter()
            torch.mm(left, right)
            seconds.append(time.perf_counter() - started)
    finally:
        torch.set_num_threads(previous)
    return {"best_gflops": round(FLOP / min(seconds) / 1e9, 1),
            "median_gflops": round(FLOP / statistics.median(seconds) / 1e9, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2", help="comma-separated torch thread counts")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    load_before = os.getloadavg()
    rates = {int(t): rate(int(t), args.repeats) for t in args.threads.split(",")}
    print(json.dumps({"benchmark": "matmul", "shape": [ROWS, INNER, COLUMNS],
                      "dtype": "float32", "torch": torch.__version__,
                      "threads": rates, "loadavg_before": load_before,
                      "loadavg_after": os.getloadavg()}, indent=2))


if __name__ == "__main__":
    main()
