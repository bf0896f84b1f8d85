"""Typed results, from the runner to the report: what `RUN_DIR/results.json` holds.

The runner builds a `RunResults`; the report, `harness compare`, the probes and the CLI read it.
This module owns the schema tag and reading and writing results.json; the records it is made of
live in `harness.results.records` (the base, JSON safety: undefined scores written as null, and each
metric's score) and in each analysis's folder (`harness.analyses.<name>.results`), re-exported
here.
docs/results.md documents every field; the schema `v2s-harness/results/1` is only ever extended.

Models ignore keys they do not know, so a results.json written by a later version that extends
the schema still reads.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TypeVar

from pydantic import (
    ConfigDict,
    Field,
    ValidationError,
    computed_field,
    field_serializer,
    model_validator,
)

from harness.errors import DataError
from harness.protocols import Settings, TaskResult
from harness.registry.parts import installed_parts
from harness.results.comparison import ComparisonSection, moved_to_comparison
from harness.results.records import MetricScore, Record, SeedSpread, defined, is_none, json_safe
from harness.results.signature import Signature

S = TypeVar("S")

__all__ = [
    "SCHEMA", "RESULTS_FILE", "CacheCounts", "CorpusCounts", "CurvePoint", "EncoderDescription",
    "Example", "ExampleOutput", "GenerateSummary", "JoinedReference", "MetricScore", "PairResult",
    "Provenance", "PublishedTable", "Record", "RunResults", "SeedRun", "SeedSpread", "Signature",
    "TrainSummary",
    "VocabSummary", "defined", "is_none", "json_safe", "load_results",
]

SCHEMA = "v2s-harness/results/1"
RESULTS_FILE = "results.json"


class CurvePoint(Record):
    """One epoch of a decoder's training curve."""

    epoch: int
    train_loss: float | None = None
    val_loss: float | None = None


class TrainSummary(Record):
    """How a decoder's training went (`harness.training.TrainingSummary` plus its curve)."""

    epochs: int | None = None
    steps: int | None = None
    val_loss: float | None = None
    train_loss: float | None = None
    tokens_per_s: float | None = None
    best_epoch: int | None = None
    stopped_early: bool = False
    patience: int | None = None
    curve: list[CurvePoint] = []

    @computed_field  # type: ignore[prop-decorator]
    @property
    def still_improving(self) -> bool:
        """True when training ended at its epoch limit before it had converged. With early
        stopping (`patience` > 0) that is every run that did not stop early: `epochs` is a
        maximum it hit. Without, a run whose best validation loss came in its last epoch."""
        if self.stopped_early or self.epochs is None:
            return False
        if self.patience:
            return True
        return self.best_epoch is not None and self.best_epoch >= self.epochs


class GenerateSummary(Record):
    """How fast the decoder regenerated the test sentences, and how many of its outputs were
    empty (`harness.text.outputs.is_empty`): a decoder that has not learned to generate."""

    sentences_per_s: float | None = None
    sentences: int | None = Field(None, exclude_if=is_none)
    empty: int | None = Field(None, exclude_if=is_none)


class SeedRun(Record):
    """One of several decoders trained for a pair, with its own seed."""

    seed: int
    metrics: dict[str, MetricScore] = {}
    train: TrainSummary = TrainSummary()
    generate: GenerateSummary = GenerateSummary()


class SizePoint(Record):
    """A pair's decoder trained on the first `sentences` training sentences (the spec's
    `curve`), scored on the full test set: the learning curve's points, the full split last."""

    sentences: int
    metrics: dict[str, MetricScore] = {}
    train: TrainSummary = TrainSummary()


class PairResult(Record):
    """One encoder x decoder job: its metric scores, training and generation.

    With a decoder's `seeds: N` (N > 1), `metrics` are means over the N decoders, `seeds` holds
    each one's own scores and training, and `train`/`generate` are the first seed's.
    """

    encoder: str
    decoder: str
    metrics: dict[str, MetricScore] = {}
    train: TrainSummary = TrainSummary()
    generate: GenerateSummary = GenerateSummary()
    dim: int | None = None
    seeds: list[SeedRun] | None = Field(None, exclude_if=is_none)
    by_size: list[SizePoint] | None = Field(None, exclude_if=is_none)
    # The reference bundle the row came from (`JoinedReference.id`), for a row the run did
    # not compute itself.
    bundle: str | None = Field(None, exclude_if=is_none)


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


