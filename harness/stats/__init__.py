"""Statistics over runs: intervals of metrics, correlations across encoders, ranks.

Vec2Sent (Kerscher & Eger 2020, section 3) asks whether a diagnostic ranks encoders as downstream
tasks do: it reports the Spearman rank correlation, across encoders, between each diagnostic and
each SentEval task (Figure 2), their average and minimum over tasks, and ranks of the encoders
(Table 1). The harness adds how far each number can be trusted:

- `harness.stats.intervals`: a metric score's interval: exact Clopper & Pearson (1934) for a
  proportion, percentile bootstrap over test sentences (Efron & Tibshirani 1993) otherwise, and
  over sentences and decoder seeds where several seeds were trained (`metric_score`);
- `harness.stats.paired`: paired bootstrap over encoders scored on the same sentences: rank
  intervals, pairwise differences, and intervals of the correlations;
- `harness.stats.correlation` and `harness.stats.ranks`: the paper's correlations (with exact
  permutation p-values) and ranks.

Every public name is importable from `harness.stats` itself.
"""

from __future__ import annotations

from harness.stats.correlation import (
    CORRELATIONS,
    EXACT_MAX,
    P_EXACT,
    P_SCIPY,
    Correlation,
    correlate,
    correlation_matrix,
    permutation_pvalue,
    summarise,
)
from harness.stats.intervals import (
    BOOTSTRAP,
    BOOTSTRAP_SEEDS,
    CLOPPER_PEARSON,
    BootstrapInterval,
    ProportionInterval,
    bootstrap_ci,
    bootstrap_seeds_ci,
    corpus_value,
    metric_score,
    proportion_interval,
    seed_spread,
)
from harness.stats.paired import (
    CorrelationIntervals,
    PairedScores,
    correlation_intervals,
    paired_ranking,
    paired_scores,
    resample_correlations,
)
from harness.stats.ranks import average_rank_rows, downstream_rank, rank, rank_rows

__all__ = [
    "BOOTSTRAP", "BOOTSTRAP_SEEDS", "CLOPPER_PEARSON", "CORRELATIONS", "EXACT_MAX", "P_EXACT",
    "P_SCIPY", "BootstrapInterval", "Correlation", "CorrelationIntervals", "PairedScores",
    "ProportionInterval", "average_rank_rows", "bootstrap_ci", "bootstrap_seeds_ci",
    "corpus_value", "correlate", "correlation_intervals", "correlation_matrix",
    "downstream_rank", "metric_score", "paired_ranking", "paired_scores", "permutation_pvalue",
    "proportion_interval", "rank", "rank_rows", "resample_correlations", "seed_spread",
    "summarise",
]
