"""The test sentence as the unit of every interval and test over decoder seeds.

Every decoder seed regenerates the same test sentences, so S seeds scored on n sentences are not
S x n independent trials: the sentences are the independent units, and the seeds are repeated
measurements of each. A `SentenceTable` therefore holds one row per test sentence carrying all
of that sentence's statistics over the seeds, and a `score` that turns the column sums of any
multiset of rows into the diagnostic. Resampling rows is then a cluster bootstrap over sentences
(Davison & Hinkley 1997, section 3.8: resample the clusters, keep each whole), and swapping rows
between two encoders a paired permutation test on sentences; neither ever splits a sentence's
seeds apart.

Two kinds of rows:

- A proportion metric (`harness.protocols.proportion_counts`: Id, PERM, Id/PERM). Sentence i's
  success fraction over the seeds is f_i = sum_s successes_is / sum_s trials_is, defined where
  some seed had a trial there (the sentence is then a *unit*: every sentence for Id and PERM, the
  sentences where some seed found a permutation for Id/PERM). Row [u_i f_i, u_i], u_i = 1 for a
  unit; score = scale * sum(u f) / sum(u), the mean over units of the fractions; its support is
  the number of units. With one seed this is successes / trials, the metric's own score.
- Any other metric: the S seeds' statistics side by side, (k each); score = the mean over the
  seeds whose corpus score is defined of each seed's corpus score of its own columns (the value
  the run reports for a pair trained with S seeds); its support is n.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from harness.protocols import proportion_counts

if TYPE_CHECKING:
    from harness.protocols import Metric


def stacked(statistics: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    """The per-seed statistics of one metric as one (seeds, n, k) float array, checked: at least
    one seed, every seed a non-empty (n, k) array of the same shape (the same test sentences)."""
    arrays = [np.asarray(s, dtype=np.float64) for s in statistics]
    if not arrays:
        raise ValueError("need the statistics of at least one seed")
    shape = arrays[0].shape
    if len(shape) != 2 or shape[0] == 0:
        raise ValueError(f"statistics must be a non-empty (n, k) array, got shape {shape}")
    if any(a.shape != shape for a in arrays):
        raise ValueError("every seed's statistics must have the same shape (same test "
                         f"sentences), got {[a.shape for a in arrays]}")
    return np.stack(arrays)


@dataclass(frozen=True)
class SentenceTable:
    """One encoder's statistics on one metric, a row per test sentence over all its seeds.

    `rows` (n, m) are additive: the score of any multiset of sentences is `score` of their
    column sums. `seed_values` are each seed's own corpus score (NaN where undefined).
    `scale` is the proportion's scale (100 for a percentage), None for other metrics.
    `lattice`: a proportion with exactly one trial per seed on every sentence (Id, PERM), whose
    sentence fractions are multiples of 1/seeds: sentence differences are then whole numbers
    of seeds, which the exact paired test needs.
    """

    metric: Metric = field(repr=False)
    rows: np.ndarray
    seeds: int
    seed_values: np.ndarray
    scale: float | None = None
    lattice: bool = False

    @property
    def sentences(self) -> int:
        """The number of test sentences n."""
        return int(self.rows.shape[0])

    @property
    def is_proportion(self) -> bool:
        """True for a rate of successes in trials (its interval is exact, its test too)."""
        return self.scale is not None

    def score(self, totals: np.ndarray) -> np.ndarray:
        """The diagnostic from column sums (..., m) of rows: NaN where undefined."""
        totals = np.asarray(totals, dtype=np.float64)
        if self.scale is not None:
            fractions, units = totals[..., 0], totals[..., 1]
            ratio = np.divide(fractions, units, out=np.full_like(fractions, np.nan),
                              where=units > 0)
            return self.scale * ratio
        per_seed = totals.reshape(*totals.shape[:-1], self.seeds, -1)
        values = np.asarray(self.metric.corpus_score(per_seed, self.sentences),
                            dtype=np.float64).reshape(*totals.shape[:-1], self.seeds)
        defined = np.isfinite(values)
        count = defined.sum(axis=-1)
        summed = np.where(defined, values, 0.0).sum(axis=-1)
        return np.divide(summed, count, out=np.full(summed.shape, np.nan), where=count > 0)

    @property
    def value(self) -> float:
        """The diagnostic over all test sentences (NaN where undefined)."""
        return float(self.score(self.rows.sum(axis=0)))

    @property
    def support(self) -> int:
        """What the value is a mean over: the units of a proportion (sentences with a trial in
        some seed), otherwise the n test sentences."""
        if self.scale is None:
            return self.sentences
        return int(round(float(self.rows[:, 1].sum())))

    @property
    def fractions(self) -> np.ndarray:
        """A proportion's success fraction over the seeds of each unit, in sentence order."""
        if self.scale is None:
            raise ValueError("only a proportion has success fractions")
        units = self.rows[:, 1] > 0
        return self.rows[units, 0]


