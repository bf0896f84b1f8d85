"""Read-only views of the records a run's results hold, for plugins that read them: a metric's
score, a pair's result, what an encoder is, the spec as results.json recorded it; and
`JobRecord`, the base of what an analysis's job returns.

The records themselves are `harness.results`'s pydantic models on a higher floor
(`MetricScore`, `PairResult`, `EncoderDescription`, `RunSpec`); each meets its view here
structurally (tests/test_contract_types.py checks every member), so an analysis typed against
the views reads exactly what any run, or a bundle joined to it, records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

S = TypeVar("S")


class JobRecord(BaseModel):
    """What an analysis's job found (`PlannedAnalysis.run_job`), as the analysis types it
    (subclass this): JSON, so that it travels back from whatever process or node ran the job,
    and frozen. The analysis's `run` reads its jobs' records (`AnalysisInputs.records`)."""

    model_config = ConfigDict(frozen=True)


class ScoreView(Protocol):
    """A metric's score (`harness.results.model.MetricScore`): its value, interval and
    support."""

    @property
    def value(self) -> float | None:
        """The score (None where it is undefined: Id/PERM without a permutation)."""

    @property
    def ci95(self) -> tuple[float | None, float | None]:
        """Its 95% interval."""

    @property
    def support(self) -> int | None:
        """What the value is a mean or rate over (sentences, permutations found)."""

    @property
    def higher_is_better(self) -> bool:
        """False where lower is better (perplexity)."""

    @property
    def chance(self) -> float | None:
        """The score at chance, where the metric declares one."""


class PairView(Protocol):
    """One encoder x decoder result (`harness.results.model.PairResult`)."""

    @property
    def encoder(self) -> str:
        """The encoder's name in the spec (a joined bundle's rerun: `NAME@BUNDLE`)."""

    @property
    def decoder(self) -> str:
        """The decoder's name in the spec."""

    @property
    def metrics(self) -> Mapping[str, ScoreView]:
        """Metric name -> its score (means over the decoder's seeds)."""

    @property
    def dim(self) -> int | None:
        """The encoder's vector dimension."""

    @property
    def bundle(self) -> str | None:
        """The reference bundle the row came from, for a row the run did not compute."""


class DescriptionView(Protocol):
    """What an encoder is (`harness.results.model.EncoderDescription`)."""

    @property
    def name(self) -> str:
        """Its registered name."""

    @property
    def plugin(self) -> str:
        """The plugin that registered it."""

    @property
    def options(self) -> Mapping[str, object]:
        """Its validated options, as JSON."""

    @property
    def dim(self) -> int | None:
        """Its vector dimension."""

    @property
    def declares(self) -> Mapping[str, object]:
        """The model it declares it is (`DeclaringEncoder`), {} for none."""

    @property
    def control(self) -> bool:
        """True for a control encoder (random vectors): a reference point, not a subject."""

    @property
    def family(self) -> str | None:
        """The family the spec declares it in (`family:`), for the clustered analyses."""


class RecordedSpecView(Protocol):
    """The spec as results.json recorded it (`harness.results.model.RunSpec`)."""

    @property
    def name(self) -> str:
        """The spec's name."""

    @property
    def seed(self) -> int | None:
        """The spec's seed."""

    def section(self, key: str, kind: type[S]) -> S | None:
        """An analysis's section by its key, as the settings class `kind` its analysis
        declares; None where the run did not record it."""

    def model_dump(self, *, mode: str = "python") -> dict[str, object]:
        """The recorded spec as plain data (`mode="json"`: JSON values)."""

