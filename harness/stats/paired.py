"""Paired bootstrap over encoders: rank intervals, pairwise differences, correlation intervals.

Every encoder of a run is scored on the same test sentences, so their scores are compared on the
same resamples: one vector of multinomial counts per resample is shared by all encoders (the
paired bootstrap of Koehn 2004 for MT systems; Efron & Tibshirani 1993 for the percentile
interval). Where an encoder's decoders were trained with several seeds, each resample also
draws one of its seeds, so seed variance enters every quantity below. From the resampled scores:

- each encoder's rank per resample (1 best), whose percentiles make a rank interval: the idea
  of MTEB's rank-stability analysis (MMTEB, Enevoldsen et al. 2025: do model rankings survive
  resampling of the evaluation data?), here with the test sentences resampled;
- each pair's score difference, its percentile interval and a two-sided bootstrap p-value;
- the correlation across encoders of the diagnostic with each downstream task, recomputed per
  resample with the downstream scores held fixed (Kerscher & Eger 2020, Figure 2 with intervals).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from harness.results import DiagnosticRanking, PairedDifference, RankInterval
from harness.stats.correlation import _finite, check_method
from harness.stats.intervals import (
    PooledProportion,
    check_arguments,
    difference_interval,
    hull,
    percentile_interval,
    pooled_proportion,
    resample_counts,
    resampled_scores,
    stacked,
)
from harness.stats.ranks import average_rank_rows, rank, rank_rows

if TYPE_CHECKING:
    from harness.protocols import Metric

Bounds = tuple[float | None, float | None]


@dataclass(frozen=True)
class PairedScores:
    """Encoders' scores on shared resamples of the test sentences.

    `observed[e]` is encoder e's mean over seeds of each seed's corpus score (NaN when undefined
    for every seed); `resampled[r, e]` its score in resample r (NaN where undefined); `seeds` is
    true when some encoder has several seeds (a seed was drawn per resample for it).
    """

    encoders: tuple[str, ...]
    observed: np.ndarray
    resampled: np.ndarray
    sentences: int
    seeds: bool


def paired_scores(metric: Metric, statistics: Mapping[str, Sequence[np.ndarray]], *,
                  resamples: int, seed: int) -> PairedScores:
    """Score every encoder on the same `resamples` resamples of the n test sentences.

    `statistics` maps encoder -> one (n, k) array per decoder seed, every array over the same n
    sentences. Per chunk of resamples (`harness.stats.intervals.resample_counts`, from
    `numpy.random.default_rng(seed)`): the counts (c, n) are drawn first and shared by all
    encoders; then, encoder by encoder in the given order, one seed index per resample for each
    encoder with several seeds. The resample's score is `corpus_score(counts @ statistics)`.
    """
    check_arguments(resamples, 0.95)
    names = tuple(statistics)
    if not names:
        raise ValueError("need the statistics of at least one encoder")
    stacks = [stacked(statistics[name]) for name in names]
    n = stacks[0].shape[1]
    if any(stack.shape[1] != n for stack in stacks):
        raise ValueError("every encoder must be scored on the same test sentences, got "
                         f"{dict(zip(names, (stack.shape[1] for stack in stacks)))} sentences")
    observed = np.array([_mean_defined(metric.corpus_score(stack.sum(axis=1), n))
                         for stack in stacks])
    rng = np.random.default_rng(seed)
    resampled = np.empty((resamples, len(names)))
    row = 0
    for counts in resample_counts(n, resamples, rng):
        for e, stack in enumerate(stacks):
            choice = rng.integers(len(stack), size=len(counts)) if len(stack) > 1 else None
            resampled[row:row + len(counts), e] = resampled_scores(metric, stack, counts, choice)
        row += len(counts)
    return PairedScores(encoders=names, observed=observed, resampled=resampled, sentences=n,
                        seeds=any(len(stack) > 1 for stack in stacks))


def _mean_defined(values: object) -> float:
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    defined = values[np.isfinite(values)]
    return float(defined.mean()) if defined.size else math.nan


def _bound(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def paired_ranking(metric: Metric, statistics: Mapping[str, Sequence[np.ndarray]], *,
                   higher_is_better: bool, resamples: int, seed: int,
                   level: float = 0.95) -> DiagnosticRanking:
    """Return the encoders' rank intervals and pairwise differences on one diagnostic.

    Resamples come from `paired_scores` (shared sentence counts; a seed drawn per resample for
    encoders with several seeds). Per resample the encoders are ranked, 1 best, tied encoders
    sharing the best rank (`harness.stats.ranks.rank_rows`); an encoder whose score is
    undefined in a resample ranks last there (behind every defined score), so undefined
    resamples widen its rank interval instead of vanishing. `rank_ci95` is the pair of
    (1-level)/2 and (1+level)/2 quantiles of its ranks (`inverted_cdf`: ranks that occurred),
    widened to hold the point `rank` where they do not: that is from the observed values
    (means over seeds), as `harness.stats.rank`, and None for an encoder whose observed value
    is undefined; an encoder tied at 0 with others in most resamples (each seed of a rate near
    0 drawn in turn) ranks better there than by the observed means.

    For every pair a before b in the given order: `difference` = observed a - b; `ci95` the
    percentile interval of the resampled differences; where that is a single point (two rates
    that agree on every sentence, e.g. both without a success) the interval built from the
    two rates' exact ones (`difference_interval`), so that an interval is never zero-width
    because few events occurred; `p` the
    two-sided bootstrap p-value 2 * min(P(d <= 0), P(d >= 0)), at most 1; `significant` when
    the interval excludes 0.
    Resamples where either score is undefined are left out of that pair's difference only.
    `undefined_resamples` counts the resamples in which any encoder's score was undefined.
    """
    check_arguments(resamples, level)
    scores = paired_scores(metric, statistics, resamples=resamples, seed=seed)
    names, observed, resampled = scores.encoders, scores.observed, scores.resampled
    ranks = rank_rows(resampled, higher_is_better)
    points = rank(dict(zip(names, observed)), higher_is_better)
    tail = (1.0 - level) / 2.0
    encoders = {}
    for e, name in enumerate(names):
        low, high = (int(np.quantile(ranks[:, e], q, method="inverted_cdf"))
                     for q in (tail, 1.0 - tail))
        point = points.get(name)
        if point is not None:  # ties in resamples can leave the observed rank outside
            low, high = min(low, point), max(high, point)
        encoders[name] = RankInterval(value=_bound(observed[e]), rank=point,
                                      rank_ci95=(low, high))
    pooled = [pooled_proportion(metric, statistics[name], level) for name in names]
    differences = [_difference(names[a], names[b], observed[a] - observed[b],
                               resampled[:, a] - resampled[:, b], level,
                               exact=(pooled[a], pooled[b]))
                   for a in range(len(names)) for b in range(a + 1, len(names))]
    undefined = int((~np.isfinite(resampled)).any(axis=1).sum())
    return DiagnosticRanking(encoders=encoders, differences=differences, resamples=resamples,
                             sentences=scores.sentences, seeds=scores.seeds,
                             undefined_resamples=undefined)


def _difference(a: str, b: str, observed: float, resampled: np.ndarray, level: float, *,
                exact: tuple[PooledProportion | None, PooledProportion | None]
                ) -> PairedDifference:
    defined = resampled[np.isfinite(resampled)]
    if defined.size == 0:
        return PairedDifference(a=a, b=b, difference=_bound(observed))
    interval = percentile_interval(defined, level)
    low, high = interval.low, interval.high
    if low == high and exact[0] is not None and exact[1] is not None:
        # Rates that agree on every sentence (both 0 in 500, say): every resample gives the
        # same difference. The rates' exact intervals still bound what such counts allow.
        low, high = hull((low, high), difference_interval(exact[0], exact[1]))
    p = min(1.0, 2.0 * min(float(np.mean(defined <= 0)), float(np.mean(defined >= 0))))
    return PairedDifference(a=a, b=b, difference=_bound(observed), ci95=(low, high), p=p,
                            significant=bool(low > 0 or high < 0))


def resample_correlations(x: np.ndarray, y: np.ndarray, method: str = "spearman") -> np.ndarray:
    """Return the correlation of each row of x (R, m) with y (m,), NaN where undefined.

    Row by row this equals `harness.stats.correlate` on the pair: pairwise deletion (only the
    columns where the row's value is finite; y must be finite), undefined with fewer than 3
    columns left or a constant side. Spearman is Pearson's r on average ranks
    (`average_rank_rows`); Kendall is tau-b, sum sign(dx) sign(dy) over column pairs divided by
    sqrt(#pairs untied in x * #pairs untied in y), as `scipy.stats.kendalltau`. Rows are
    grouped by which columns are defined, and each group is computed at once.
    """
    check_method(method)
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or y.shape != (x.shape[1],) or not np.isfinite(y).all():
        raise ValueError(f"need x (R, m) and finite y (m,), got {x.shape} and {y.shape}")
    out = np.full(len(x), np.nan)
    if len(x) == 0:
        return out
    patterns, inverse = np.unique(np.isfinite(x), axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    for p, columns in enumerate(patterns):
        if columns.sum() >= 3:
            rows = inverse == p
            out[rows] = _correlate_rows(x[rows][:, columns], y[columns], method)
    return out


def _correlate_rows(x: np.ndarray, y: np.ndarray, method: str) -> np.ndarray:
    if method == "kendall":
        first, second = np.triu_indices(x.shape[1], k=1)
        sx, sy = np.sign(x[:, first] - x[:, second]), np.sign(y[first] - y[second])
        denominator = np.sqrt((sx != 0).sum(axis=1) * float((sy != 0).sum()))
        numerator = sx @ sy
    else:
        if method == "spearman":
            x, y = average_rank_rows(x), average_rank_rows(y)
        xc, yc = x - x.mean(axis=1, keepdims=True), y - y.mean()
        denominator = np.sqrt((xc ** 2).sum(axis=1) * float((yc ** 2).sum()))
        numerator = xc @ yc
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(denominator > 0, numerator / denominator, np.nan)
    return np.clip(rho, -1.0, 1.0)


@dataclass(frozen=True)
class CorrelationIntervals:
    """Percentile intervals of a diagnostic's correlations across encoders over paired
    resamples of the test sentences.

    `tasks[task]` is the interval of rho with that task (`CorrelationCell.ci95`); `mean` the
    interval of the mean rho over tasks (`CorrelationSummary.mean_ci95`); None bounds where no
    resample is defined. `undefined[task]` counts the resamples where that rho was undefined,
    `mean_undefined` those where no task's was; `encoders` are the encoders each task's rho is
    over (those with both a diagnostic and a finite downstream score).
    """

    tasks: dict[str, Bounds]
    mean: Bounds
    undefined: dict[str, int]
    mean_undefined: int
    resamples: int
    encoders: dict[str, tuple[str, ...]]


def correlation_intervals(metric: Metric, statistics: Mapping[str, Sequence[np.ndarray]],
                          downstream: Mapping[str, Mapping[str, float]], *, method: str,
                          resamples: int, seed: int, level: float = 0.95
                          ) -> CorrelationIntervals:
    """Return the intervals of a diagnostic's correlation with each downstream task.

    `statistics` is as for `paired_ranking` (encoder -> per-seed (n, k) arrays); `downstream`
    maps encoder -> task -> score, as `harness.stats.correlation_matrix` takes it, with tasks in
    order of first appearance. Each resample of `paired_scores` (same seed, same resamples as
    `paired_ranking`) gives the encoders' diagnostic values; the downstream scores are held
    fixed. Per task, rho across encoders is recomputed on every resample
    (`resample_correlations`, with `method` spearman, pearson or kendall as
    `harness.stats.correlate`) and its percentile interval taken over the defined resamples;
    per resample the mean rho over the tasks where it is defined (as `summarise`) gives the
    interval of the mean. Undefined resamples are counted, not hidden.
    """
    check_arguments(resamples, level)
    check_method(method)
    scores = paired_scores(metric, statistics, resamples=resamples, seed=seed)
    tasks = list(dict.fromkeys(task for row in downstream.values() for task in row))
    rhos = np.full((resamples, len(tasks)), np.nan)
    encoders: dict[str, tuple[str, ...]] = {}
    for t, task in enumerate(tasks):
        columns = [e for e, name in enumerate(scores.encoders)
                   if _finite(downstream.get(name, {}).get(task))]
        encoders[task] = tuple(scores.encoders[e] for e in columns)
        y = np.array([float(downstream[scores.encoders[e]][task]) for e in columns])
        rhos[:, t] = resample_correlations(scores.resampled[:, columns], y, method)
    intervals = {task: percentile_interval(rhos[:, t], level) for t, task in enumerate(tasks)}
    defined = np.isfinite(rhos)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(defined, rhos, 0.0).sum(axis=1) / defined.sum(axis=1)
    mean = percentile_interval(means, level)
    return CorrelationIntervals(
        tasks={task: (_bound(i.low), _bound(i.high)) for task, i in intervals.items()},
        mean=(_bound(mean.low), _bound(mean.high)),
        undefined={task: i.undefined for task, i in intervals.items()},
        mean_undefined=mean.undefined, resamples=resamples, encoders=encoders)
