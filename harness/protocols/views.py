"""Read-only views of what the runner hands its plugins: the run's context, corpus and
vocabulary an executor works on, the `Execution` it returns, what an analysis's job
(`JobInputs`, a record of views) and an analysis (`AnalysisInputs`) are handed.

Each view is a `typing.Protocol` naming the members plugins read of one of the runner's own
types, which live on higher floors: `harness.stages.base.RunContext`, `harness.util.cache.Cache`,
`harness.stages.corpus.Corpus`, `harness.stages.vocab.Vocab`, `harness.executors.jobs.Outcome`,
`harness.executors.Execution`, `harness.analyses.run.AnalysisRun`
and the spec (`harness.spec.Spec`). Those types meet the views structurally (the tests check
every member). The views are for annotations, not `isinstance`: a run's members may be
computed on first use (the analyses' statistics are read from files). Records whose models live
on higher floors (a pair's result, an encoder's description) are read through their views
(`harness.protocols.records`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from harness.protocols.components import Options, Settings, SubwordVocabulary
from harness.protocols.records import DescriptionView, JobRecord, PairView
from harness.protocols.task import TaskResult

if TYPE_CHECKING:
    import numpy as np

S = TypeVar("S")
R = TypeVar("R", bound=JobRecord)


class EntryView(Protocol):
    """A component of the resolved spec (`harness.spec.Component`): its name and its options,
    validated."""

    @property
    def name(self) -> str:
        """The registered name (`avg`, `mos-lstm`, `my-analysis`)."""

    @property
    def settings(self) -> Options:
        """Its options from the spec, validated against the options class it registered."""


class PositionsView(Protocol):
    """Where a loaded spec's fields were read (`harness.spec.positions.Positions`): what an
    analysis's `resolve`, `check` and `preflight` parts locate their errors with. A location
    (`loc`) is the path of keys and list indices to a field: `("length_gap", "decoder")`."""

    def line(self, loc: tuple[str | int, ...]) -> int | None:
        """The line of the field at `loc` (or of its closest parent the file gives)."""

    def base(self, loc: tuple[str | int, ...], spec_folder: Path) -> Path:
        """What a relative path at `loc` is relative to: the spec's folder, or the current
        directory for a value given with `--set`."""

    def error(self, message: str, loc: tuple[str | int, ...]) -> Exception:
        """A `harness.errors.SpecError` naming the file, line and field of `loc`: raise it,
        or return it from a preflight part."""


class DecoderView(EntryView, Protocol):
    """A decoder of the resolved spec (`harness.spec.DecoderEntry`): an entry that knows the
    encoders it is trained for."""

    def trains_for(self, encoder: str) -> bool:
        """True when this decoder is trained for `encoder` (every encoder unless its
        `encoders:` names some)."""


class SpecView(Protocol):
    """The run's resolved spec (`harness.spec.Spec`) as plugins read it; first-party analyses
    read their own sections of it too."""

    @property
    def name(self) -> str:
        """The spec's name."""

    @property
    def seed(self) -> int:
        """The run's seed: seed every random choice from it."""

    @property
    def device(self) -> str:
        """The device the spec asks for (auto, cpu, cuda, cuda:N, mps)."""

    @property
    def decoders(self) -> Sequence[DecoderView]:
        """The decoders, in the spec's order: the first is the primary one."""

    def components(self, kind: str) -> Sequence[EntryView]:
        """The components of `kind` ("encoder", "decoder", "metric", ...), in the spec's
        order."""

    @property
    def positions(self) -> PositionsView:
        """Where each field was read: for errors found after loading."""

    def encoder_names(self) -> list[tuple[str, str]]:
        """Each encoder of the run as (its name in the run, its registered name): a joined
        reference's first, then the spec's."""

    def studied(self, encoders: list[str]) -> list[str]:
        """The encoders among `encoders` that enter the comparisons: all of them with
        `comparison.controls: include`, else those not registered as controls."""

    def section(self, key: str, kind: type[S]) -> S:
        """An analysis's section by its key (`spec.section("privacy", PrivacySection)`): the
        settings its analysis declares (`AnalysisParts.settings`) as the class `kind`,
        validated, defaults where the file gives none. LookupError where no installed
        analysis declares `key`, TypeError where its class is not `kind`."""

    def with_section(self, key: str, section: Settings) -> SpecView:
        """A copy with the analysis section `key` replaced by `section` (what an analysis's
        `resolve` part returns when it completes its section)."""


