"""What an analysis hands the report: its sections (`Section`), their tables (`Table`) and its
figures (`Figures`), plain data on the ground floor so a plugin builds them without importing
the report; and what it draws them from, a run's results as it reads them (`ResultsView`).

`harness.report.elements` re-exports `Section` and `Table` beside the report's formatting
helpers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol, TypeVar

from harness.protocols.records import DescriptionView, PairView, RecordedSpecView

R = TypeVar("R")

Figures = Mapping[str, bytes]
"""A report's figures: file name (under figures/) -> PNG bytes."""


class Table(NamedTuple):
    """A table of text cells: an optional caption, a header row and the rows."""

    caption: str
    header: list[str]
    rows: list[list[str]]


@dataclass
class Section:
    """A part of the report: a heading, lines of text, figures and tables.

    A line starting with "- " is an item of a list; other lines are paragraphs. Lines may hold
    Markdown links, `[text](target)`, which the HTML rendering turns into anchors. `figures`
    are file names under figures/; `kind` names a style for the HTML tables ("samples": the
    last column is text; "text": every column is).
    """

    title: str
    text: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    kind: str = ""


class ResultsView(Protocol):
    """A run's results as an analysis's `sections` and `figures` read them: the members of
    `harness.results.model.RunResults` (results.json, typed, read back by `harness report`)
    that analyses use, its records through their views (`harness.protocols.records`)."""

    @property
    def name(self) -> str:
        """The spec's name."""

    @property
    def seed(self) -> int | None:
        """The spec's seed."""

    @property
    def spec(self) -> RecordedSpecView:
        """The spec as the run recorded it (`harness.results.model.RunSpec`)."""

    @property
    def runs(self) -> Sequence[PairView]:
        """Every encoder x decoder result (`harness.results.model.PairResult`)."""

    @property
    def encoders(self) -> Mapping[str, DescriptionView] | None:
        """What each encoder is (`harness.results.model.EncoderDescription`), by name."""

    @property
    def downstream(self) -> Mapping[str, Mapping[str, float]]:
        """Encoder -> downstream task -> score."""

    @property
    def analyses(self) -> Mapping[str, Mapping[str, object]] | None:
        """The fields analyses of other packages filled, as JSON, by the analysis's registered
        name: where an analysis reads back what its `run` returned."""

    @property
    def failures(self) -> Mapping[str, str] | None:
        """The encoders whose job failed for good, with why."""

    def decoders(self) -> list[str]:
        """The decoders of the runs, in order of first appearance."""

    def primary_decoder(self) -> str | None:
        """The decoder the correlations are over, or None without runs."""

    def filled(self, key: str, kind: type[R]) -> R | None:
        """A results field an analysis declares (`AnalysisParts.results`) by its key, as the
        type `kind` it declares (`results.filled("privacy", Privacy)`); None when the run did
        not fill it."""
