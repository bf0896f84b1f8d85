"""Exact-match diagnostics of Vec2Sent: Id, PERM and Id/PERM (Kerscher & Eger 2020, section 2).

Each metric reduces a (reference, hypothesis) pair to 0/1 indicators whose column sums give the
corpus score, so the core can bootstrap them like any other metric. Only surrounding whitespace
and runs of whitespace are ignored, because a decoder's spacing is not what these tests probe.

Two views of the input exist. `text="normalised"` (the default) compares the hypothesis with the
normalised input the decoder was trained to regenerate (the sample field `reference`): this is
the paper's test. `text="raw"` compares it with the input as read from the corpus (the sample
field `reference_raw`, requested through `requires`). The decoder only ever produces normalised
text, so raw scores are at most the normalised ones whenever normalisation changes a sentence
(case, digits): the gap shows how much of Id and PERM normalisation hides.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

TEXTS = ("normalised", "raw")
"""Which input the hypothesis is compared with: the decoder's target, or the corpus text."""


def whitespace_tokens(sentence: str) -> list[str]:
    """Whitespace tokens of a sentence (splitting also strips and collapses whitespace runs)."""
    return sentence.split()


def pair_indicators(references: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
    """Return an (n, 2) float array of [identical, permutation] indicators per pair.

    Identical: the hypothesis equals the reference token for token. Permutation: the two have the
    same multiset of whitespace tokens; an identical pair is a permutation too, as in the paper's
    released code (`is_permutation` sorts both token lists), so identical <= permutation.
    """
    if len(references) != len(hypotheses):
        raise ValueError(
            f"got {len(references)} references but {len(hypotheses)} hypotheses; "
            "each hypothesis needs exactly one reference")
    rows = np.zeros((len(references), 2), dtype=np.float64)
    for i, (reference, hypothesis) in enumerate(zip(references, hypotheses)):
        ref, hyp = whitespace_tokens(reference), whitespace_tokens(hypothesis)
        rows[i, 0] = ref == hyp
        # Cheap length test first: most decoder outputs differ in length from their input.
        rows[i, 1] = len(ref) == len(hyp) and Counter(ref) == Counter(hyp)
    return rows


def _of_count(count: int, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(successes, trials) of a rate over all `count` pairs: column 0 of the totals, and count."""
    if count <= 0:
        raise ValueError(f"count must be positive, got {count}")
    successes = np.asarray(totals, dtype=np.float64)[..., 0]
    return successes, np.full_like(successes, float(count))


def _percent_of(count: int, totals: np.ndarray) -> np.ndarray:
    """100 * successes / trials of `_of_count`."""
    successes, trials = _of_count(count, totals)
    return 100.0 * successes / trials


class ReferenceText:
    """Shared input handling of the metrics with a `text` option: which view of the input
    (`TEXTS`) the hypothesis is compared with."""

    def __init__(self, text: str = "normalised") -> None:
        if text not in TEXTS:
            raise ValueError(f"unknown text {text!r}; choose one of {', '.join(TEXTS)}")
        self.text = text
        # The core passes each field named here as a keyword list (harness.protocols.Metric).
        self.requires: tuple[str, ...] = ("reference_raw",) if text == "raw" else ()

    def _references(self, references: Sequence[str],
                    reference_raw: Sequence[str] | None) -> Sequence[str]:
        """The references of the chosen view: the normalised ones, or the raw ones."""
        if self.text == "raw":
            if reference_raw is None:
                raise ValueError("text='raw' compares with the raw inputs: pass reference_raw=[...] "
                                 "(the core does, from the samples' `reference_raw` field)")
            if len(reference_raw) != len(references):
                raise ValueError(f"got {len(references)} references but {len(reference_raw)} "
                                 "raw references")
            return reference_raw
        return references


class _ExactMatchMetric(ReferenceText):
    """Shared input handling: which reference text the indicators are computed against.

    Every exact-match score is a percentage of trials, so each declares
    `proportion(totals, count) -> (successes, trials)` and `proportion_scale = 100.0`
    (harness.protocols.Metric): the core then gives the exact binomial interval of
    Clopper & Pearson (1934) and reports the trials as the score's support.
    """

    proportion_scale = 100.0

    def _indicators(self, references: Sequence[str], hypotheses: Sequence[str],
                    reference_raw: Sequence[str] | None) -> np.ndarray:
        return pair_indicators(self._references(references, reference_raw), hypotheses)


class IdentityMetric(_ExactMatchMetric):
    """Id: the percentage of outputs identical to their input (paper section 2, Id(x, y)).

    Statistics per pair: [identical].
    """

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str],
                            reference_raw: Sequence[str] | None = None) -> np.ndarray:
        """Return an (n, 1) array: 1 where the hypothesis is identical to the reference."""
        return self._indicators(references, hypotheses, reference_raw)[:, :1]

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Return 100 * #identical / count for totals (..., 1), over any leading batch dims."""
        return _percent_of(count, totals)

    def proportion(self, totals: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Return (#identical, count): Id is a rate over every pair scored."""
        return _of_count(count, totals)


class PermutationMetric(_ExactMatchMetric):
    """PERM: the percentage of outputs that are a permutation of their input (paper section 2).

    A permutation has the same multiset of whitespace tokens as the input; an identical output
    counts as a permutation (the paper's released code does the same), and outputs of a
    different length never do. Statistics per pair: [permutation].
    """

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str],
                            reference_raw: Sequence[str] | None = None) -> np.ndarray:
        """Return an (n, 1) array: 1 where the hypothesis permutes the reference's tokens."""
        return self._indicators(references, hypotheses, reference_raw)[:, 1:]

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Return 100 * #permutations / count for totals (..., 1), over any leading batch dims."""
        return _percent_of(count, totals)

    def proportion(self, totals: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Return (#permutations, count): PERM is a rate over every pair scored."""
        return _of_count(count, totals)


class IdentityPerPermutationMetric(_ExactMatchMetric):
    """Id/PERM: the percentage of permutations that are exact (paper section 2, Id divided by PERM).

    Equals 100 * #identical / #permutations, i.e. 100 * Id / PERM, since identical outputs are
    permutations too; it measures word order given the right words. Undefined (NaN) when no
    output is a permutation (the paper's code would divide by zero): a 0 there would rank the
    encoder last in correlations and ranks, and pull bootstrap intervals towards 0. Statistics
    per pair: [identical, permutation].
    """

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str],
                            reference_raw: Sequence[str] | None = None) -> np.ndarray:
        """Return an (n, 2) array of [identical, permutation] indicators."""
        return self._indicators(references, hypotheses, reference_raw)

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Return 100 * #identical / #permutations (NaN without permutations) for totals
        (..., 2)."""
        totals = np.asarray(totals, dtype=np.float64)
        identical, permutations = totals[..., 0], totals[..., 1]
        # Divide only where there is a permutation: an empty denominator gives NaN, no warning.
        ratio = np.divide(identical, permutations, out=np.full_like(identical, np.nan),
                          where=permutations > 0)
        return 100.0 * ratio

    def proportion(self, totals: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Return (#identical, #permutations): Id/PERM is a rate over the permutations found,
        so an Id/PERM of 100 from 5 permutations rests on 5 trials, not on `count` pairs."""
        totals = np.asarray(totals, dtype=np.float64)
        return totals[..., 0], totals[..., 1]
