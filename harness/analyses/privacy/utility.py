"""Utility: what a defence leaves of the vectors' use on the spec's downstream tasks, corrected
for chance per task, with an interval that carries the uncertainty of the defended and of the
clean score alike.

Per task t, with c_t its chance level (`harness.protocols.chance_level`: the majority-class
rate of its test examples for an accuracy, 0 for a correlation), k_t the clean vectors' score
and s_t the defended vectors':

    u_t = (s_t - c_t) / (k_t - c_t),

the share of the clean vectors' margin over chance that the defended ones keep (1: all of it,
0: chance). It is the normalised score of Mnih et al. (2015, Nature 518: 529-533),
(agent - random) / (human - random), with the clean vectors in the human's place.
The utility is the mean over the tasks kept, U = (1 / T) sum_t u_t. It is not clipped: a
defended score above the clean one by chance gives u_t > 1, and the interval says how far.

A task is left out of U, with the reason (`Utility.left_out`), when either set of vectors lacks
it, when it declares no chance level, when its metric has no sampling model here (only `acc`,
`recall@k`, `pearson` and `spearman` do), or when the clean vectors have no margin over
chance: the clean score's 95% interval (`score_interval`) reaches c_t, so k_t - c_t may be 0
or negative and u_t is unbounded.

The interval is Monte Carlo over each score's sampling distribution (`score_draws`), the
defended and the clean score drawn independently, `DRAWS` times, U recomputed at every draw
and the 2.5th and 97.5th percentiles taken:
- an accuracy of x correct of n test examples (a recall@k alike: x of n queries with their
  partner among the first k, MRPC-retrieval's): p ~ Beta(x + 1/2, n - x + 1/2), the Jeffreys
  posterior, whose quantiles are the Jeffreys interval (Brown, Cai & DasGupta 2001, Statistical
  Science 16(2), Sec. 4.1.2); unlike the plug-in binomial of a parametric bootstrap it does not
  collapse at x = 0 or x = n;
- a Pearson correlation r over n pairs: atanh r* ~ N(atanh r, 1 / (n - 3)) (Fisher 1921); a
  Spearman correlation with variance 1.06 / (n - 3) (Fieller, Hartley & Pearson 1957).
The clean draw is u_t's denominator, so the clean score's uncertainty widens the interval. Both
scores are measured on the same test examples, so their errors are positively correlated;
independent draws overstate the variance of u_t when the defended margin is positive (to first
order, Var u_t = Var s / K^2 + D^2 Var k / K^4 - 2 D Cov(s, k) / K^3 with D = s - c, K = k - c):
the interval is conservative there. The classifier seed's variance is not in it (the downstream
analysis reports the spread over seeds). tests/test_privacy_utility.py checks the coverage by
simulation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from harness.protocols import TaskResult, chance_level
from harness.stats.intervals import percentile_interval, proportion_interval

DRAWS = 10_000
"""Monte Carlo draws behind a utility's interval."""
SEED = 20_150_226
"""The draws' seed (fixed: an interval is a function of the scores alone)."""
LEVEL = 0.95
Z95 = 1.959963984540054
"""The standard normal's 97.5th percentile."""
CORRELATION_VARIANCE = {"pearson": 1.0, "spearman": 1.06}
"""Variance of atanh r times (n - 3): Fisher (1921) for Pearson's r; Fieller, Hartley & Pearson
(1957) for Spearman's."""


@dataclass(frozen=True)
class TaskScore:
    """One task's headline score on one set of vectors and what its sampling model needs: its
    `metric` (`acc`, a percentage of `n` test examples; `recall@k`, a percentage of `n`
    queries; `pearson` or `spearman`, a correlation over `n` pairs) and its `chance` level in
    the score's units (None when undeclared)."""

    score: float
    metric: str
    n: int
    chance: float | None = None


def task_score(result: TaskResult) -> TaskScore:
    """The `TaskScore` of a task's result, its chance level read with `chance_level`."""
    return TaskScore(score=float(result.score), metric=result.metric, n=int(result.n_test),
                     chance=chance_level(result))


@dataclass(frozen=True)
class Utility:
    """One set of vectors' utility against the clean vectors': `value` (None when no task is
    kept), its 95% interval `ci95` (None for the clean vectors themselves, 1 by definition),
    each kept task's u_t in `tasks`, and task -> why it is not in the mean in `left_out`."""

    value: float | None
    ci95: tuple[float, float] | None = None
    tasks: dict[str, float] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)


