"""Unsupervised semantic textual similarity, STS12-16, as SentEval scores it (senteval/sts.py).

No training: the similarity of a pair is the cosine of the two sentence vectors (NaN, e.g. from a
zero vector, counts as 0); each subset (MSRpar, headlines, ...) gets Pearson's r and Spearman's
rho against the gold scores, and the year gets their plain mean and their mean weighted by the
subsets' numbers of pairs (SentEval's "all": `mean` and `wmean`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .relatedness import pearson, spearman


@dataclass(frozen=True)
class SubsetScore:
    """Correlations of one STS subset and its number of scored pairs."""

    pearson: float
    spearman: float
    n: int


@dataclass(frozen=True)
class YearScore:
    """Per-subset correlations of one STS year and SentEval's "all" means."""

    subsets: Mapping[str, SubsetScore]
    pearson_mean: float
    pearson_wmean: float
    spearman_mean: float
    spearman_wmean: float


def score_subset(system: np.ndarray, gold: np.ndarray) -> SubsetScore:
    """Return Pearson and Spearman of system similarities against gold scores."""
    return SubsetScore(pearson=pearson(system, gold), spearman=spearman(system, gold),
                       n=len(gold))


def score_year(subsets: Mapping[str, SubsetScore]) -> YearScore:
    """Return the year's mean and pair-weighted mean correlations over its subsets."""
    weights = np.array([s.n for s in subsets.values()], dtype=np.float64)
    pearsons = np.array([s.pearson for s in subsets.values()])
    spearmans = np.array([s.spearman for s in subsets.values()])
    return YearScore(subsets=dict(subsets),
                     pearson_mean=float(np.mean(pearsons)),
                     pearson_wmean=float(np.average(pearsons, weights=weights)),
                     spearman_mean=float(np.mean(spearmans)),
                     spearman_wmean=float(np.average(spearmans, weights=weights)))