class CacheView(Protocol):
    """The artifact store (`harness.util.cache.Cache`): where everything a run computes lies,
    keyed by what determines it, shared by every process of the run."""

    root: Path
    """The cache's directory."""
    hits: int
    """Artifacts found built (an executor adds a job's counts run elsewhere)."""
    builds: int
    """Artifacts built."""

    def path(self, stage: str, key: str) -> Path:
        """Where the finished artifact (stage, key) lives."""

    def exists(self, stage: str, key: str) -> bool:
        """True when the artifact is complete."""

    def produce(self, stage: str, parts: Mapping[str, object], build: Callable[[Path], object],
                *, label: str = "") -> Path:
        """The artifact's directory, built with `build(partial_dir)` when missing; `build`
        may return a JSON-able summary kept in the artifact's meta.json."""


class RunContextView(Protocol):
    """The run's context (`harness.stages.base.RunContext`): the spec, the cache, the device
    and the time spent per stage."""

    @property
    def spec(self) -> SpecView:
        """The run's resolved spec."""

    @property
    def cache(self) -> CacheView:
        """The run's artifact store."""

    @property
    def device(self) -> str:
        """The device this process works on."""

    @property
    def timings(self) -> Mapping[str, float]:
        """Wall time per stage so far, in seconds."""

    def add_time(self, stage: str, seconds: float) -> None:
        """Add `seconds` to the wall time of `stage`."""

    # Any, not object: what is built is the entry's kind's (an encoder, an attack, ...), which
    # the caller knows and a type checker cannot; check it against its protocol where it matters.
    def build(self, component: EntryView, purpose: str = "", **context: object) -> Any:
        """A new instance of `component`, built with the run's device and seed."""

    # Any, as `build`'s.
    def build_once(self, component: EntryView, **context: object) -> Any:
        """The component built with these options, built on first use only."""


class CorpusView(Protocol):
    """The run's prepared corpus (`harness.stages.corpus.Corpus`): normalised sentences, the
    training split read from its file on use."""

    @property
    def key(self) -> str:
        """What determines the corpus, as a cache key."""

    @property
    def directory(self) -> Path:
        """The corpus artifact's directory in the cache."""

    @property
    def train(self) -> Sequence[str]:
        """The training split (read-only, from disk: iterate or slice it)."""

    @property
    def test(self) -> Sequence[str]:
        """The test split."""

    @property
    def test_raw(self) -> Sequence[str]:
        """The test split as read, before normalisation."""

    @property
    def fit(self) -> Sequence[str]:
        """The text trainable encoders learn from (`corpus.fit`, else the training split)."""


class VocabView(Protocol):
    """The run's vocabulary artifact (`harness.stages.vocab.Vocab`)."""

    @property
    def key(self) -> str:
        """What determines the vocabulary, as a cache key."""

    @property
    def vocab(self) -> SubwordVocabulary:
        """The subword vocabulary itself, with a vector per id."""


