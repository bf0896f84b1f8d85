"""The analyses' records in results.json: correlations, rank stability, length breakdown, gains
over the floor and published tables. `harness.results` re-exports every name."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from harness.records import MetricScore, Record, is_none

# ------------------------------------------------------------------------------- correlations


class CorrelationCell(Record):
    """rho and p of one diagnostic x task over `n` encoders; None where undefined.
    `p_method` is "exact" (all n! permutations) or "scipy", absent when undefined; `p_holm`
    the p-value adjusted by Holm's procedure over every cell of the matrix; `ci95` the
    interval across encoders (`Correlations.interval`)."""

    rho: float | None
    p: float | None = None
    p_method: str | None = Field(None, exclude_if=is_none)
    p_holm: float | None = Field(None, exclude_if=is_none)
    n: int = 0
    ci95: tuple[float | None, float | None] | None = Field(None, exclude_if=is_none)


class CorrelationSummary(Record):
    """A diagnostic's mean and minimum rho over the tasks where it is defined."""

    mean: float | None = None
    min: float | None = None
    tasks: int | None = Field(None, exclude_if=is_none)
    mean_ci95: tuple[float | None, float | None] | None = Field(None, exclude_if=is_none)


class Correlations(Record):
    """Diagnostics x downstream tasks across encoders (Kerscher & Eger 2020, Figure 2 and
    Table 1): the matrix, its summary, the rank tables and notes on what was missing.

    `diagnostics` holds the values correlated (diagnostic -> encoder -> value), `decoder` the
    decoder whose runs they are ("" for published tables), `sources` where they came from.
    `interval` names how the cells' and means' intervals were got ("fisher-z": across
    encoders), `correction` the multiple-comparison correction of `p_holm` over the matrix,
    and `controls` the control encoders kept out of the correlations and ranks.
    """

    method: str = "spearman"
    decoder: str = ""
    matrix: dict[str, dict[str, CorrelationCell]] = {}
    summary: dict[str, CorrelationSummary] = {}
    ranks: dict[str, dict[str, int]] = {}
    rank_by: str = ""
    notes: list[str] = []
    diagnostics: dict[str, dict[str, float | None]] = {}
    sources: dict[str, str] = {}
    interval: str | None = Field(None, exclude_if=is_none)
    correction: str | None = Field(None, exclude_if=is_none)
    controls: list[str] = []

    def defined(self) -> bool:
        """True when at least one correlation is defined."""
        return any(cell.rho is not None for row in self.matrix.values() for cell in row.values())


# ----------------------------------------------------------------------------- rank stability


class RankInterval(Record):
    """One encoder's place on one diagnostic: the point value, its rank (1 best; ties share the
    best) and its rank interval, from the pairwise tests after Holm's correction
    (`harness.stats.paired.significance_ranks`)."""

    value: float | None
    rank: int | None = None
    rank_ci95: tuple[int | None, int | None] = (None, None)


class PairedDifference(Record):
    """Encoder `a`'s score minus encoder `b`'s on the same test sentences (the sentence the
    unit): the observed difference and its 95% paired-bootstrap interval (uncorrected); `p`,
    the two-sided p-value of `test` ("mcnemar-exact", "sign-flip-exact" or "permutation");
    `p_holm`, that p adjusted by Holm's procedure over the pairs compared with it; and
    `significant`, true when `p_holm` <= 0.05: significant after correction."""

    a: str
    b: str
    difference: float | None
    ci95: tuple[float | None, float | None] = (None, None)
    p: float | None = None
    test: str | None = Field(None, exclude_if=is_none)
    p_holm: float | None = Field(None, exclude_if=is_none)
    significant: bool = False


class DiagnosticRanking(Record):
    """The encoders on one decoder's diagnostic: each encoder's rank interval and the pairwise
    differences over the `sentences` test sentences, tested and corrected by `correction` over
    all the pairs; intervals from `resamples` paired bootstrap resamples, permutation tests from
    `permutations` random swaps. A rank interval runs from 1 + the encoders significantly
    better to the ranked encoders minus those significantly worse. `seeds` is true when the
    decoders had several seeds (averaged per sentence: the comparison holds for the decoders
    trained, seed variance not included)."""

    encoders: dict[str, RankInterval] = {}
    differences: list[PairedDifference] = []
    resamples: int = 0
    permutations: int | None = Field(None, exclude_if=is_none)
    correction: str = "holm"
    sentences: int = 0
    seeds: bool = False
    undefined_resamples: int = 0


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


class FloorGain(Record):
    """An encoder's score minus its floor on the same `n` test sentences: `floor` is the
    floor's value and `basis` what it is (the floor encoder's name, or "chance": the encoder's
    own chance level). `ci95` is the paired-bootstrap interval of the gain (uncorrected), `p`
    the p-value of `test`, `p_holm` that p adjusted by Holm over the encoders compared on the
    same decoder and diagnostic, `significant` true when `p_holm` <= 0.05."""

    gain: float | None
    ci95: tuple[float | None, float | None] = (None, None)
    p: float | None = None
    test: str | None = Field(None, exclude_if=is_none)
    p_holm: float | None = Field(None, exclude_if=is_none)
    significant: bool = False
    n: int = 0
    floor: float | None = None
    basis: str | None = Field(None, exclude_if=is_none)


class FloorGains(Record):
    """What each encoder adds to its floor: decoder -> diagnostic -> encoder -> gain. The floor
    is what the decoder manages from a vector carrying no information (`encoder`, a
    `random-gaussian`), or, for a diagnostic measured in the encoder's own space (cosine), the
    encoder's chance level: `chance` holds those (metric -> encoder -> score with interval)."""

    encoder: str | None = None
    resamples: int = 0
    permutations: int | None = Field(None, exclude_if=is_none)
    seeds: bool = False
    gains: dict[str, dict[str, dict[str, FloorGain]]] = {}
    chance: dict[str, dict[str, MetricScore]] | None = Field(None, exclude_if=is_none)


class PublishedTable(Record):
    """A published table shown beside the run's own numbers (`report.compare`), never used as
    input: its citation, columns, rows, and per row whether the row's declared model is the
    run's encoder (`matches`)."""

    source: str
    kind: str  # "diagnostics" or "downstream"
    columns: list[str] = []
    scores: dict[str, dict[str, float]] = {}
    models: dict[str, dict[str, Any]] = {}
    matches: dict[str, bool] = {}
