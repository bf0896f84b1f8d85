"""The privacy analysis's records in results.json (`privacy`): leakage and utility of every
encoder's vectors, clean and under each defence at each level."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from harness.analyses.privacy.utility import TaskScore
from harness.protocols import JobRecord
from harness.results.records import MetricScore, Record, is_none


class Exposure(Record):
    """One ranker's exposure of the canaries' entities of one type (Carlini et al. 2019, Sec.
    4; `harness.analyses.privacy.exposure`): the mean over canaries of log2 M - log2 rank of
    the true value among M candidates, in bits, with its percentile-bootstrap interval over
    the canaries."""

    exposure: float | None = None
    exposure_ci95: tuple[float | None, float | None] = (None, None)


class EntityRecovery(Record):
    """How many of `n` canary entities of one type the attacker's output holds: exactly (the
    tokens contiguous, in order) and partly (half the tokens or more), with exact
    Clopper-Pearson intervals, in percent; and their exposure among `candidates` (M) by every
    ranker (`rankers`: the adaptive decoder's likelihood as `decoder`, and each attack that
    ranks, `harness.protocols.Ranker`, by its label), with the strongest ranker's (the highest
    mean; `ranker`) in `exposure` and `exposure_ci95`, and `exposure_chance`, the expectation
    when the rank is uniform (log2 M - log2(M!) / M). The strongest is the maximum of a few
    means, so its interval is that ranker's own, not adjusted for the choice."""

    n: int
    exact: float | None
    exact_ci95: tuple[float | None, float | None] = (None, None)
    partial: float | None
    partial_ci95: tuple[float | None, float | None] = (None, None)
    candidates: int | None = None
    exposure: float | None = None
    exposure_ci95: tuple[float | None, float | None] = (None, None)
    exposure_chance: float | None = None
    ranker: str | None = Field(None, exclude_if=is_none)
    rankers: dict[str, Exposure] = Field({}, exclude_if=lambda v: not v)


class AttackLeakage(Record):
    """What one attack (`attack`, the registered name) read back from a point's test vectors:
    its threat model in words, whether it writes sentences (else only words, scored on the
    content-word measure alone), its options, its score on every metric that applies, and, for an
    iterative attack, its score after each step."""

    attack: str
    threat: str
    leaked: int | None = None  # the leaked training pairs it was handed
    # its options as its entry of `privacy.attacks` resolved them (defaults included)
    options: dict[str, Any] = Field({}, exclude_if=lambda v: not v)
    sentences: bool = True
    leakage: dict[str, MetricScore] = {}
    # an iterative attack's score on `Privacy.compare_on` after each step (step 0 first): the
    # gain per step (`harness.protocols.Inversion.steps`)
    steps: list[MetricScore] | None = Field(None, exclude_if=is_none)


class PrivacyPoint(Record):
    """One encoder's vectors, clean (`defence` "") or under a defence at one `level`: the
    attacker's diagnostics on the test set (`leakage`), the downstream scores on these vectors
    (`tasks`, with the exact interval of each accuracy over its test examples in `tasks_ci95`
    and each task's chance level in `tasks_chance`) and the utility against the clean vectors'
    (`harness.analyses.privacy.utility`: `utility`, the mean over the kept tasks of each one's
    share of the clean margin over chance, `tasks_utility`; `utility_ci95`, its 95% interval
    over both scores' sampling distributions, absent for the clean vectors, whose utility is 1
    by definition; `utility_left_out`, task -> why it is not in the mean), canary recovery by
    entity type, and with `non_adaptive` the clean attacker's diagnostics on the defended test
    vectors; `attacks`, every attack of `privacy.attacks` by label; the two verdicts'
    strongest attacks: `strongest`, the label of the one that recovers most on
    `Privacy.compare_on` (word leakage), and `strongest_text`, of the attacks that write
    sentences the one that recovers most on `Privacy.text_on` (text recovery)."""

    defence: str = ""
    level: Any = None
    describes: str = ""
    # the defence's guarantee at this level (`budget(dim)`: epsilon, delta, per dimension)
    budget: dict[str, float] | None = Field(None, exclude_if=is_none)
    dim: int | None = None
    leakage: dict[str, MetricScore] = {}
    utility: float | None = None
    utility_ci95: tuple[float | None, float | None] | None = Field(None, exclude_if=is_none)
    tasks: dict[str, float] = {}
    tasks_ci95: dict[str, tuple[float, float]] = {}
    tasks_chance: dict[str, float] = {}
    tasks_utility: dict[str, float] = {}
    utility_left_out: dict[str, str] = {}
    canaries: dict[str, EntityRecovery] | None = Field(None, exclude_if=is_none)
    non_adaptive: dict[str, MetricScore] | None = Field(None, exclude_if=is_none)
    attacks: dict[str, AttackLeakage] | None = Field(None, exclude_if=is_none)
    strongest: str | None = Field(None, exclude_if=is_none)
    strongest_text: str | None = Field(None, exclude_if=is_none)


