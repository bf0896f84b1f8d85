"""Every diagnostic per bin of reference length.

What a decoder regenerates depends on how long the input is: short sentences are easier to
reproduce exactly (Kerscher & Eger 2020 filter to fewer than 15 tokens for that reason). Each
pair's diagnostics are recomputed on the test sentences of each length bin, from the same
per-sentence sufficient statistics as the full-corpus score (`harness.stats.metric_score` on the
bin's rows: corpus BLEU from the bin's summed n-gram counts, the exact interval for a
proportion, a bootstrap over the bin's sentences, and its seeds, otherwise).

A reference's length is its number of whitespace tokens after normalisation: the tokens
`corpus.max_tokens` counts. The bins partition the test set: bin i holds the sentences of
`edges[i-1]` to `edges[i] - 1` tokens, the first every shorter one, the last every longer one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from harness.analyses.lengths.results import LengthBin, LengthBreakdown, PairLengths
from harness.analyses.lengths.spec import breakdown_settings
from harness.analyses.run import Statistics
from harness.errors import plugin_call
from harness.protocols import Metric, higher_is_better
from harness.results.model import MetricScore
from harness.stages.base import RunContext

TOKENISATION = "whitespace"
"""How a reference's length is counted: `str.split()` of the normalised reference."""

MAX_BINS = 5
"""At most this many bins when they are chosen from the data."""

MIN_BIN = 30
"""Fewest sentences in a bin chosen from the data..."""

MIN_SHARE = 0.1
"""...or this share of the test set, when that is more."""


def reference_lengths(references: Sequence[str]) -> np.ndarray:
    """Each reference's length in whitespace tokens (`TOKENISATION`), as int64."""
    return np.array([len(reference.split()) for reference in references], dtype=np.int64)


def bin_index(lengths: np.ndarray, edges: Sequence[int]) -> np.ndarray:
    """Each sentence's bin: the number of `edges` at or below its length (0 to len(edges))."""
    return np.searchsorted(np.asarray(edges, dtype=np.int64), lengths, side="right")


def least_per_bin(n: int) -> int:
    """Fewest sentences a bin chosen from the data holds: `MIN_BIN` or `MIN_SHARE` of n."""
    return max(MIN_BIN, math.ceil(MIN_SHARE * n))


def auto_edges(lengths: np.ndarray) -> list[int]:
    """Return bin edges chosen from the lengths' quantiles, every bin `least_per_bin` or more.

    With k = min(MAX_BINS, n // least) bins wanted, the j-th edge is the length at which the
    count of shorter sentences comes closest to j n / k (lengths are whole tokens, so equal
    shares are rarely possible). A bin that still holds fewer than `least` sentences is merged
    with its smaller neighbour, smallest first, until none does; fewer than 2 x least sentences,
    or a single length, give one bin (no edge).
    """
    values = np.sort(np.asarray(lengths, dtype=np.int64))
    n, least = len(values), least_per_bin(len(values))
    wanted = min(MAX_BINS, n // least)
    if wanted < 2:
        return []
    candidates = np.unique(values)[1:]  # a cut below the shortest length cuts nothing
    if candidates.size == 0:
        return []
    shorter = np.searchsorted(values, candidates, side="left")
    edges = sorted({int(candidates[np.argmin(np.abs(shorter - j * n / wanted))])
                    for j in range(1, wanted)})
    while edges:
        counts = np.bincount(bin_index(values, edges), minlength=len(edges) + 1)
        small = int(np.argmin(counts))
        if counts[small] >= least:
            break
        if small == 0:
            edges.pop(0)
        elif small == len(edges) or counts[small - 1] <= counts[small + 1]:
            edges.pop(small - 1)  # merged with the bin before it
        else:
            edges.pop(small)  # merged with the bin after it
    return edges


def length_bins(lengths: np.ndarray, edges: Sequence[int]) -> list[LengthBin]:
    """The bins `edges` make, each with its number of sentences."""
    counts = np.bincount(bin_index(lengths, edges), minlength=len(edges) + 1)
    lows: list[int | None] = [None, *edges]
    highs: list[int | None] = [edge - 1 for edge in edges] + [None]
    return [LengthBin(low=low, high=high, n=int(count))
            for low, high, count in zip(lows, highs, counts)]


def _bin_score(metric: Metric, statistics: list[np.ndarray], rows: np.ndarray, *,
               seed: int, resamples: int) -> MetricScore:
    """The metric's score on the sentences `rows` selects, over every seed."""
    from harness.stats import metric_score

    if not rows.any():
        return MetricScore(value=None, support=0, higher_is_better=higher_is_better(metric))
    return metric_score(metric, [seed_statistics[rows] for seed_statistics in statistics],
                        seed=seed, resamples=resamples)


def length_breakdown(ctx: RunContext, statistics: Statistics, references: Sequence[str]
                     ) -> LengthBreakdown | None:
    """Return every pair's diagnostics per length bin of the test `references` (in test-set
    order, as the statistics' rows are), or None when no pair was scored.

    The bins are `breakdown.length_bins`: the edges it lists, or with `auto` those
    `auto_edges` chooses. Each bin's scores are `harness.stats.metric_score` of the bin's rows
    of every seed's statistics, with the score stage's resamples and the run's seed; a bin
    without sentences gets an undefined score of support 0.
    """
    from harness.stages.score import RESAMPLES

    if not statistics:
        return None
    started = time.perf_counter()
    lengths = reference_lengths(references)
    setting = breakdown_settings(ctx.spec).length_bins
    edges = auto_edges(lengths) if setting == "auto" else list(setting)
    index = bin_index(lengths, edges)
    runs: dict[tuple[str, str], dict[str, list[MetricScore]]] = {}
    for decoder in ctx.spec.decoders:
        for component in ctx.spec.metrics:
            encoders = statistics.get((decoder.name, component.name), {})
            if not encoders:
                continue
            metric = ctx.build_once(component)
            for encoder, seeds in encoders.items():
                if any(len(s) != len(lengths) for s in seeds):
                    raise ValueError(f"{encoder} / {decoder.name}: {component.name} has "
                                     f"statistics of {[len(s) for s in seeds]} sentences, "
                                     f"the test set {len(lengths)}")
                with plugin_call(component.plugin, f"metric {component.name!r}: corpus_score"):
                    runs.setdefault((encoder, decoder.name), {})[component.name] = [
                        _bin_score(metric, seeds, index == b, seed=ctx.spec.seed,
                                   resamples=RESAMPLES) for b in range(len(edges) + 1)]
    ctx.add_time("lengths", time.perf_counter() - started)
    return LengthBreakdown(
        tokenisation=TOKENISATION, auto=setting == "auto",
        least=least_per_bin(len(lengths)) if setting == "auto" else None, edges=edges,
        bins=length_bins(lengths, edges),
        runs=[PairLengths(encoder=encoder, decoder=decoder, metrics=metrics)
              for (encoder, decoder), metrics in runs.items()])
