"""Ranks of encoders: by one diagnostic, and by downstream tasks (Kerscher & Eger 2020, Table 1)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from harness.stats.correlation import _finite


def rank(values: Mapping[str, float | None], higher_is_better: bool = True) -> dict[str, int]:
    """Return encoder -> rank, 1 best; ties share the lowest (best) rank (paper Table 1).

    Non-finite values are not ranked.
    """
    return {name: int(r) for name, r in _ranks(values, higher_is_better, "min").items()}


def _ranks(values: Mapping[str, float | None], higher_is_better: bool, ties: str
           ) -> dict[str, float]:
    from scipy.stats import rankdata

    names = [name for name, value in values.items() if _finite(value)]
    scores = np.array([float(values[name]) for name in names])
    return dict(zip(names, rankdata(-scores if higher_is_better else scores, method=ties)))


def downstream_rank(downstream: dict[str, dict[str, float]]) -> dict[str, int]:
    """Return encoder -> downstream rank, 1 best (paper Table 1, "Rank DS").

    Encoders are ranked within each task (higher score is better; tied encoders share the mean
    of their places, so every task hands out the same rank total), each encoder's ranks are
    averaged over the tasks it has a score for, and the mean ranks are ranked (lower is better).
    Averaging ranks rather than raw scores keeps tasks on different scales equally weighted.
    """
    tasks = dict.fromkeys(task for scores in downstream.values() for task in scores)
    rank_lists: dict[str, list[float]] = {}
    for task in tasks:
        task_ranks = _ranks({encoder: scores[task] for encoder, scores in downstream.items()
                             if task in scores}, higher_is_better=True, ties="average")
        for encoder, r in task_ranks.items():
            rank_lists.setdefault(encoder, []).append(r)
    mean_ranks = {encoder: float(np.mean(ranks)) for encoder, ranks in rank_lists.items()}
    return rank(mean_ranks, higher_is_better=False)
