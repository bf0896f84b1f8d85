"""Corpus BLEU between inputs and their regenerations (Kerscher & Eger 2020, section 2: BLEU(x, y)).

This is the real corpus BLEU, one segment per sentence, as `sacrebleu.corpus_bleu(hyps, [refs])`
computes it. The paper's released code joined all sentences into a single segment, which lets
n-grams match across sentence boundaries; we do not reproduce that.

Per-sentence sufficient statistics come from sacrebleu, so tokenisation and n-gram matching are
exactly sacrebleu's; the score is recomputed from their sums in numpy (Papineni et al. 2002:
brevity penalty times the geometric mean of modified n-gram precisions, with sacrebleu's
smoothing), which lets the core score a whole batch of bootstrap resamples at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sacrebleu.metrics.bleu import BLEU

MAX_ORDER = 4
"""Highest n-gram order (sacrebleu's and the standard BLEU default)."""


class BleuMetric:
    """Corpus BLEU on the 0-100 scale, computed from additive per-sentence statistics.

    Statistics per pair: [sys_len, ref_len, correct_1..4, total_1..4] (sacrebleu's layout).
    """

    value_range = (0.0, 100.0)  # an interval widened by the seeds' spread stays inside

    def __init__(self, tokenize: str = "13a", lowercase: bool = False,
                 smooth_method: str = "exp") -> None:
        if smooth_method not in BLEU.SMOOTH_DEFAULTS:
            raise ValueError(f"unknown smooth_method {smooth_method!r}; "
                             f"choose one of {sorted(BLEU.SMOOTH_DEFAULTS)}")
        self.tokenize = tokenize
        self.lowercase = lowercase
        self.smooth_method = smooth_method
        # Statistics only: without smoothing sacrebleu leaves the counts untouched ("add-k"
        # would add to them in place), and effective_order silences its sentence-level warning.
        self._extractor = BLEU(tokenize=tokenize, lowercase=lowercase, smooth_method="none",
                               effective_order=True)
        self._signature: str | None = None

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """Return an (n, 10) array of sacrebleu's BLEU statistics, one row per sentence pair."""
        if len(references) != len(hypotheses):
            raise ValueError(
                f"got {len(references)} references but {len(hypotheses)} hypotheses; "
                "each hypothesis needs exactly one reference")
        rows = np.zeros((len(references), 2 + 2 * MAX_ORDER), dtype=np.float64)
        for i, (reference, hypothesis) in enumerate(zip(references, hypotheses)):
            score = self._extractor.sentence_score(hypothesis, [reference])
            rows[i] = [score.sys_len, score.ref_len, *score.counts, *score.totals]
        return rows

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Return corpus BLEU (0-100) from summed statistics (..., 10), over leading batch dims."""
        return bleu_from_statistics(totals, self.smooth_method)

    def signature(self) -> str:
        """Return sacrebleu's signature string for this configuration (stored with results)."""
        if self._signature is None:
            bleu = BLEU(tokenize=self.tokenize, lowercase=self.lowercase,
                        smooth_method=self.smooth_method)
            # sacrebleu learns the number of references only by scoring; we always use one.
            bleu.corpus_score(["x"], [["x"]])
            self._signature = bleu.get_signature().format()
        return self._signature


def bleu_from_statistics(totals: np.ndarray, smooth_method: str = "exp") -> np.ndarray:
    """Return BLEU scores (0-100) for summed statistics of shape (..., 10), vectorised.

    Mirrors `sacrebleu.metrics.bleu.BLEU.compute_bleu` without effective order:
    BLEU = BP * exp(mean_n log p_n), BP = exp(1 - ref_len / sys_len) when sys_len < ref_len
    (Papineni et al. 2002, eqs. 1-2). Orders with no match are smoothed: "exp" (NIST, Chen &
    Cherry 2014 method 3) uses 1 / (2^k * total_n) for the k-th such order, "floor" 0.1 / total_n,
    "add-k" adds 1 to correct and total for n > 1, and "none" scores 0. A corpus with no match at
    all, or with no n-grams of some order, scores 0.
    """
    totals = np.asarray(totals, dtype=np.float64)
    sys_len, ref_len = totals[..., 0], totals[..., 1]
    correct = totals[..., 2:2 + MAX_ORDER].copy()
    total = totals[..., 2 + MAX_ORDER:2 + 2 * MAX_ORDER].copy()
    any_match = correct.sum(axis=-1) > 0  # tested before add-k, as sacrebleu does

    if smooth_method == "add-k":
        k = BLEU.SMOOTH_DEFAULTS["add-k"]
        correct[..., 1:] += k
        total[..., 1:] += k

    with np.errstate(divide="ignore", invalid="ignore"):
        brevity = np.where(sys_len >= ref_len, 1.0, np.exp(1.0 - ref_len / sys_len))
        brevity = np.where(sys_len > 0, brevity, 0.0)

        unmatched = correct == 0
        precision = 100.0 * correct / total
        if smooth_method == "exp":
            # The k-th unmatched order, counting from n = 1, gets a 2^k smaller pseudo-count.
            precision = np.where(
                unmatched, 100.0 / (2.0 ** np.cumsum(unmatched, axis=-1) * total), precision)
        elif smooth_method == "floor":
            floor = BLEU.SMOOTH_DEFAULTS["floor"]  # 0.1; the table's type allows None
            if floor is None:
                raise RuntimeError("sacrebleu gives no default value for 'floor' smoothing")
            precision = np.where(unmatched, 100.0 * floor / total, precision)
        else:
            precision = np.where(unmatched, 0.0, precision)
        # An order with no n-grams ends sacrebleu's loop with precision 0, i.e. BLEU 0.
        precision = np.where(total > 0, precision, 0.0)

        defined = any_match & np.all(precision > 0, axis=-1)
        geometric_mean = np.exp(np.mean(np.log(np.where(defined[..., None], precision, 1.0)),
                                        axis=-1))
    # exp(mean(log 100)) can land a hair above 100 in floating point
    return np.minimum(np.where(defined, brevity * geometric_mean, 0.0), 100.0)
