"""Do the multi-view ensembles beat `avg` over the same word vectors on STS-B and SICK-R?

Trains each named multi-view encoder on an ordered text (blank lines separate documents), then
scores cosine similarity against the gold scores of the STS Benchmark test set and the SICK test
set (Pearson and Spearman, x100) for: the ensemble, each single view (the `:f` / `:g` encoders,
which reuse the ensemble's training through a shared work directory), and two baselines over the
very word vectors the encoders were trained with: their average (`avg`, fastText avg in
multi-view Table 3) and the average with its top principal component removed (`avg-wr`,
fastText+WR). Prints one JSON object.

    python benchmarks/multiview_sts.py --ordered ../shared/data/newstest-en/ordered.txt \
        --stsb ../shared/data/senteval/downstream --set word_dim=100 --set hidden=128 \
        --set epochs=4 --workdir /tmp/mv

`--stsb` is the SentEval downstream directory (holding STS/STSBenchmark/sts-test.csv and
SICK/SICK_test_annotated.txt) or the STSBenchmark directory itself (then give `--sick`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from scipy.stats import pearsonr, spearmanr

from harness_plugins.encoders.multiview import (
    BijectiveOptions,
    DiscriminativeOptions,
    GenerativeOptions,
)
from harness_plugins.encoders.multiview.encoder import (
    MultiViewEncoder,
    build_encoder,
    component_sample,
)
from harness_plugins.encoders.multiview.orthonormal import power_iteration, remove_top_component

OPTIONS = {"multiview-g": GenerativeOptions, "multiview-d": DiscriminativeOptions,
           "invertible-linear": GenerativeOptions, "invertible-bijective": BijectiveOptions}
SINGLE_VIEWS = ("multiview-g", "multiview-d")


def read_pairs(path: Path, columns: tuple[int, int, int], header: bool) -> tuple[list, list, np.ndarray]:
    """Return (first sentences, second sentences, gold scores) of a tab-separated file."""
    firsts, seconds, gold = [], [], []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if header and number == 0 or not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            score, a, b = (fields[i] for i in columns)
            firsts.append(a)
            seconds.append(b)
            gold.append(float(score))
    return firsts, seconds, np.asarray(gold)


def tasks(stsb: Path, sick: Path | None) -> dict[str, tuple[list, list, np.ndarray]]:
    """Return the STS-B and SICK-R test pairs found from the command-line paths."""
    sts_file = stsb / "sts-test.csv"
    if not sts_file.exists():
        sts_file = stsb / "STS" / "STSBenchmark" / "sts-test.csv"
    sick_file = sick or stsb / "SICK" / "SICK_test_annotated.txt"
    for path in (sts_file, sick_file):
        if not path.exists():
            sys.exit(f"{path}: not found; pass --stsb SENTEVAL_DOWNSTREAM_DIR (or --sick FILE)")
    return {"STSB": read_pairs(sts_file, (4, 5, 6), header=False),
            "SICK-R": read_pairs(sick_file, (3, 1, 2), header=True)}


def cosine_scores(encode, pairs: tuple[list, list, np.ndarray]) -> dict[str, float]:
    """Return Pearson and Spearman (x100) of cos(encode(a), encode(b)) against the gold."""
    firsts, seconds, gold = pairs
    a, b = encode(firsts), encode(seconds)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    cosine = (a * b).sum(axis=1) / np.maximum(norms, 1e-12)
    return {"pearson": round(100 * float(pearsonr(cosine, gold)[0]), 2),
            "spearman": round(100 * float(spearmanr(cosine, gold)[0]), 2)}


def average_encoder(encoder: MultiViewEncoder, sample: list[str], remove_component: bool):
    """Return encode(sentences) for the mean of the encoder's own word vectors (absent = 0),
    optionally with the top component of the same fit-corpus sample removed (WR)."""
    words = encoder.words

    def mean_vectors(sentences: list[str]) -> np.ndarray:
        out = np.zeros((len(sentences), words.dim), dtype=np.float32)
        for row, sentence in enumerate(sentences):
            ids = words.ids(sentence)
            if ids:
                out[row] = words.vectors[ids].mean(axis=0)
        return out

    if not remove_component:
        return mean_vectors
    u = power_iteration(torch.from_numpy(mean_vectors(sample)).double(), 1000, 1e-10).float()
    return lambda sentences: remove_top_component(torch.from_numpy(mean_vectors(sentences)),
                                                  u).numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ordered", type=Path, required=True,
                        help="ordered text, one sentence per line, blank lines between documents")
    parser.add_argument("--stsb", type=Path, required=True, help="SentEval downstream directory")
    parser.add_argument("--sick", type=Path, help="SICK_test_annotated.txt (default: under --stsb)")
    parser.add_argument("--encoders", default="multiview-d,multiview-g",
                        help="comma-separated frameworks to train")
    parser.add_argument("--preset", default="small", choices=("small", "paper"))
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an encoder option, e.g. hidden=256 (repeatable)")
    parser.add_argument("--limit", type=int, help="use the first N lines of --ordered")
    parser.add_argument("--workdir", type=Path, help="keep word vectors and checkpoints here "
                        "(a rerun resumes); default: a temporary directory")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    lines = args.ordered.read_text(encoding="utf-8").split("\n")[:args.limit]
    evaluation = tasks(args.stsb, args.sick)
    overrides = {}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key] = json.loads(value) if value[:1].isdigit() or value in ("true", "false") \
            else value
    report: dict = {"corpus": {"path": str(args.ordered), "lines": len(lines),
                               "sentences": sum(1 for s in lines if s.strip())},
                    "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                                "torch_threads": torch.get_num_threads()},
                    "preset": args.preset, "options": overrides, "fit_seconds": {},
                    "results": {}}
    scratch = tempfile.TemporaryDirectory()
    workdir = args.workdir or Path(scratch.name)
    baselines: set[str] = set()
    for family in [e.strip() for e in args.encoders.split(",") if e.strip()]:
        options = OPTIONS[family](preset=args.preset, **overrides)
        names = [family] + ([f"{family}:f", f"{family}:g"] if family in SINGLE_VIEWS else [])
        for name in names:
            started = time.perf_counter()
            encoder = build_encoder(name, options, seed=args.seed, workdir=workdir)
            encoder.fit(lines)
            report["fit_seconds"][name] = round(time.perf_counter() - started, 1)
            report["results"][name] = {task: cosine_scores(encoder.encode, pairs)
                                       for task, pairs in evaluation.items()}
            print(f"{name}: {json.dumps(report['results'][name])}", file=sys.stderr)
            if name != family:
                continue
            report.setdefault("history", {})[family] = encoder.history
            report.setdefault("summary", {})[family] = encoder.summary
            identity = hashlib.sha256(encoder.words.vectors.tobytes()).hexdigest()
            if identity in baselines:  # frameworks with the same word settings share vectors
                continue
            baselines.add(identity)
            suffix = "" if len(baselines) == 1 else f" ({family} word vectors)"
            sample = component_sample(lines, encoder.settings.pc_sentences)
            for label, wr in (("avg" + suffix, False), ("avg-wr" + suffix, True)):
                encode = average_encoder(encoder, sample, wr)
                report["results"][label] = {task: cosine_scores(encode, pairs)
                                            for task, pairs in evaluation.items()}
                print(f"{label}: {json.dumps(report['results'][label])}", file=sys.stderr)
    scratch.cleanup()
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