def is_proportion(metric: str) -> bool:
    """Whether the metric is a percentage of whole successes in n trials: an accuracy, or a
    recall@k (`recall@1`, ...) over queries."""
    return metric == "acc" or metric.startswith("recall@")


def _modelled(score: TaskScore) -> bool:
    if is_proportion(score.metric):
        return score.n > 0
    return score.metric in CORRELATION_VARIANCE and score.n > 3


def score_interval(score: TaskScore) -> tuple[float, float] | None:
    """A score's 95% interval in its own units: an accuracy's (or recall@k's) exact
    Clopper-Pearson interval over its n test examples (x = round(score / 100 * n)); a
    correlation's Fisher interval, tanh(atanh r -+ 1.96 sqrt(v / (n - 3))) with v from
    `CORRELATION_VARIANCE`; None for another metric."""
    if not _modelled(score):
        return None
    if is_proportion(score.metric):
        found = proportion_interval(_successes(score), score.n)
        return 100 * found.low, 100 * found.high
    z, half = math.atanh(_clamped(score.score)), Z95 * _z_sd(score)
    return math.tanh(z - half), math.tanh(z + half)


def score_draws(score: TaskScore, rng: np.random.Generator, size: int) -> np.ndarray:
    """`size` draws of the score from its sampling distribution (the module's docstring): an
    accuracy (or recall@k) from the Jeffreys posterior of its proportion, in percent; a
    correlation through Fisher's z."""
    if is_proportion(score.metric):
        x = _successes(score)
        return 100.0 * rng.beta(x + 0.5, score.n - x + 0.5, size)
    z = math.atanh(_clamped(score.score))
    return np.tanh(rng.normal(z, _z_sd(score), size))


def _successes(score: TaskScore) -> int:
    return min(score.n, max(0, round(score.score / 100 * score.n)))


def _clamped(r: float) -> float:
    """r kept inside (-1, 1), so that atanh is finite."""
    return max(-1 + 1e-12, min(1 - 1e-12, r))


def _z_sd(score: TaskScore) -> float:
    return math.sqrt(CORRELATION_VARIANCE[score.metric] / (score.n - 3))


def left_out(defended: Mapping[str, TaskScore], clean: Mapping[str, TaskScore]
             ) -> dict[str, str]:
    """Task -> why it is not in the utility (the module's docstring), for every task either
    set of vectors has."""
    why = {}
    for task in sorted(set(defended) | set(clean)):
        reason = _why(defended.get(task), clean.get(task))
        if reason:
            why[task] = reason
    return why


def _why(defended: TaskScore | None, clean: TaskScore | None) -> str | None:
    if clean is None:
        return "no clean score"
    if defended is None:
        return "no score on these vectors"
    if clean.chance is None:
        return "the task declares no chance level"
    interval = score_interval(clean)
    if interval is None:
        return (f"no sampling model for its metric {clean.metric!r} over {clean.n} examples "
                "(acc, recall@k, pearson or spearman)")
    if interval[0] <= clean.chance:
        return (f"no margin over chance when clean: {clean.score:.4g} "
                f"[{interval[0]:.4g}, {interval[1]:.4g}] reaches chance {clean.chance:.4g}")
    return None


def clean_utility(clean: Mapping[str, TaskScore]) -> Utility:
    """The clean vectors' own utility: 1 (every u_t is 1 by definition, no interval), None when
    no task is kept."""
    out = left_out(clean, clean)
    kept = [task for task in sorted(clean) if task not in out]
    return Utility(value=1.0 if kept else None, tasks=dict.fromkeys(kept, 1.0), left_out=out)


def utility(defended: Mapping[str, TaskScore], clean: Mapping[str, TaskScore], *,
            draws: int = DRAWS, seed: int = SEED) -> Utility:
    """The defended vectors' utility U = mean over the kept tasks of u_t (the module's
    docstring) with its 95% Monte Carlo interval over both scores' sampling distributions."""
    out = left_out(defended, clean)
    kept = [task for task in sorted(set(defended) & set(clean)) if task not in out]
    if not kept:
        return Utility(value=None, left_out=out)
    rng = np.random.default_rng(seed)
    tasks, total = {}, np.zeros(draws)
    for task in kept:
        s, k = defended[task], clean[task]
        chance = float(k.chance)  # type: ignore[arg-type]  # kept: declared
        tasks[task] = (s.score - chance) / (k.score - chance)
        total += (score_draws(s, rng, draws) - chance) / (score_draws(k, rng, draws) - chance)
    found = percentile_interval(total / len(kept), LEVEL)
    return Utility(value=sum(tasks.values()) / len(tasks), ci95=found.bounds, tasks=tasks,
                   left_out=out)