class EncoderDescription(Record):
    """What one encoder of a run is: its registered name and plugin, validated options, the
    digests of the files it reads, the vocabulary it pools over, its vector dimension, and the
    model it declares it is (`declares`: e.g. {"model": ..., "dim": ...}). A reference table's
    row applies to the encoder only when the row's declared model matches `declares`."""

    name: str
    plugin: str = ""
    version: str | None = None
    options: dict[str, Any] = {}
    files: dict[str, str] = {}
    vocab: str | None = None
    dim: int | None = None
    declares: dict[str, Any] = {}
    control: bool = Field(False, exclude_if=lambda value: not value)
    family: str | None = Field(None, exclude_if=is_none)


# --------------------------------------------------------------------------------- provenance


class CacheCounts(Record):
    """The artifact cache a run used, and how many artifacts it reused and built."""

    root: str
    hits: int
    builds: int


class CorpusCounts(Record):
    """Sentences in the run's training and test splits."""

    train: int | None = None
    test: int | None = None


class VocabSummary(Record):
    """What the vocabulary stage recorded: trained or imported, size, and missing vectors."""

    source: str | None = None
    pieces: int | None = None
    dim: int | None = None
    missing_vectors: int | None = Field(None, exclude_if=is_none)
    vectors_format: str | None = Field(None, exclude_if=is_none)
    model_file: str | None = Field(None, exclude_if=is_none)
    vectors_file: str | None = Field(None, exclude_if=is_none)


class Provenance(Record):
    """What produced the results: versions, commit, spec hash, seed, device, time per stage."""

    harness_version: str = ""
    git_commit: str | None = None
    spec_sha256: str = ""
    packages: dict[str, str] = {}
    seed: int | None = None
    device: str | None = None
    device_name: str | None = Field(None, exclude_if=is_none)
    threads: dict[str, int] | None = Field(None, exclude_if=is_none)
    timings: dict[str, float] = {}
    cache: CacheCounts | None = Field(None, exclude_if=is_none)
    corpus: CorpusCounts | None = Field(None, exclude_if=is_none)
    vocab: VocabSummary | None = Field(None, exclude_if=is_none)


# ---------------------------------------------------------------------------------------- run


class ExampleOutput(Record):
    """What one encoder x decoder regenerated for an example input."""

    encoder: str
    decoder: str
    hypothesis: str


class Example(Record):
    """One test input and every pair's regeneration of it (paper Table 2, left)."""

    reference: str
    outputs: list[ExampleOutput] = []


