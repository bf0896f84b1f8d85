"""Peak resident memory of writing sentence vectors with `harness.util.vectors.write_vectors`.

The encode stage writes each batch's rows to the `.npy` file with file writes; through a memory
map, every written page would stay in the process' resident set until the map was closed, so
RSS would grow with the file. Writes `--rows` x `--dim` float16 vectors (a fixed random block
per batch: this measures the write path, not an encoder) and prints JSON with the file size,
the peak RSS of the process and the seconds taken.

    python benchmarks/perf/encode_rss.py --rows 250000 --dim 2048 --workdir /tmp/encode-rss
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from harness.util.vectors import write_vectors


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=250_000)
    parser.add_argument("--dim", type=int, default=2048)
    parser.add_argument("--batch-size", type=int, default=4096)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="encode-rss-"))
    workdir.mkdir(parents=True, exist_ok=True)
    block = np.random.default_rng(0).standard_normal((args.batch_size, args.dim)).astype(
        np.float32)
    path = workdir / "vectors.npy"
    started = time.perf_counter()
    write_vectors(path, ["x"] * args.rows, lambda batch: block[:len(batch)], dim=args.dim,
                  plugin="benchmark", batch_size=args.batch_size, dtype="float16")
    report = {"rows": args.rows, "dim": args.dim, "file_mb": round(path.stat().st_size / 1e6, 1),
              "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
              "seconds": round(time.perf_counter() - started, 1)}
    shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    main()
