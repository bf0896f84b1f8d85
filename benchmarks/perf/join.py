"""Placing one new encoder among the quickstart's: joining the shipped reference bundle against
running the whole quickstart with the encoder added, side by side in one process.

Each side runs `harness run` as a user would, on a fresh cache of its own (a newcomer has no
cache): the join with `--set "encoders=[ENCODER]" --reference quickstart`; the baseline, what a
user would otherwise run, benchmarks/quickstart.yaml with ENCODER appended to its encoders.
Prints one JSON line per side (seconds, seconds normalised to a 167 GFLOP/s matrix product,
the stages' time, the new encoder's Id and info with their intervals), then a summary with the
ratio and the machine's matrix-product rate (benchmarks/perf/matmul.py).

    python benchmarks/perf/join.py [--encoder max] [--rerun] [--no-baseline]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from matmul import rate  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "benchmarks" / "quickstart.yaml"
REFERENCE_RATE = 167.0
"""GFLOP/s of the reference machine the sizes in the design are normalised to."""


def timed_run(args: list[str], out: Path, cache: Path) -> dict[str, Any]:
    """`harness run ARGS --out OUT` on `cache`, timed; its results.json's figures."""
    env = {**os.environ, "HARNESS_CACHE": str(cache)}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "harness.cli", "run", *args, "--out", str(out)],
                   env=env, check=True, capture_output=True)
    seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 1),
            "results": json.loads((out / "results.json").read_text(encoding="utf-8"))}


def summary(side: str, encoder: str, found: dict[str, Any], gflops: float) -> dict[str, Any]:
    """One side's JSON line."""
    results = found["results"]
    rows = {r["encoder"]: r for r in results["runs"]}

    def scores(row: dict[str, Any]) -> dict[str, Any]:
        return {m: {"value": row["metrics"][m]["value"], "ci95": row["metrics"][m]["ci95"]}
                for m in ("id", "info") if m in row["metrics"]}

    line = {"side": side, "seconds": found["seconds"],
            "normalised_seconds": round(found["seconds"] * gflops / REFERENCE_RATE, 1),
            "timings": results["provenance"]["timings"],
            "encoders_trained": sum(1 for r in results["runs"] if not r.get("bundle")),
            encoder: scores(rows[encoder])}
    bundled = rows.get(f"{encoder}@quickstart")
    if bundled is not None:  # a re-run: its bundled self beside it, and whether every score is
        line["bundled"] = scores(bundled)  # the same
        line["equal_to_bundled"] = all(
            rows[encoder]["metrics"][m]["value"] == bundled["metrics"][m]["value"]
            for m in bundled["metrics"])
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoder", default="max", help="the new encoder (default: max)")
    parser.add_argument("--rerun", action="store_true",
                        help="the encoder is one of the bundle's: train it again under its own "
                             "label (reference.rerun), to time it and compare it with its "
                             "bundled self")
    parser.add_argument("--no-baseline", action="store_true",
                        help="time the join only (the baseline takes about 7 minutes)")
    args = parser.parse_args(argv)
    gflops = rate(threads=torch.get_num_threads(), repeats=5)["best_gflops"]
    lines = []
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        rerun = ["--set", f"reference.rerun=[{args.encoder}]"] if args.rerun else []
        joined = timed_run([str(QUICKSTART), "--set", f"encoders=[{args.encoder}]", *rerun,
                            "--reference", "quickstart"], root / "join", root / "join-cache")
        lines.append(summary("join", args.encoder, joined, gflops))
        print(json.dumps(lines[-1]), flush=True)
        if not args.no_baseline:
            spec = yaml.safe_load(QUICKSTART.read_text(encoding="utf-8"))
            spec["encoders"].append(args.encoder)
            with_encoder = root / "quickstart-plus.yaml"
            with_encoder.write_text(yaml.safe_dump(spec), encoding="utf-8")
            # The probes read their analogy set relative to the spec's folder.
            (root / "probes").symlink_to(QUICKSTART.parent / "probes")
            full = timed_run([str(with_encoder)], root / "full", root / "full-cache")
            lines.append(summary("full quickstart", args.encoder, full, gflops))
            print(json.dumps(lines[-1]), flush=True)
    result: dict[str, Any] = {"encoder": args.encoder, "matmul_gflops": gflops,
                              "threads": torch.get_num_threads(),
                              "join_seconds": lines[0]["seconds"],
                              "join_normalised_seconds": lines[0]["normalised_seconds"]}
    if len(lines) == 2:
        result["full_seconds"] = lines[1]["seconds"]
        result["ratio"] = round(lines[1]["seconds"] / lines[0]["seconds"], 1)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