class DecoderEntry(Record):
    """A decoder of the spec, as results.json keeps it."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    options: dict[str, Any] = {}
    encoders: list[str] | None = None
    seeds: int = 1


class AnalysisRecord(Record):
    """An analysis the run ran (the spec's `analyses:`), with its options, the plugin that
    registered it and that plugin's distribution (what to install to redraw its section)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    options: dict[str, Any] = {}
    plugin: str | None = Field(None, exclude_if=is_none)
    distribution: str | None = Field(None, exclude_if=is_none)


class RunSpec(Record):
    """The spec a run ran, as results.json keeps it: the resolved spec (`harness.spec.Spec`, or
    `TableSpec` for published tables) in its JSON form, every key kept. What the report and
    `harness compare` read is typed: the name and seed, the decoders, the comparison settings,
    the analyses, and each installed analysis's section (by the settings class it declares,
    `harness.protocols.AnalysisParts`; keys a later version added dropped); the corpus,
    vocabulary and generation sections stay the spec's JSON."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str = ""
    seed: int | None = Field(None, exclude_if=is_none)
    corpus: dict[str, Any] | None = Field(None, exclude_if=is_none)
    vocab: dict[str, Any] | None = Field(None, exclude_if=is_none)
    decoders: list[DecoderEntry] | None = Field(None, exclude_if=is_none)
    generation: dict[str, Any] | None = Field(None, exclude_if=is_none)
    comparison: ComparisonSection | None = Field(None, exclude_if=is_none)
    analyses: list[AnalysisRecord] | None = Field(None, exclude_if=is_none)

    @model_validator(mode="before")
    @classmethod
    def _sections(cls, value: Any) -> Any:
        """An older results.json keeps the comparison settings under `correlation:`; each
        analysis section is read by the settings class its analysis declares."""
        if not isinstance(value, dict):
            return value
        value = moved_to_comparison(value)[0]
        if not set(value) - set(cls.model_fields):
            return value  # no analysis section to read: the installed plugins are not loaded
        for key, (_, settings) in installed_parts().sections.items():
            given = value.get(key)
            if isinstance(given, dict):
                value[key] = settings.model_validate(
                    {k: v for k, v in given.items() if k in settings.model_fields})
        return value

    @field_serializer("comparison")
    def _as_given(self, section: Settings | None) -> dict[str, Any] | None:
        """The keys the spec gave (a run's spec gives them all), no default added."""
        return None if section is None else section.model_dump(mode="json", exclude_unset=True)

    def __getattr__(self, name: str) -> Any:
        """An analysis section the spec did not record reads as None."""
        try:
            return super().__getattr__(name)  # type: ignore[misc]
        except AttributeError:
            if not name.startswith("_") and name in installed_parts().sections:
                return None
            raise

    def section(self, key: str, kind: type[S]) -> S | None:
        """The analysis section `key` as the settings class `kind` its analysis declares;
        None where the run did not record it (`harness.protocols.RecordedSpecView`)."""
        return _as(getattr(self, key, None), kind, f"the recorded spec section {key!r}")


def _as(value: object, kind: type[S], what: str) -> S | None:
    """`value` when it is a `kind` or None; TypeError naming `what` otherwise."""
    if value is None or isinstance(value, kind):
        return value
    raise TypeError(f"{what} is a {type(value).__name__}, not {kind.__name__}")


class JoinedReference(Record):
    """The reference bundle a run joined (`reference:`): its file name, sha256 and `id`
    (its run's name and the sha256's first digits, which marks the rows that came from it),
    its protocol signature (the same as the run's, or the run was refused), the provenance of
    the run that made it, its encoders (label in this run -> name in the bundle) and the
    encoders this run trained again although the bundle has them (`rerun`)."""

    file: str
    sha256: str
    id: str
    signature: str
    provenance: Provenance = Provenance()
    encoders: dict[str, str] = {}
    rerun: list[str] = []


class RunResults(Record):
    """Everything a run found: results.json, typed (docs/results.md).

    A run of a spec that trains decoders fills `runs` and, with downstream tasks,
    `downstream_origin` and `downstream_details`; a run that correlates published tables has no
    runs and fills `diagnostics` and `diagnostics_source` instead. `failures` names the
    encoders whose job failed for good (their results are missing), with why. The fields an
    analysis fills are those it declares (`harness.protocols.AnalysisParts.results`), read as
    attributes like the core's (`results.correlations`).
    """

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    schema_tag: str = Field(SCHEMA, alias="schema")
    spec: RunSpec = RunSpec()
    provenance: Provenance = Provenance()
    runs: list[PairResult] = []
    diagnostics: dict[str, dict[str, float | None]] | None = Field(None, exclude_if=is_none)
    diagnostics_source: str | None = Field(None, exclude_if=is_none)
    downstream: dict[str, dict[str, float]] = {}
    downstream_source: str | None = None
    downstream_origin: dict[str, str] | None = Field(None, exclude_if=is_none)
    downstream_details: dict[str, dict[str, TaskResult]] | None = Field(None,
                                                                       exclude_if=is_none)
    downstream_missing: dict[str, str] | None = Field(None, exclude_if=is_none)
    encoders: dict[str, EncoderDescription] | None = Field(None, exclude_if=is_none)
    published: list[PublishedTable] | None = Field(None, exclude_if=is_none)
    examples: list[Example] = []
    # What an analysis filled beyond the fields it declares (`AnalysisParts.results`):
    # analysis name -> those fields, as JSON.
    analyses: dict[str, dict[str, Any]] | None = Field(None, exclude_if=is_none)
    failures: dict[str, str] | None = Field(None, exclude_if=is_none)
    # What decides the numbers except which encoders ran (`harness.reference.signature`).
    signature: Signature | None = Field(None, exclude_if=is_none)
    reference: JoinedReference | None = Field(None, exclude_if=is_none)

    @model_validator(mode="before")
    @classmethod
    def _declared(cls, value: Any) -> Any:
        """The fields the installed analyses declare (`correlations`, `rankings`, `privacy`,
        ...), each read by its declared type, a declared default where one is missing; a key
        neither the core nor an analysis declares is ignored (a later version's)."""
        if not isinstance(value, dict):
            return value
        parts = installed_parts()
        core = set(cls.model_fields) | {f.alias for f in cls.model_fields.values() if f.alias}
        typed = {key: item for key, item in value.items() if key in core}
        for key, item in {**parts.result_defaults(), **value}.items():
            if key in parts.results and item is not None:
                typed[key] = parts.validated(key, item)
        return typed

    def __getattr__(self, name: str) -> Any:
        """A field an installed analysis declares and the run did not fill reads as None."""
        try:
            return super().__getattr__(name)  # type: ignore[misc]
        except AttributeError:
            if not name.startswith("_") and name in installed_parts().results:
                return None
            raise

    def filled(self, key: str, kind: type[S]) -> S | None:
        """The results field `key` an analysis declares, as its type `kind`; None where the run
        did not fill it (`harness.protocols.ResultsView.filled`)."""
        return _as(getattr(self, key, None), kind, f"the results field {key!r}")

    @classmethod
    def field_names(cls) -> set[str]:
        """Every top-level field: the core's and those the installed analyses declare."""
        return set(cls.model_fields) | set(installed_parts().results)

    @property
    def name(self) -> str:
        """The spec's name."""
        return self.spec.name

    @property
    def seed(self) -> int | None:
        """The spec's seed."""
        return self.spec.seed

    def decoders(self) -> list[str]:
        """The decoders of the runs, in order of first appearance."""
        return list(dict.fromkeys(run.decoder for run in self.runs))

    def primary_decoder(self) -> str | None:
        """The decoder whose diagnostics are correlated and summarised (the spec's first),
        or None without runs."""
        decoders = self.decoders()
        first = self.spec.decoders[0].name if self.spec.decoders else None
        if first in decoders:
            return first
        return decoders[0] if decoders else None

    def published_diagnostics(self) -> dict[str, dict[str, float | None]]:
        """Diagnostic -> encoder -> value of a run made from published tables."""
        return self.diagnostics or {}

    def published_source(self) -> str:
        """Where a run made from published tables took its diagnostics from ("" otherwise)."""
        return self.diagnostics_source or ""

    def to_json(self) -> dict[str, Any]:
        """The results.json form: plain JSON data, undefined scores as null."""
        return json_safe(self.model_dump(mode="json", by_alias=True))

    def save(self, run_dir: Path) -> Path:
        """Write `run_dir/results.json` atomically; return its path."""
        path = run_dir / RESULTS_FILE
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=2, ensure_ascii=False,
                                  allow_nan=False) + "\n", encoding="utf-8")
        os.replace(tmp, path)
        return path


def load_results(run_dir: Path) -> RunResults:
    """Return the results.json of a run directory, checking its schema."""
    path = run_dir / RESULTS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: not found; is {run_dir} a run directory?") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: malformed JSON: {exc.msg}") from None
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema != SCHEMA:
        raise DataError(f"{path}: schema {schema!r}, expected {SCHEMA!r}")
    try:
        return RunResults.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise DataError(f"{path}: {field}: {first['msg']}") from None
