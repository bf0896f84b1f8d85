"""The analysis contract: what a run computes over its jobs' results, once, after the jobs.

An analysis is one folder (the first-party ones under `harness/analyses/<name>/`): its spec
section or options, its stage, its result model, its report section and figures. It is
registered by name (`register_analyses`) and the spec's `analyses:` chooses which run.

Typed against the ground floor's views and data: what an analysis is handed
(`AnalysisInputs`, met by `harness.analyses.run.AnalysisRun`), what its job is handed
(`JobInputs`), the results it reads back (`ResultsView`, met by
`harness.results.model.RunResults`) and the report sections and figures it returns (`Section`,
`Figures`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from harness.protocols.records import JobRecord
from harness.protocols.report import Figures, ResultsView, Section
from harness.protocols.views import AnalysisInputs, JobInputs, SpecView


@runtime_checkable
class Analysis(Protocol):
    """An analysis over a run's job outcomes.

    `run` computes it and returns the results.json fields it fills: a field of
    `harness.results.model.RunResults` by its name (the first-party analyses fill `correlations`,
    `rankings`, ...), or under `analyses.<name>` any JSON value of its own. `sections` and
    `figures` show it in the report, from the results alone (`harness report RUN_DIR` redraws
    a report without running anything). Optional: `claims(results) -> list[str]` and
    `caveats(results) -> list[str]`, its sentences for the report's "What this run shows"
    (`harness.report.summary`), each a claim that survives the correction it names;
    `notes(results) -> list[str]`, lines for the report's "Notes";
    `header_rows(results) -> list[list[str]]`, rows of the report's run table;
    `csv_tables(results) -> dict[str, str]`, its CSV files (`report.formats: [csv]`). The
    report reads an analysis through these parts only."""

    def run(self, run: AnalysisInputs) -> Mapping[str, object]:
        """The results fields this analysis fills (field name -> its value), from the run
        (the spec, the cache, the jobs' outcomes, the fields analyses it `needs` filled before
        it)."""

    def sections(self, results: ResultsView, figures: Figures) -> list[Section]:
        """Its report sections, in order (none when there is nothing to show); `figures` holds
        every figure the report draws, its own among them."""

    def figures(self, results: ResultsView) -> dict[str, bytes]:
        """Its figures as file name -> PNG bytes, only those with something to show."""


@dataclass(frozen=True)
class Job:
    """A unit of work an analysis needs done for one encoder before it runs: decoders to
    train, vectors to transform, probes to decode. Declared before anything runs
    (`PlannedAnalysis.jobs`), it runs after its encoder's own job (fit, encode, the decoders,
    the downstream tasks) and after every job it `needs`, wherever the executor runs it (this
    process, a Ray task of its own), and returns its record, which travels back with the
    encoder's outcome for the analysis's `run` to read. Jobs that need nothing of each other
    may run at once."""

    analysis: str
    """The spec's name of the analysis that declared it."""
    encoder: str
    """The encoder whose vectors it works on; its job runs first."""
    part: str = ""
    """Which of the analysis's jobs for the encoder this is (a defence level: "laplace@2"),
    "" when there is one; `run_job` reads it."""
    trains: tuple[str, ...] = ()
    """The decoders it trains."""
    needs: tuple[str, ...] = ()
    """What must be done before it, besides its encoder's job: another encoder (its job: the
    vectors and decoders it leaves in the cache, such as an attack's surrogate) or another job
    of the same analysis (by its `name`)."""
    what: str = ""
    """What it does, in a few words, for the log and `harness validate`."""

    @property
    def name(self) -> str:
        """The job's name in the run: analysis, encoder and part ("privacy:avg:laplace@2")."""
        return ":".join(filter(None, (self.analysis, self.encoder, self.part)))


@runtime_checkable
class PlannedAnalysis(Analysis, Protocol):
    """An analysis with work of its own per encoder (the privacy analysis's attackers, the
    probes' decoding), planned, executed and returned: it declares that work before the run
    (`jobs`), the executor carries out each job after its encoder's job and what it `needs`
    (`run_job`) and hands back its record, and `run` builds the analysis's results from those
    records (`AnalysisInputs.records`). During `run` the cache is read-only: an artifact a job
    did not leave there is an error, not work done twice."""

    def jobs(self, spec: SpecView) -> list[Job]:
        """The jobs this analysis needs for the resolved `Spec`, each named after this
        analysis's entry in the spec; none when the spec asks nothing of it."""

    def run_job(self, job: Job, work: JobInputs) -> JobRecord:
        """Carry out `job` (its `part`) where the executor runs it: `work` holds the run's
        context, corpus and vocabulary, and this analysis's options. Return what it found; its artifacts go to
        the cache (`work.ctx.cache`)."""
