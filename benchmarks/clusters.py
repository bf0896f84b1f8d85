"""Within-cluster correlations of a run's diagnostics with its downstream tasks.

An across-encoder correlation can be driven by clusters of encoders alone: encoders that share
their word vectors with the decoder, or that were trained on the very training sentences, have
one profile, pretrained models another. This script repeats the primary test of the run (each
diagnostic's mean Spearman rho over the tasks, exact joint permutation of the encoders,
`harness.stats.joint.mean_correlation_test`) within each cluster named on the command line and
across all of them, and prints one markdown table. With n encoders the smallest exact p is
2 / n! (two-sided), so a cluster of 4 can never reach p < .05: the table gives that floor
beside each p, and the within-cluster rows are descriptions, not tests with power.

    python benchmarks/clusters.py RUN_DIR/results.json \\
        --cluster pretrained=sbert,mpnet,minilm-l3-onnx,e5-small-q4 \\
        --cluster run-trained=avg,avg-max-hier,sent2vec,multiview-d \\
        --cluster glove=glove-avg,glove-avg-max-hier [--decoder mos-lstm]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from harness.stats.joint import mean_correlation_test


def table_rows(results: dict, decoder: str | None, diagnostics: list[str],
               clusters: dict[str, list[str]]) -> list[str]:
    """Markdown rows: cluster, n, and per diagnostic its mean rho with exact p."""
    runs = {r["encoder"]: r for r in results["runs"]
            if decoder is None or r["decoder"] == decoder}
    downstream = results["downstream"]
    tasks = sorted({t for scores in downstream.values() for t in scores})
    rows = []
    for name, members in clusters.items():
        encoders = [e for e in members if e in runs and all(
            downstream.get(e, {}).get(t) is not None for t in tasks)]
        table = np.array([[downstream[e][t] for t in tasks] for e in encoders], dtype=float)
        cells = []
        for diagnostic in diagnostics:
            x = np.array([runs[e]["metrics"][diagnostic]["value"] for e in encoders], dtype=float)
            usable = len(encoders) >= 3 and np.all(np.ptp(table, axis=0) > 0)
            test = mean_correlation_test(x, table) if usable else None
            if test is None or test.statistic is None:
                cells.append("–")
            else:
                cells.append(f"{test.statistic:+.2f} (p {test.p:.2f})")
        floor = f"{2 / math.factorial(len(encoders)):.3f}" if len(encoders) >= 3 else "–"
        rows.append(f"| {name} | {len(encoders)} | {floor} | " + " | ".join(cells) + " |")
    header = ("| cluster | n | smallest p | " + " | ".join(diagnostics) + " |\n|"
              + "---|" * (3 + len(diagnostics)))
    return [header, *rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--cluster", action="append", required=True,
                        help="NAME=ENC1,ENC2,... (repeat; 'all' is added over their union)")
    parser.add_argument("--decoder", default=None)
    parser.add_argument("--diagnostics", default="id,perm,bleu,token-f1,info,retrieval")
    args = parser.parse_args()
    clusters = {}
    for entry in args.cluster:
        name, _, members = entry.partition("=")
        clusters[name] = members.split(",")
    clusters["all"] = [e for members in clusters.values() for e in members]
    results = json.loads(args.results.read_text())
    print("\n".join(table_rows(results, args.decoder, args.diagnostics.split(","), clusters)))


if __name__ == "__main__":
    main()