def judged_by(point: PrivacyPoint, metric: str, compare_on: str | None) -> MetricScore | None:
    """What a point is judged by: the strongest attack's score on `compare_on` when attacks ran
    there, else the decoder's `metric`."""
    if point.strongest and point.attacks and compare_on:
        return point.attacks[point.strongest].leakage.get(compare_on)
    return point.leakage.get(metric)


class MatchedLeakage(Record):
    """A defence at the least-leaking level that keeps `privacy.matched_utility` of the clean
    utility, judged on the interval (its lower bound reaches the target): that level, its
    utility with the interval and its leakage; `level` None when no level keeps it."""

    level: Any = None
    utility: float | None = None
    utility_ci95: tuple[float | None, float | None] | None = Field(None, exclude_if=is_none)
    leakage: MetricScore | None = None
    # the attack the level is judged by (the strongest there) and its score on the encoder's
    # clean vectors: the leakage the defence removed is `clean` - `leakage`
    attack: str | None = Field(None, exclude_if=is_none)
    clean: MetricScore | None = Field(None, exclude_if=is_none)


class Privacy(Record):
    """Leakage against utility per encoder (results.json `privacy`): `attacker` the decoder
    trained on each defended training split, `leakage` the diagnostic of the figure, `utility`
    how utility is measured, `points` per encoder (the clean vectors first), `matched` per
    encoder and defence, and the `floor`: the leakage of the control encoder that carries no
    information (`floor_encoder`) without defence."""

    attacker: str
    leakage: str
    utility: str
    matched_utility: float
    canaries: int = 0
    points: dict[str, list[PrivacyPoint]] = {}
    matched: dict[str, dict[str, MatchedLeakage]] = {}
    floor_encoder: str | None = None
    floor: dict[str, MetricScore] = {}
    floor_canaries: dict[str, EntityRecovery] | None = Field(None, exclude_if=is_none)
    """The floor encoder's attacker on the canaries, undefended, whether or not that encoder
    is studied."""
    compare_on: str | None = Field(None, exclude_if=is_none)
    """The measure the attacks are compared on (`privacy.compare_on`): word leakage."""
    text_on: str | None = Field(None, exclude_if=is_none)
    """The measure the attacks that write sentences are compared on (`privacy.text_on`): text
    recovery."""
    matched_text: dict[str, dict[str, MatchedLeakage]] = Field({}, exclude_if=lambda v: not v)
    """`matched` for the text-recovery verdict: each level judged by `strongest_text` on
    `text_on`."""
    floor_attacks: dict[str, AttackLeakage] | None = Field(None, exclude_if=is_none)
    """Every attack on the floor encoder's clean vectors (no information): what each reads
    back from the prior and what it brings of its own."""


class PrivacyRecord(JobRecord):
    """What one privacy job found (`harness.analyses.privacy.study.privacy_job`): one point of
    a studied encoder (`part` "clean" or a defence level), with the downstream scores its
    utility is computed from; or, for the floor encoder's job (`part` "floor"), its attacker's
    canaries and every attack on its clean vectors."""

    encoder: str
    part: str
    point: PrivacyPoint | None = None
    scores: dict[str, TaskScore] = {}
    floor_canaries: dict[str, EntityRecovery] | None = None
    floor_attacks: dict[str, AttackLeakage] | None = None
    outputs: dict[str, str] = {}
    """Attack label -> the cache file of what it read back at this point (or on the floor's
    vectors), which `run` copies into the run directory (`attacks/`)."""
