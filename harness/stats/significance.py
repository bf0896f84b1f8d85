"""Exact and permutation tests of the difference between two encoders scored on the same test
sentences, with the sentence as the unit (`harness.stats.units`).

- A proportion with one trial per seed and sentence (Id, PERM): per sentence, the number of
  seeds in which encoder a succeeded minus those in which b did, d_i in {-S, ..., S}. Under the
  null hypothesis that the two encoders are exchangeable on every sentence, each d_i is equally
  likely to have either sign, and the exact two-sided p-value is P(|sum eps_i d_i| >= |sum
  d_i|) over the 2^m sign patterns of the m non-zero differences (Fisher's sign-flip test,
  enumerated through the distribution of the sum; `sign_flip_pvalue`). With one seed the d_i
  are +1 (b discordant sentences) or -1 (c), and this is McNemar's (1947) exact test:
  the two-sided binomial test of b in b + c at 1/2 (`mcnemar_exact`): 4 to 0 gives 0.125.
- Any other diagnostic, including corpus-level ones such as BLEU and ratios such as Id/PERM:
  the paired permutation test (approximate randomisation, Noreen 1989; Riezler & Maxwell 2005
  for MT metrics): each resample swaps every sentence's rows (all seeds) between a and b with
  probability 1/2 and recomputes the difference of the scores; p = (1 + #{|d*| >= |d|}) /
  (1 + R), which is a valid p-value for R random permutations (Phipson & Smyth 2010), R
  counting the permutations whose difference is defined.
- With decoders trained with several seeds (at least `MIN_SEEDS` each), a test that adds
  training variance to the sentences' (`seeds_t_pvalue`): the difference of the two encoders'
  means over seeds divided by sqrt(se_sentences^2 + s_a^2 / k_a + s_b^2 / k_b), se_sentences
  the paired bootstrap's standard error over test sentences and s^2 / k each encoder's variance
  of its seeds' scores over its k seeds, referred to Student's t with the Welch-Satterthwaite
  degrees of freedom (Welch 1947; Satterthwaite 1946). The tests above hold for the decoders
  trained; this one for the encoders, whichever decoder seed was drawn.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from harness.stats.units import SentenceTable, lattice_counts

MCNEMAR, SIGN_FLIP, PERMUTATION = "mcnemar-exact", "sign-flip-exact", "permutation"
SEEDS_T = "sentences+seeds-welch-t"
"""Which test gave a p-value (`PairedDifference.test`)."""

_SWAP_CELLS = 4_000_000
"""Swap indicators held in memory at once."""


def sign_flip_pvalue(differences: np.ndarray) -> float:
    """Return the exact two-sided sign-flip p-value of whole-number paired differences.

    The null distribution of T = sum_i eps_i |d_i| (eps_i = +-1 with probability 1/2 each) is
    built by convolving, for each distinct magnitude v that occurs c times, the distribution of
    v (2 B - c) with B ~ Binomial(c, 1/2): one convolution per distinct magnitude, so it is
    exact and cheap for any number of sentences. p = P(|T| >= |sum d_i|); 1 when all d_i are 0.
    """
    d = np.asarray(differences)
    if d.size and not np.all(np.equal(np.mod(d, 1), 0)):
        raise ValueError("sign_flip_pvalue needs whole-number differences")
    magnitudes = np.abs(d[d != 0]).astype(np.int64)
    observed = abs(int(np.sum(d)))
    if magnitudes.size == 0:
        return 1.0
    from scipy.stats import binom

    total = int(magnitudes.sum())
    # Distribution over T + total in 0..2 total (T is always total minus an even number).
    distribution = np.zeros(2 * total + 1)
    distribution[0] = 1.0
    offset = 0
    for value, count in zip(*np.unique(magnitudes, return_counts=True)):
        value, count = int(value), int(count)
        step = np.zeros(2 * value * count + 1)
        step[::2 * value] = binom.pmf(np.arange(count + 1), count, 0.5)
        distribution = np.convolve(distribution, step)[:2 * total + 1]
        offset += value * count
    outcomes = np.arange(len(distribution)) - offset
    return float(min(1.0, distribution[np.abs(outcomes) >= observed].sum()))


def mcnemar_exact(b: int, c: int) -> float:
    """McNemar's exact test: the two-sided p-value of b sentences where only a succeeded against
    c where only b did (the discordant sentences), `sign_flip_pvalue` of b ones and c minus
    ones, which is `scipy.stats.binomtest(b, b + c, 0.5)`."""
    return sign_flip_pvalue(np.concatenate([np.ones(b), -np.ones(c)]))


class PairedTest(NamedTuple):
    """A two-sided p-value and the test that gave it (`MCNEMAR`, `SIGN_FLIP`, `PERMUTATION`);
    p is NaN when the observed difference is undefined."""

    p: float
    test: str


def paired_test(a: SentenceTable, b: SentenceTable, *, permutations: int,
                rng: np.random.Generator) -> PairedTest:
    """Return the p-value of the difference between encoders a and b on the same sentences:
    exact (`sign_flip_pvalue`) where both are lattice proportions with the same seeds, the
    paired permutation test with `permutations` random swaps drawn from `rng` otherwise."""
    if a.lattice and b.lattice and a.seeds == b.seeds:
        p = sign_flip_pvalue(lattice_counts(a) - lattice_counts(b))
        return PairedTest(p, MCNEMAR if a.seeds == 1 else SIGN_FLIP)
    return PairedTest(permutation_pvalue(a, b, permutations=permutations, rng=rng), PERMUTATION)


def permutation_pvalue(a: SentenceTable, b: SentenceTable, *, permutations: int,
                       rng: np.random.Generator) -> float:
    """The paired permutation (approximate randomisation) p-value of score(a) - score(b).

    Each of the `permutations` resamples swaps sentence i's rows between a and b where a fair
    coin says so: a's totals become T_a + s @ (rows_b - rows_a), b's T_b - s @ (rows_b -
    rows_a), for a 0/1 swap vector s. The p-value is conditional on the difference being
    defined: resamples whose difference is undefined (Id/PERM with no permutation left on one
    side) are left out of both counts, p = (1 + extreme) / (1 + defined); 1 when none is
    defined. NaN when the observed difference is undefined."""
    if permutations < 1:
        raise ValueError(f"permutations must be at least 1, got {permutations}")
    total_a, total_b = a.rows.sum(axis=0), b.rows.sum(axis=0)
    observed = float(a.score(total_a) - b.score(total_b))
    if not math.isfinite(observed):
        return math.nan
    delta = b.rows - a.rows
    tolerance = 1e-9 * max(1.0, abs(observed))
    extreme = defined = 0
    chunk = max(1, _SWAP_CELLS // a.sentences)
    for start in range(0, permutations, chunk):
        swaps = rng.integers(0, 2, size=(min(chunk, permutations - start), a.sentences))
        moved = swaps.astype(np.float64) @ delta
        resampled = a.score(total_a + moved) - b.score(total_b - moved)
        finite = np.isfinite(resampled)
        defined += int(finite.sum())
        extreme += int(np.sum(np.abs(resampled[finite]) >= abs(observed) - tolerance))
    return (1 + extreme) / (1 + defined)


def seeds_t_pvalue(difference: float, se_sentences: float, seeds_a: np.ndarray,
                   seeds_b: np.ndarray, sentences: int) -> float:
    """Return the two-sided p-value of `difference`, a's mean over seeds minus b's, with its
    sentence-level standard error `se_sentences` (paired, over `sentences` test sentences) and
    training variance estimated from each encoder's per-seed scores (module docstring): Welch's
    t with the Welch-Satterthwaite degrees of freedom over the three variance components
    (n - 1 for the sentences', k - 1 for each encoder's seeds'). 1 when the difference and
    every variance are 0; NaN when the difference is undefined."""
    from scipy.stats import t as student

    a = np.asarray(seeds_a, dtype=np.float64)
    b = np.asarray(seeds_b, dtype=np.float64)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if not math.isfinite(difference) or len(a) < 2 or len(b) < 2:
        return math.nan
    parts = [(se_sentences ** 2, max(sentences - 1, 1)),
             (float(a.var(ddof=1)) / len(a), len(a) - 1),
             (float(b.var(ddof=1)) / len(b), len(b) - 1)]
    variance = sum(v for v, _ in parts)
    if variance <= 0.0:
        return 1.0 if difference == 0.0 else 0.0
    df = variance ** 2 / sum(v ** 2 / nu for v, nu in parts)
    return float(min(1.0, 2.0 * student.sf(abs(difference) / math.sqrt(variance), df)))
