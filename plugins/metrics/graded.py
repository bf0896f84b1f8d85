"""Graded diagnostics that carry information where exact regeneration (Id) sits at its floor:
`info`, the bits of a sentence its vector gives the decoder, and `retrieval`, whether the
decoder's likelihood picks a sentence out from k - 1 others given its vector.

Both read the decoder's teacher-forced likelihoods, not its generated output, so they grade an
encoder long before its decoder regenerates anything exactly.

`info` (bits per sentence) is the mean over test sentences of

    info_i = (NLL_0(y_i) - NLL(y_i | x_i)) / ln 2,

NLL(y_i | x_i) the decoder's summed negative log-likelihood of sentence y_i given its vector x_i
and NLL_0(y_i) that of the unconditional model: the same decoder trained on vectors that carry
nothing (`harness.protocols.UnconditionalLikelihood`). It is the gain in code length the vector
buys, an estimate of the variational lower bound on the mutual information I(X; Y) of Barber &
Agakov (2003), I(X; Y) >= H(Y) + E log q(y | x), with the unconditional model's cross-entropy
standing in for H(Y) (docs/metrics.md says what that does and does not estimate).

`retrieval` (percent, option `k`) is the rate at which, for test vector x_i, the true sentence
y_i has a lower NLL(y | x_i) than each of k - 1 distractors drawn from the other test sentences
(seeded by the run's seed: the same sets for every encoder). A decoder that ignores its vector
ranks the k sentences by their prior probability alone, so its expected rate over the
distractor draws is 1/k (`chance`, reported beside the score); a perfect one scores 100.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from harness.plugin import DataError, DecoderLikelihood, UnconditionalLikelihood

PAIRS_PER_CALL = 20_000
"""(vector, sentence) pairs handed to the decoder at once: bounds the vectors copied per call."""


def distractor_sets(n: int, k: int, seed: int) -> np.ndarray:
    """Return an (n, k - 1) array: row i holds k - 1 distinct test sentences other than i, drawn
    without replacement from `seed` (the same sets for any encoder of a run)."""
    if not 2 <= k <= n:
        raise ValueError(f"k must be between 2 and the {n} test sentences, got {k}")
    rng = np.random.default_rng(seed)
    rows = np.empty((n, k - 1), dtype=np.int64)
    for i in range(n):
        drawn = rng.choice(n - 1, size=k - 1, replace=False)
        rows[i] = drawn + (drawn >= i)  # skip sentence i itself
    return rows


class RetrievalMetric:
    """Retrieval: the percentage of test vectors whose own sentence is the likeliest of k.

    Registered with `needs=("decoder",)`. Statistics per test sentence: [retrieved], 1 when
    NLL(y_i | x_i) is below NLL(y_j | x_i) for every distractor j (a tie counts as a miss). A
    proportion: its interval is Clopper-Pearson's, its chance level `chance` = 100 / k."""

    proportion_scale = 100.0

    def __init__(self, k: int = 100, seed: int = 1, pointwise: bool = False) -> None:
        if k < 2:
            raise ValueError(f"k must be at least 2, got {k}")
        self.k, self.seed, self.pointwise = int(k), int(seed), bool(pointwise)
        self.chance = 100.0 / self.k

    def signature(self) -> str:
        """The candidate set: k and the seed its distractors were drawn from; `|rank:pmi`
        when the pointwise information ranks them."""
        return f"k:{self.k}|distractors:seed-{self.seed}" + ("|rank:pmi" if self.pointwise else "")

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str], *,
                            decoder: DecoderLikelihood | None = None,
                            unconditional: UnconditionalLikelihood | None = None) -> np.ndarray:
        """Return an (n, 1) array: 1 where the decoder ranks sentence i first for vector i: by
        NLL(y | x_i), or with `pointwise` by NLL(y | x_i) - NLL_0(y), the unconditional
        model's NLL of the candidate subtracted (its pointwise information, negated), so that
        a short sentence likely under any vector is no stronger a distractor than another."""
        if decoder is None:
            raise DataError("metric 'retrieval' scores sentences with the decoder under test: "
                            "pass decoder=DecoderLikelihood(...) (the score stage does, for "
                            "metrics registered with needs=('decoder',))")
        n = len(references)
        if decoder.sentences != n:
            raise DataError(f"metric 'retrieval': the decoder scores {decoder.sentences} test "
                            f"sentences, the samples hold {n}")
        if self.k > n:
            raise DataError(f"metric 'retrieval': k = {self.k} candidates but only {n} test "
                            f"sentences; set the metric's option k to at most {n}")
        candidates = np.column_stack([np.arange(n), distractor_sets(n, self.k, self.seed)])
        vector_rows = np.repeat(np.arange(n), self.k)
        sentence_rows = candidates.reshape(-1)
        nll: np.ndarray = np.empty(len(sentence_rows), dtype=np.float64)  # (n * k,), then (n, k)
        for start in range(0, len(nll), PAIRS_PER_CALL):
            stop = start + PAIRS_PER_CALL
            nll[start:stop] = decoder.nll(vector_rows[start:stop], sentence_rows[start:stop])
        if self.pointwise:
            if unconditional is None:
                raise DataError("metric 'retrieval:pmi' ranks by the pointwise information: "
                                "pass unconditional=UnconditionalLikelihood(...) (the score "
                                "stage does, for metrics registered with "
                                "needs=('unconditional',))")
            nll -= np.asarray(unconditional.nll, dtype=np.float64)[sentence_rows]
        nll = nll.reshape(n, self.k)
        retrieved = nll[:, 0] < nll[:, 1:].min(axis=1)
        return retrieved.astype(np.float64)[:, None]

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Return 100 * #retrieved / count for totals (..., 1)."""
        successes, trials = self.proportion(totals, count)
        return 100.0 * successes / trials

    def proportion(self, totals: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Return (#retrieved, count): a rate over every test vector."""
        if count <= 0:
            raise ValueError(f"count must be positive, got {count}")
        successes = np.asarray(totals, dtype=np.float64)[..., 0]
        return successes, np.full_like(successes, float(count))


class InformationMetric:
    """Info: the mean bits per sentence by which the decoder's code for the sentence, given its
    vector, is shorter than the unconditional model's (module docstring).

    Registered with `needs=("unconditional",)` and `requires = ("nll", "tokens")` (the
    conditional NLL the generate stage records). Statistics per test sentence: [bits]; the
    corpus score is their mean, its interval the (cluster) bootstrap over sentences (and
    seeds). Not on the 0-100 scale; 0 is the level of a vector that carries nothing."""

    requires: tuple[str, ...] = ("nll", "tokens")

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str], *,
                            unconditional: UnconditionalLikelihood | None = None,
                            nll: Sequence[float] | None = None,
                            tokens: Sequence[int] | None = None) -> np.ndarray:
        """Return an (n, 1) array: (NLL_0(y_i) - NLL(y_i | x_i)) / ln 2 of each sentence."""
        if unconditional is None:
            raise DataError("metric 'info' compares with the unconditional model: pass "
                            "unconditional=UnconditionalLikelihood(...) (the score stage does, "
                            "for metrics registered with needs=('unconditional',))")
        if nll is None or tokens is None:
            raise DataError("metric 'info' needs the sample fields 'nll' and 'tokens' (the "
                            "decoder's teacher-forced NLL of each input)")
        conditional = np.asarray(nll, dtype=np.float64)
        baseline = np.asarray(unconditional.nll, dtype=np.float64)
        if not len(conditional) == len(baseline) == len(references):
            raise DataError(f"metric 'info': {len(conditional)} conditional and {len(baseline)} "
                            f"unconditional NLLs for {len(references)} sentences")
        if not np.array_equal(np.asarray(tokens), np.asarray(unconditional.tokens)):
            raise DataError("metric 'info': the unconditional model scored other subwords than "
                            "the decoder (a different vocabulary or test set)")
        if not (np.isfinite(conditional).all() and np.isfinite(baseline).all()):
            raise DataError("metric 'info': a non-finite NLL; the decoder or the unconditional "
                            "model diverged")
        return ((baseline - conditional) / math.log(2.0))[:, None]

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Return the mean bits per sentence, totals[..., 0] / count."""
        if count <= 0:
            raise ValueError(f"count must be positive, got {count}")
        return np.asarray(totals, dtype=np.float64)[..., 0] / count
