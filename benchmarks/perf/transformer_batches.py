"""Encode speed of the transformer encoders with length-sorted, token-budgeted batches
(`harness_plugins.encoders.batching`), against the same model called as users would call it.

    OMP_NUM_THREADS=2 python benchmarks/perf/transformer_batches.py \\
        --text ../shared/data/senteval/downstream/CR/custrev.pos --sentences 600

For each encoder, on the first `--sentences` non-empty lines of `--text`, prints sentences/s of
- `harness`: the registered encoder's `encode(sentences, batch_size=256)`, as the encode and
  downstream stages call it;
- `padded-256`: one padded batch per 256 sentences, as the harness batched before (for `sbert`
  and `mpnet`, sentence-transformers' `encode(batch_size=256)`; for `minilm-l3-onnx`, the graph
  run on consecutive chunks of 256);
- `reference-best`: the model called directly at its best batch size of 8, 32 (the
  sentence-transformers default) and 128 (sentence-transformers sorts by length itself;
  the ONNX graph is run on consecutive chunks, as its model card shows);
with the ratios `harness / padded-256` and `harness / reference-best`, and the largest absolute
difference between the harness' vectors and the reference's, as JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from harness.protocols import BuildContext
from harness.registry.loader import load_registry


def read_lines(path: Path, limit: int) -> list[str]:
    """Return the first `limit` non-empty lines of `path`, stripped (latin-1 read as SentEval)."""
    lines = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.strip():
                lines.append(line.strip())
                if len(lines) == limit:
                    break
    return lines


def timed(run: Callable[[], np.ndarray], repeats: int) -> tuple[float, np.ndarray]:
    """Return the best wall time of `repeats` calls of `run`, and its output."""
    best, out = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - started)
    return best, np.asarray(out)


def onnx_chunks(encoder: Any, sentences: list[str], size: int) -> np.ndarray:
    """The ONNX graph run on consecutive chunks of `size` sentences, each padded to its longest."""
    return np.concatenate([encoder.encode_batch(sentences[begin:begin + size])
                           for begin in range(0, len(sentences), size)])


def direct(name: str, encoder: Any, sentences: list[str], size: int) -> np.ndarray:
    """The model called without the harness' batching, `size` sentences per batch."""
    if name == "minilm-l3-onnx":
        return onnx_chunks(encoder, sentences, size)
    return encoder._load().encode(sentences, batch_size=size, show_progress_bar=False,
                                  convert_to_numpy=True, normalize_embeddings=encoder.normalise)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", type=Path, required=True)
    parser.add_argument("--sentences", type=int, default=600)
    parser.add_argument("--encoders", default="sbert,mpnet,minilm-l3-onnx")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    sentences = read_lines(args.text, args.sentences)
    registry = load_registry()
    report: dict[str, Any] = {"text": args.text.name, "sentences": len(sentences),
                              "mean_words": round(float(np.mean([len(s.split())
                                                                 for s in sentences])), 1)}
    for name in args.encoders.split(","):
        info = registry.get("encoder", name)
        encoder = info.factory(info.options(), BuildContext())
        encoder.encode(sentences[:8])  # load the model outside the timings
        harness_s, ours = timed(partial(encoder.encode, sentences, batch_size=256), args.repeats)
        padded_s, _ = timed(partial(direct, name, encoder, sentences, 256), args.repeats)
        reference = {size: timed(partial(direct, name, encoder, sentences, size), args.repeats)
                     for size in (8, 32, 128)}
        best_size = min(reference, key=lambda size: reference[size][0])
        best_s, theirs = reference[best_size]
        rate = lambda seconds: round(len(sentences) / seconds, 1)  # noqa: E731
        report[name] = {
            "harness_sent_per_s": rate(harness_s), "padded_256_sent_per_s": rate(padded_s),
            "reference_best_sent_per_s": rate(best_s), "reference_best_batch": best_size,
            "harness_over_padded_256": round(padded_s / harness_s, 2),
            "harness_over_reference_best": round(best_s / harness_s, 2),
            "max_abs_difference": float(np.max(np.abs(ours - theirs)))}
        print(json.dumps({name: report[name]}), flush=True)
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    main()
