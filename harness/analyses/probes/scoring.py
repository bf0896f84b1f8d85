"""What every probe's scores share: exact-match comparison, BLEU, and rates with exact intervals.

Outputs are compared with their targets as the Id diagnostic compares them: token for token
after splitting on whitespace (Kerscher & Eger 2020, section 2). BLEU is sacrebleu's, with its
defaults (13a tokenisation; sentence BLEU with exponential smoothing), on the 0-100 scale.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.analyses.probes.results import ProbeRate
from harness.stats.intervals import proportion_interval


def same(first: str, second: str) -> bool:
    """True when two sentences have the same whitespace tokens in the same order."""
    return first.split() == second.split()


def rate(successes: int, trials: int) -> ProbeRate:
    """`successes` of `trials` as a percentage with its exact Clopper-Pearson 95% interval."""
    value, low, high = proportion_interval(successes, trials)
    return ProbeRate(value=None if trials == 0 else 100.0 * value,
                     ci95=(100.0 * low, 100.0 * high), successes=successes, support=trials)


def sentence_bleu(hypothesis: str, reference: str) -> float:
    """sacrebleu's sentence BLEU of one output against one reference (0-100)."""
    from sacrebleu import sentence_bleu as bleu

    return float(bleu(hypothesis, [reference]).score)


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float | None:
    """sacrebleu's corpus BLEU of outputs against their references (0-100); None for none."""
    if not hypotheses:
        return None
    from sacrebleu import corpus_bleu as bleu

    # force: the texts are the corpus' whitespace-tokenised sentences (as the BLEU metric's),
    # about which sacrebleu would otherwise warn on every call.
    return float(bleu(list(hypotheses), [list(references)], force=True).score)


def mean(values: Sequence[float]) -> float | None:
    """The mean, or None for no values."""
    return sum(values) / len(values) if values else None
