"""`check_metric`: what the core relies on a `Metric` for (additive statistics it bootstraps)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from harness.protocols import InputEncoding, Metric
from harness.testing.failures import DEFAULT_SENTENCES, fail, name_of


def _default_pairs() -> tuple[list[str], list[str]]:
    """References and hypotheses covering identity, permutation, partial overlap and empty."""
    references = list(DEFAULT_SENTENCES[:8])
    hypotheses = [
        references[0],                                     # identical
        "barked a dog .",                                  # a permutation
        "hello there",                                     # longer
        "she gave her sister a book about rome .",         # partial overlap, shorter
        "",                                                # decoders can produce nothing
        "the the the the",                                 # identical, repeated words
        "did you see the book ?",                          # partial overlap
        "an entirely unrelated output sentence",           # unrelated
    ]
    return references, hypotheses


Encode = Callable[[Sequence[str]], np.ndarray]


def _statistics_checked(metric: Any, references: list[str], hypotheses: list[str],
                        call: str, encode: Encode | None = None) -> np.ndarray:
    """Return `metric.sentence_statistics(...)` as float64 after checking shape and values.

    An encoder-aware metric gets `encode` as the run would give it: the references' vectors
    from `encode` as the inputs, and `encode` itself to re-encode with."""
    name = name_of(metric)
    extra: dict[str, Any] = {}
    if encode is not None:
        extra["encoder"] = InputEncoding(name="check_metric", vectors=encode(references),
                                         encode=encode)
    try:
        raw = metric.sentence_statistics(references, hypotheses, **extra)
    except Exception as exc:
        hint = ("sentence_statistics must accept any equal-length lists of strings, "
                "including empty hypotheses")
        if encode is None:
            hint += ("; a metric registered with needs=('encoder',) is checked with "
                     "check_metric(..., encode=a sentences -> vectors function)")
        raise fail(f"{name}.{call} raised {type(exc).__name__}: {exc}", hint) from exc
    stats = np.asarray(raw)
    if stats.ndim != 2 or stats.shape[0] != len(references) or stats.shape[1] < 1:
        raise fail(f"{name}.{call} returned shape {stats.shape}, expected "
                   f"({len(references)}, k) with k >= 1",
                   "return one row of additive statistics per (reference, hypothesis) pair")
    if not np.issubdtype(stats.dtype, np.number) or np.issubdtype(stats.dtype, np.complexfloating):
        raise fail(f"{name}.{call} returned dtype {stats.dtype}",
                   "return real numbers (counts or sums)")
    stats = stats.astype(np.float64)
    if not np.isfinite(stats).all():
        row = int(np.flatnonzero(~np.isfinite(stats).all(axis=1))[0])
        raise fail(f"{name}.{call} returned a non-finite statistic in row {row} "
                   f"(reference {references[row]!r}, hypothesis {hypotheses[row]!r})",
                   "statistics must be finite so the core can sum and resample them; divide "
                   "only in corpus_score")
    return stats


def _score_checked(metric: Any, totals: np.ndarray, count: int, call: str,
                   score_range: tuple[float, float] | None) -> float:
    """Return a scalar `corpus_score` as a float after checking it is finite and in range."""
    name = name_of(metric)
    before = totals.copy()
    try:
        raw = metric.corpus_score(totals, count)
    except Exception as exc:
        raise fail(f"{name}.{call} raised {type(exc).__name__}: {exc}",
                   "corpus_score(totals, count) must accept summed statistics of shape (k,) "
                   "or (..., k)") from exc
    if not np.array_equal(before, totals):
        raise fail(f"{name}.{call} modified the totals array it was given",
                   "copy before changing (the core reuses totals across bootstrap resamples)")
    value = np.asarray(raw)
    if value.shape != () or not np.issubdtype(value.dtype, np.number):
        raise fail(f"{name}.{call} returned {raw!r} (shape {value.shape}) for totals of shape "
                   f"{totals.shape}", "return one number for a (k,) vector of totals")
    score = float(value)
    if np.isinf(score):
        raise fail(f"{name}.{call} returned {score}", "return a finite score, or NaN where the "
                   "score is undefined (e.g. an empty denominator)")
    if np.isnan(score):
        return score  # undefined for these statistics: allowed, and left out of intervals
    # A little slack: e.g. BLEU of identical text is exp(mean(log 100)) = 100.00000000000004.
    slack = 1e-9 * max(1.0, abs(score))
    if score_range is not None and not score_range[0] - slack <= score <= score_range[1] + slack:
        raise fail(f"{name}.{call} returned {score}, outside [{score_range[0]}, "
                   f"{score_range[1]}]", "report scores on the paper's 0-100 scale, or pass "
                   "score_range=None/(low, high) to check_metric for another scale")
    return score


def check_metric(metric: Any, references: Sequence[str] | None = None,
                 hypotheses: Sequence[str] | None = None, *,
                 score_range: tuple[float, float] | None = (0.0, 100.0),
                 higher_is_better: bool = True, batches: int = 5, seed: int = 0,
                 encode: Encode | None = None) -> None:
    """Return None if `metric` behaves as the core expects of a `Metric`; else raise.

    Checks that it satisfies `harness.protocols.Metric`; `sentence_statistics` returns a finite
    (n, k) array, the same on every call, whose rows depend only on their own pair (the core
    bootstraps by resampling rows); `corpus_score` of the summed statistics is one finite number
    in `score_range` (the paper's 0-100 scale by default) and leaves its input unchanged;
    `corpus_score` over a (B, k) batch of totals equals B separate calls (the core scores all
    bootstrap resamples at once, and per-sentence scores as `corpus_score(stats, 1)`); identical
    hypotheses score at least as well as different ones (`higher_is_better=False` reverses it).

    The default pairs include identical, permuted, partially overlapping, unrelated and empty
    hypotheses. Check a metric registered with `needs=("encoder",)` (`EncoderAwareMetric`) with
    `encode`, a deterministic sentences -> (n, dim) vectors function standing in for the run's
    encoder: it is then handed `encoder=InputEncoding(...)` as in a run.
    """
    name = name_of(metric)
    if not isinstance(metric, Metric):
        raise fail(f"{name} does not implement harness.protocols.Metric",
                   "give it `sentence_statistics(references, hypotheses) -> (n, k) array` and "
                   "`corpus_score(totals, count) -> score(s)`")
    if (references is None) != (hypotheses is None):
        raise ValueError("pass both references and hypotheses, or neither")
    if references is None or hypotheses is None:
        references, hypotheses = _default_pairs()
    references, hypotheses = list(references), list(hypotheses)
    if len(references) != len(hypotheses) or len(references) < 2:
        raise ValueError("check_metric needs two or more (reference, hypothesis) pairs")
    n = len(references)

    stats = _statistics_checked(metric, references, hypotheses, "sentence_statistics(refs, hyps)",
                                encode)
    k = stats.shape[1]
    again = _statistics_checked(metric, references, hypotheses,
                                "sentence_statistics(refs, hyps) (second call)", encode)
    if not np.array_equal(stats, again):
        raise fail(f"{name}.sentence_statistics is not deterministic",
                   "seed or remove any randomness: the cache stores statistics once")
    for row in range(n):
        alone = _statistics_checked(metric, references[row:row + 1], hypotheses[row:row + 1],
                                    f"sentence_statistics on pair {row} alone", encode)
        if alone.shape[1] != k or not np.allclose(alone[0], stats[row]):
            raise fail(f"{name}.sentence_statistics gives pair {row} ({references[row]!r}, "
                       f"{hypotheses[row]!r}) different statistics alone than among other pairs",
                       "each row must depend on its own pair only: put corpus-level "
                       "computation in corpus_score")

    _score_checked(metric, stats.sum(axis=0), n, "corpus_score(stats.sum(axis=0), n)",
                   score_range)

    _batches_checked(metric, stats, score_range, batches, seed)

    identical = _statistics_checked(metric, references, references,
                                    "sentence_statistics(refs, refs)", encode)
    best = _score_checked(metric, identical.sum(axis=0), n, "corpus_score of identical pairs",
                          score_range)
    shifted = references[1:] + references[:1]
    different = _statistics_checked(metric, references, shifted,
                                    "sentence_statistics(refs, other sentences)", encode)
    worse = _score_checked(metric, different.sum(axis=0), n, "corpus_score of different pairs",
                           score_range)
    # An undefined score for unrelated pairs (NaN: Id/PERM without permutations) has no order
    # to check; identical pairs must have a defined one.
    ordered = np.isnan(worse) or (best >= worse if higher_is_better else best <= worse)
    if np.isnan(best) or not ordered:
        raise fail(f"{name}: hypotheses identical to their references score {best}, "
                   f"unrelated ones {worse}", "identical output must score at least as well; "
                   "pass higher_is_better=False for a metric where lower is better")


def _batches_checked(metric: Any, stats: np.ndarray, score_range: tuple[float, float] | None,
                     batches: int, seed: int) -> None:
    """`corpus_score` over a (batches, k) batch of bootstrap totals equals one call per row,
    and `corpus_score(stats, 1)` gives one finite (or NaN) score per sentence."""
    name, (n, k) = name_of(metric), stats.shape
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=batches).astype(np.float64)
    totals = counts @ stats
    try:
        batched = np.asarray(metric.corpus_score(totals.copy(), n), dtype=np.float64)
    except Exception as exc:
        raise fail(f"{name}.corpus_score on a ({batches}, {k}) batch of totals raised "
                   f"{type(exc).__name__}: {exc}",
                   "index statistics as totals[..., j] so leading batch dimensions work") from exc
    looped = np.array([_score_checked(metric, totals[b], n, f"corpus_score(resample {b}, n)",
                                      score_range) for b in range(batches)])
    if batched.shape != (batches,) or not np.allclose(batched, looped, equal_nan=True):
        raise fail(f"{name}.corpus_score over a ({batches}, {k}) batch of totals returned "
                   f"{batched.tolist() if batched.size <= 10 else batched.shape} but one call "
                   f"per row gives {looped.tolist()}",
                   "vectorise over leading dimensions: index totals[..., j], never totals[j]")
    per_sentence = np.asarray(metric.corpus_score(stats.copy(), 1), dtype=np.float64)
    if per_sentence.shape != (n,) or np.isinf(per_sentence).any():
        raise fail(f"{name}.corpus_score(stats, 1) returned shape {per_sentence.shape} or "
                   "infinite values; the core reads it as per-sentence scores",
                   "vectorise over leading dimensions; return NaN only where a score is "
                   "undefined")
