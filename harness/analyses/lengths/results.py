"""The lengths analysis's records in results.json (`lengths`): every diagnostic per bin of
reference length."""

from __future__ import annotations

from harness.results.records import MetricScore, Record


class LengthBin(Record):
    """The `n` test sentences of `low` to `high` reference tokens (inclusive; None: open)."""

    low: int | None
    high: int | None
    n: int = 0


class PairLengths(Record):
    """One pair's diagnostics per length bin: metric -> one score per bin, in bin order."""

    encoder: str
    decoder: str
    metrics: dict[str, list[MetricScore]] = {}


class LengthBreakdown(Record):
    """Every diagnostic per bin of reference length (`breakdown.length_bins`): the bins, which
    partition the test set, their lower `edges` (chosen from the data when `auto`, each bin then
    holding `least` sentences or more) and each pair's scores on each bin's sentences."""

    tokenisation: str = "whitespace"
    auto: bool = True
    least: int | None = None
    edges: list[int] = []
    bins: list[LengthBin] = []
    runs: list[PairLengths] = []
