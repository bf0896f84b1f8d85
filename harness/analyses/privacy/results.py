"""The privacy analysis's records in results.json (`privacy`): leakage and utility of every
encoder's vectors, clean and under each defence at each level."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from harness.results.records import MetricScore, Record, is_none


class EntityRecovery(Record):
    """How many of `n` canary entities of one type the attacker's output holds: exactly (the
    tokens contiguous, in order) and partly (half the tokens or more), with exact
    Clopper-Pearson intervals, in percent."""

    n: int
    exact: float | None
    exact_ci95: tuple[float | None, float | None] = (None, None)
    partial: float | None
    partial_ci95: tuple[float | None, float | None] = (None, None)


class PrivacyPoint(Record):
    """One encoder's vectors, clean (`defence` "") or under a defence at one `level`: the
    attacker's diagnostics on the test set (`leakage`), the downstream scores on these vectors
    (`tasks`, with the exact interval of each accuracy over its test examples in `tasks_ci95`)
    and the utility relative to the clean vectors' (`utility`; `utility_ci95` from the tasks'
    intervals, the clean scores held fixed, when every task has one), canary recovery by entity
    type, and with `non_adaptive` the clean attacker's diagnostics on the defended test
    vectors."""

    defence: str = ""
    level: Any = None
    describes: str = ""
    dim: int | None = None
    leakage: dict[str, MetricScore] = {}
    utility: float | None = None
    utility_ci95: tuple[float | None, float | None] | None = Field(None, exclude_if=is_none)
    tasks: dict[str, float] = {}
    tasks_ci95: dict[str, tuple[float, float]] = {}
    canaries: dict[str, EntityRecovery] | None = Field(None, exclude_if=is_none)
    non_adaptive: dict[str, MetricScore] | None = Field(None, exclude_if=is_none)


class MatchedLeakage(Record):
    """A defence at the strongest level keeping `privacy.matched_utility` of the clean utility:
    that level, its utility and its leakage; `level` None when no level keeps it."""

    level: Any = None
    utility: float | None = None
    leakage: MetricScore | None = None


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