class OutcomeView(Protocol):
    """What an encoder's job found, its planned jobs' records attached
    (`harness.executors.jobs.Outcome`): its pairs' results, where their samples and statistics
    lie, its task results, its jobs' records and its bookkeeping."""

    @property
    def encoder(self) -> str:
        """The encoder's name."""

    @property
    def runs(self) -> Sequence[PairView]:
        """Its pairs' results (`harness.results.model.PairResult`)."""

    @property
    def samples(self) -> Mapping[str, Sequence[Path]]:
        """Decoder -> its samples file per seed (JSON lines with `reference`, `hypothesis`)."""

    @property
    def statistics(self) -> Mapping[str, Mapping[str, Sequence[Path]]]:
        """Decoder -> metric -> its per-sentence statistics file per seed (.npy)."""

    @property
    def tasks(self) -> Sequence[TaskResult]:
        """Its downstream tasks' results."""

    @property
    def description(self) -> DescriptionView | None:
        """What the encoder is (`harness.results.model.EncoderDescription`), or None."""

    @property
    def analysis_records(self) -> Mapping[str, Sequence[Mapping[str, object]]]:
        """Analysis -> the records its jobs for this encoder returned, as JSON
        (`PlannedAnalysis.run_job`)."""

    @property
    def analysis_jobs(self) -> Sequence[str]:
        """The planned jobs whose records are attached (`Job.name`)."""

    @property
    def timings(self) -> Mapping[str, float]:
        """The job's wall time per stage."""

    @property
    def hits(self) -> int:
        """Artifacts the job found built."""

    @property
    def builds(self) -> int:
        """Artifacts the job built."""


class ExecutionView(Protocol):
    """What an executor returns (`harness.executors.Execution`): the jobs' outcomes in the
    spec's encoder order, and the encoders whose job failed for good, with why."""

    @property
    def outcomes(self) -> Sequence[OutcomeView]:
        """One per encoder whose job succeeded, in the spec's order."""

    @property
    def failures(self) -> Mapping[str, str]:
        """Encoder -> why its job failed (its results are missing)."""


@dataclass(frozen=True)
class JobInputs:
    """What an analysis's job is handed (`PlannedAnalysis.run_job`): the run's context (spec,
    cache, device) as the job's process has it, the run's corpus and vocabulary, and the
    analysis's own options, validated. The executor builds it (`harness.executors.plan`); the
    pipeline's stages take it (`harness.executors.toolkit`)."""

    ctx: RunContextView
    corpus: CorpusView
    vocab: VocabView
    options: Options


class AnalysisInputs(Protocol):
    """A run after its jobs, as an analysis's `run` is handed it
    (`harness.analyses.run.AnalysisRun`): what a job of the analysis is handed (the context,
    corpus, vocabulary and the analysis's options, as in `JobInputs`) and the jobs' results."""

    @property
    def ctx(self) -> RunContextView:
        """The run's context."""

    @property
    def corpus(self) -> CorpusView:
        """The run's corpus."""

    @property
    def vocab(self) -> VocabView:
        """The run's vocabulary."""

    @property
    def options(self) -> Options:
        """The analysis's own options, validated."""

    @property
    def spec(self) -> SpecView:
        """The run's resolved spec."""

    @property
    def execution(self) -> ExecutionView:
        """The jobs' outcomes and failures."""

    @property
    def out(self) -> Path:
        """The run directory, for files of the analysis's own."""

    @property
    def fields(self) -> Mapping[str, object]:
        """The results fields the analyses before it filled."""

    @property
    def runs(self) -> Sequence[PairView]:
        """Every encoder x decoder result of the jobs that succeeded
        (`harness.results.model.PairResult`)."""

    @property
    def encoders(self) -> Sequence[str]:
        """The spec's encoders, in its order, failed jobs' included."""

    @property
    def primary(self) -> str:
        """The decoder whose diagnostics are correlated and summarised: the spec's first."""

    @property
    def descriptions(self) -> Mapping[str, DescriptionView]:
        """What each encoder whose job ran is (`harness.results.model.EncoderDescription`)."""

    @property
    def declared(self) -> Mapping[str, Mapping[str, object]]:
        """The model each encoder declares it is (`Encoder.declares`)."""

    def records(self, kind: type[R]) -> list[R]:
        """What this analysis's jobs returned (`PlannedAnalysis.run_job`), each read as `kind`,
        in the spec's order of the encoders (those whose jobs succeeded)."""

    @property
    def statistics(self) -> tuple[Mapping[tuple[str, str], Mapping[str, Sequence[np.ndarray]]],
                                  Mapping[str, Mapping[str, np.ndarray]]]:
        """Every job's per-sentence metric statistics, (decoder, metric) -> encoder -> one
        array per seed, and metric -> encoder -> the statistics at the encoder's chance
        level; each file read once."""
