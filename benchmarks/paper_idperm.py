"""The paper's Id/PERM, as printed and as recomputed from its own Id and PERM.

Kerscher & Eger (2020) define Id/PERM as the share of the permutations that are the identity,
100 Id / PERM (section 2). Their Table 4 prints values that disagree with that ratio for three
encoders (avg-max-hier 50.85 printed, 57.71 recomputed; sent2vec 87.38 against 17.23; laser
96.51 against 55.15). This script runs the test of `benchmarks/paper-correlations.yaml` (the
mean Spearman rho over Table 5's 14 tasks across the 8 encoders both tables hold, exact joint
permutation p, `harness.stats.joint.mean_correlation_test`) on both columns and prints one
markdown table, so that the paper's strongest diagnostic is reported with and without its
printing errors:

    python benchmarks/paper_idperm.py [--tables benchmarks/paper]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import yaml

from harness.stats.joint import mean_correlation_test


def id_perm_columns(diagnostics: dict[str, dict[str, float]], encoders: list[str]
                    ) -> dict[str, np.ndarray]:
    """Id/PERM per encoder as printed and as 100 Id / PERM of the printed Id and PERM."""
    printed = np.array([diagnostics[e]["id-perm"] for e in encoders])
    recomputed = np.array([100 * diagnostics[e]["id"] / diagnostics[e]["perm"] for e in encoders])
    return {"as printed": printed, "recomputed (100 Id / PERM)": recomputed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=Path, default=Path(__file__).parent / "paper",
                        help="folder with v2s-table4.yaml and senteval-table5.yaml")
    args = parser.parse_args()
    table4 = yaml.safe_load((args.tables / "v2s-table4.yaml").read_text(encoding="utf-8"))
    table5 = yaml.safe_load((args.tables / "senteval-table5.yaml").read_text(encoding="utf-8"))
    encoders = [e for e in table4["scores"] if e in table5["scores"]]
    tasks = table5["tasks"]
    downstream = np.array([[table5["scores"][e][t] for t in tasks] for e in encoders])
    print(f"{len(encoders)} encoders ({', '.join(encoders)}), {len(tasks)} tasks\n")
    print("| Id/PERM | mean rho | exact p |")
    print("|---|---|---|")
    for label, column in id_perm_columns(table4["scores"], encoders).items():
        test = mean_correlation_test(column, downstream)
        print(f"| {label} | {test.statistic:.2f} | {test.p:.3f} |")


if __name__ == "__main__":
    main()
