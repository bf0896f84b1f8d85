"""Encoders that come in families (views of one model, poolings of one table) are not
independent units: the effective number of independent encoders behind a correlation across
them.

For values y grouped into g families of sizes n_1 ... n_g (N in all; an encoder of no family is
a family of its own), the one-way intraclass correlation ICC(1) (Shrout & Fleiss 1979; for
unequal sizes the average size k0 of Snedecor & Cochran) is

    ICC = (MSB - MSW) / (MSB + (k0 - 1) MSW),   k0 = (N - sum n_i^2 / N) / (g - 1),

MSB and MSW the between- and within-family mean squares, clipped at 0 below. Kish's (1965)
design effect for clusters of unequal size, Deff = 1 + (m - 1) ICC with m = sum n_i^2 / N
(each encoder's own family size, averaged), gives the effective number N / Deff: N when
families are no more alike inside than across (ICC 0), the number of families' worth when
every family is internally identical (ICC 1 with equal sizes). An approximation: it treats the
values as one measurement per encoder and says nothing about the downstream side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def intraclass_correlation(values: Mapping[str, float], families: Mapping[str, str]) -> float:
    """ICC(1) of `values` (encoder -> value) over families (encoder -> family; an encoder not
    in `families` is its own), clipped to [0, 1]; 0 when there are fewer than two families or
    no encoder shares one."""
    groups: dict[str, list[float]] = {}
    for encoder, value in values.items():
        groups.setdefault(families.get(encoder, f"\0{encoder}"), []).append(float(value))
    sizes = np.array([len(g) for g in groups.values()], dtype=np.float64)
    total = float(sizes.sum())
    if len(groups) < 2 or total <= len(groups):
        return 0.0
    grand = float(np.mean([v for g in groups.values() for v in g]))
    between = sum(len(g) * (np.mean(g) - grand) ** 2 for g in groups.values())
    within = sum(float(((np.asarray(g) - np.mean(g)) ** 2).sum()) for g in groups.values())
    msb = between / (len(groups) - 1)
    msw = within / (total - len(groups))
    k0 = (total - float((sizes ** 2).sum()) / total) / (len(groups) - 1)
    denominator = msb + (k0 - 1.0) * msw
    if denominator <= 0:
        return 0.0
    return float(min(1.0, max(0.0, (msb - msw) / denominator)))


def effective_number(sizes: Sequence[int], icc: float) -> float:
    """N / Deff, Deff = 1 + (m - 1) ICC with m = sum n_i^2 / N (module docstring)."""
    counts = np.asarray(sizes, dtype=np.float64)
    total = float(counts.sum())
    if total == 0:
        return 0.0
    mean_size = float((counts ** 2).sum()) / total
    return total / (1.0 + (mean_size - 1.0) * icc)
