"""The rankings analysis's records in results.json (`rankings`): each encoder's rank interval
and the paired differences behind it."""

from __future__ import annotations

from pydantic import Field

from harness.results.records import Record, is_none


class RankInterval(Record):
    """One encoder's place on one diagnostic: the point value, its rank (1 best; ties share the
    best) and its rank interval, from the pairwise tests after Holm's correction
    (`harness.analyses.rankings.paired.significance_ranks`)."""

    value: float | None
    rank: int | None = None
    rank_ci95: tuple[int | None, int | None] = (None, None)


class PairedDifference(Record):
    """Encoder `a`'s score minus encoder `b`'s on the same test sentences (the sentence the
    unit): the observed difference and its 95% paired-bootstrap interval (uncorrected); `p`,
    the two-sided p-value of `test` ("mcnemar-exact", "sign-flip-exact", "permutation" or,
    with 3 or more seeds per encoder, "sentences+seeds-welch-t");
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
    better to the ranked encoders minus those significantly worse; `groups` are the tie groups
    (cut where every encoder above is significantly better than every one below). `seeds` is
    true when the
    decoders had several seeds; `seed_variance` when every encoder had at least 3, and the
    tests then include training variance (`harness.stats.significance.seeds_t_pvalue`);
    otherwise the comparison holds for the decoders trained (seeds averaged per sentence)."""

    encoders: dict[str, RankInterval] = {}
    # encoder -> tie group (1 first; `harness.analyses.rankings.paired.tie_groups`)
    groups: dict[str, int] = Field({}, exclude_if=lambda value: not value)
    differences: list[PairedDifference] = []
    resamples: int = 0
    permutations: int | None = Field(None, exclude_if=is_none)
    correction: str = "holm"
    sentences: int = 0
    seeds: bool = False
    seed_variance: bool = False
    undefined_resamples: int = 0


Rankings = dict[str, dict[str, DiagnosticRanking]]
"""results.json `rankings`: decoder -> diagnostic -> how firmly the test set orders the encoders."""
