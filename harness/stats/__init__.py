"""Statistics over runs: intervals of metrics, correlations across encoders, ranks.

Vec2Sent (Kerscher & Eger 2020, section 3) asks whether a diagnostic ranks encoders as downstream
tasks do: it reports the Spearman rank correlation, across encoders, between each diagnostic and
each SentEval task (Figure 2), their average and minimum over tasks, and ranks of the encoders
(Table 1). The harness adds how far each number can be trusted:

- `harness.stats.units`: the test sentence as the unit when decoder seeds repeat it;
- `harness.stats.intervals`: a metric score's interval: exact Clopper & Pearson (1934) over
  sentences for a proportion, a (cluster) percentile bootstrap over sentences otherwise, and a
  seed component where enough seeds were trained to estimate it (`metric_score`);
- `harness.stats.significance`: exact (McNemar, sign-flip) and permutation tests of paired
  differences between encoders, corrected by `harness.stats.multiple` (the rankings analysis
  builds its rank intervals from them: `harness.analyses.rankings.paired`);
- `harness.stats.correlation` and `harness.stats.ranks`: the paper's correlations (with exact
  permutation p-values and Fisher-z intervals across encoders) and ranks;
- `harness.stats.joint` and `harness.stats.power`: the primary analysis's test of a
  diagnostic's mean correlation over tasks (a joint permutation of the encoders) and the
  smallest population correlation it detects.

Every public name is importable from `harness.stats` itself.
"""

from __future__ import annotations

from harness.stats.correlation import (
    CORRELATIONS,
    EXACT_MAX,
    FISHER_Z,
    P_EXACT,
    P_SCIPY,
    Correlation,
    correlate,
    correlation_matrix,
    fisher_interval,
    fisher_variance,
    permutation_pvalue,
    summarise,
)
from harness.stats.intervals import (
    BOOTSTRAP,
    CLOPPER_PEARSON,
    CLUSTER_BOOTSTRAP,
    KORN_GRAUBARD,
    MIN_SEEDS,
    BootstrapInterval,
    ProportionInterval,
    bootstrap_ci,
    cluster_bootstrap,
    corpus_value,
    metric_score,
    mover_difference,
    proportion_interval,
    rate_interval,
    seed_spread,
)
from harness.stats.joint import P_MONTE_CARLO, JointTest, mean_correlation_test
from harness.stats.multiple import ALPHA, benjamini_hochberg, holm, holm_adjusted
from harness.stats.power import correlation_power, critical_value, min_detectable_correlation
from harness.stats.ranks import downstream_rank, rank
from harness.stats.significance import mcnemar_exact, paired_test, sign_flip_pvalue
from harness.stats.units import SentenceTable, sentence_table

__all__ = [
    "ALPHA", "BOOTSTRAP", "CLOPPER_PEARSON", "CLUSTER_BOOTSTRAP", "CORRELATIONS", "EXACT_MAX",
    "FISHER_Z", "KORN_GRAUBARD", "MIN_SEEDS", "P_EXACT", "P_MONTE_CARLO",
    "P_SCIPY", "BootstrapInterval", "Correlation", "JointTest", "ProportionInterval",
    "SentenceTable", "benjamini_hochberg", "bootstrap_ci", "cluster_bootstrap",
    "corpus_value", "correlate", "correlation_matrix", "correlation_power", "critical_value",
    "downstream_rank", "fisher_interval", "fisher_variance",
    "holm", "holm_adjusted", "mcnemar_exact", "mean_correlation_test", "metric_score",
    "min_detectable_correlation", "mover_difference",
    "paired_test", "permutation_pvalue",
    "proportion_interval", "rank", "rate_interval", "seed_spread",
    "sentence_table", "sign_flip_pvalue",
    "summarise",
]