def sentence_table(metric: Metric, statistics: Sequence[np.ndarray] | np.ndarray
                   ) -> SentenceTable:
    """Return the `SentenceTable` of one encoder's per-seed statistics (one (n, k) array per
    seed, over the same n test sentences).

    A proportion metric's `proportion(totals, count)` is applied to each sentence of each seed
    on its own (`count` 1): additive statistics make one sentence's totals its own row.
    """
    seeds = stacked(statistics)
    count, n = seeds.shape[0], seeds.shape[1]
    seed_values = np.asarray(metric.corpus_score(seeds.sum(axis=1), n),
                             dtype=np.float64).reshape(count)
    proportion = proportion_counts(metric, seeds, 1)
    if proportion is None:
        rows = seeds.transpose(1, 0, 2).reshape(n, -1)
        return SentenceTable(metric=metric, rows=rows, seeds=count, seed_values=seed_values)
    successes, trials, scale = proportion
    successes = np.asarray(successes, dtype=np.float64).reshape(count, n).sum(axis=0)
    trials = np.asarray(trials, dtype=np.float64).reshape(count, n).sum(axis=0)
    if np.any(successes < 0) or np.any(successes > trials + 1e-9):
        raise ValueError("a proportion's successes must lie between 0 and its trials on every "
                         "sentence")
    units = (trials > 0).astype(np.float64)
    fractions = np.divide(successes, trials, out=np.zeros(n), where=trials > 0)
    lattice = bool(np.allclose(trials, count))
    return SentenceTable(metric=metric, rows=np.stack([fractions * units, units], axis=1),
                         seeds=count, seed_values=seed_values, scale=scale, lattice=lattice)


def lattice_counts(table: SentenceTable) -> np.ndarray:
    """Per sentence, the number of seeds that succeeded (whole numbers 0..seeds) of a lattice
    proportion (`SentenceTable.lattice`)."""
    if not table.lattice:
        raise ValueError("only a proportion with one trial per seed and sentence has counts")
    return np.rint(table.rows[:, 0] * table.seeds).astype(np.int64)


def check_comparable(tables: Sequence[SentenceTable], names: Sequence[str]) -> None:
    """Raise ValueError unless every table is over the same test sentences and, for metrics
    that are no proportion, the same number of seeds (their rows hold each seed's columns)."""
    if len({t.sentences for t in tables}) > 1:
        raise ValueError("every encoder must be scored on the same test sentences, got "
                         f"{dict(zip(names, (t.sentences for t in tables)))} sentences")
    if len({(t.is_proportion, t.seeds if not t.is_proportion else 0,
             t.rows.shape[1]) for t in tables}) > 1:
        raise ValueError("every encoder must have the same number of decoder seeds to be "
                         f"compared, got {dict(zip(names, (t.seeds for t in tables)))}")
