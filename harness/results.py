"""Typed results, from the runner to the report: what `RUN_DIR/results.json` holds.

The runner builds a `RunResults`; the report, `harness compare`, the probes and the CLI read it.
This module owns the schema tag, reading and writing results.json, and its JSON safety: JSON
has no NaN, so undefined scores are written as null. docs/results.md documents every field; the
schema `v2s-harness/results/1` is only ever extended.

Models ignore keys they do not know, so a results.json written by a later version that extends
the schema still reads.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.errors import DataError
from harness.protocols import TaskResult

SCHEMA = "v2s-harness/results/1"
RESULTS_FILE = "results.json"


def is_none(value: Any) -> bool:
    """True for None: the `exclude_if` of fields results.json leaves out when they are unset."""
    return value is None


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


def json_safe(value: Any) -> Any:
    """`value` with every non-finite float (an undefined score) replaced by None and tuples made
    lists: JSON has no NaN, and results.json is read by other tools than Python's."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def _defined(value: Any) -> float | None:
    """A score as results.json holds it: None where it is undefined (NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


# ----------------------------------------------------------------------------------- per pair


class MetricScore(_Record):
    """One metric's corpus score for one encoder x decoder pair.

    `value` is on the paper's 0-100 scale where the metric has one, None where it is undefined
    (Id/PERM without a permutation); `ci95` is its percentile-bootstrap 95% interval over test
    sentences; `support` is the number of (reference, hypothesis) pairs scored.
    """

    value: float | None
    ci95: tuple[float | None, float | None] = (None, None)
    support: int | None = Field(None, exclude_if=is_none)
    higher_is_better: bool = True
    signature: str | None = Field(None, exclude_if=is_none)

    @field_validator("value", mode="before")
    @classmethod
    def _undefined_is_none(cls, value: Any) -> float | None:
        return _defined(value)

    @field_validator("ci95", mode="before")
    @classmethod
    def _interval(cls, value: Any) -> tuple[float | None, float | None]:
        low, high = value
        return _defined(low), _defined(high)


class CurvePoint(_Record):
    """One epoch of a decoder's training curve."""

    epoch: int
    train_loss: float | None = None
    val_loss: float | None = None


class TrainSummary(_Record):
    """How a decoder's training went (`harness.training.TrainingSummary` plus its curve)."""

    epochs: int | None = None
    steps: int | None = None
    val_loss: float | None = None
    train_loss: float | None = None
    tokens_per_s: float | None = None
    best_epoch: int | None = None
    stopped_early: bool = False
    curve: list[CurvePoint] = []


class GenerateSummary(_Record):
    """How fast the decoder regenerated the test sentences."""

    sentences_per_s: float | None = None


class PairResult(_Record):
    """One encoder x decoder job: its metric scores, training and generation."""

    encoder: str
    decoder: str
    metrics: dict[str, MetricScore] = {}
    train: TrainSummary = TrainSummary()
    generate: GenerateSummary = GenerateSummary()
    dim: int | None = None


# --------------------------------------------------------------------------------- provenance


class CacheCounts(_Record):
    """The artifact cache a run used, and how many artifacts it reused and built."""

    root: str
    hits: int
    builds: int


class CorpusCounts(_Record):
    """Sentences in the run's training and test splits."""

    train: int | None = None
    test: int | None = None


class VocabSummary(_Record):
    """What the vocabulary stage recorded: trained or imported, size, and missing vectors."""

    source: str | None = None
    pieces: int | None = None
    dim: int | None = None
    missing_vectors: int | None = Field(None, exclude_if=is_none)
    vectors_format: str | None = Field(None, exclude_if=is_none)
    model_file: str | None = Field(None, exclude_if=is_none)
    vectors_file: str | None = Field(None, exclude_if=is_none)


class Provenance(_Record):
    """What produced the results: versions, commit, spec hash, seed, device, time per stage."""

    harness_version: str = ""
    git_commit: str | None = None
    spec_sha256: str = ""
    packages: dict[str, str] = {}
    seed: int | None = None
    device: str | None = None
    timings: dict[str, float] = {}
    cache: CacheCounts | None = Field(None, exclude_if=is_none)
    corpus: CorpusCounts | None = Field(None, exclude_if=is_none)
    vocab: VocabSummary | None = Field(None, exclude_if=is_none)


# ------------------------------------------------------------------------------- correlations


class CorrelationCell(_Record):
    """rho and p of one diagnostic x task over `n` encoders; None where undefined.
    `p_method` is "exact" (all n! permutations) or "scipy", absent when undefined."""

    rho: float | None
    p: float | None = None
    p_method: str | None = Field(None, exclude_if=is_none)
    n: int = 0


class CorrelationSummary(_Record):
    """A diagnostic's mean and minimum rho over the tasks where it is defined."""

    mean: float | None = None
    min: float | None = None
    tasks: int | None = Field(None, exclude_if=is_none)


class Correlations(_Record):
    """Diagnostics x downstream tasks across encoders (Kerscher & Eger 2020, Figure 2 and
    Table 1): the matrix, its summary, the rank tables and notes on what was missing.

    `diagnostics` holds the values correlated (diagnostic -> encoder -> value), `decoder` the
    decoder whose runs they are ("" for published tables), `sources` where they came from.
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

    def defined(self) -> bool:
        """True when at least one correlation is defined."""
        return any(cell.rho is not None for row in self.matrix.values() for cell in row.values())


# ---------------------------------------------------------------------------------------- run


class ExampleOutput(_Record):
    """What one encoder x decoder regenerated for an example input."""

    encoder: str
    decoder: str
    hypothesis: str


class Example(_Record):
    """One test input and every pair's regeneration of it (paper Table 2, left)."""

    reference: str
    outputs: list[ExampleOutput] = []


class RunResults(_Record):
    """Everything a run found: results.json, typed (docs/results.md).

    A run of a spec that trains decoders fills `runs` and, with downstream tasks,
    `downstream_origin` and `downstream_details`; a run that correlates published tables has no
    runs and fills `diagnostics` and `diagnostics_source` instead. `failures` names the
    encoders whose job failed for good (their results are missing), with why.
    """

    schema_tag: str = Field(SCHEMA, alias="schema")
    spec: dict[str, Any] = {}
    provenance: Provenance = Provenance()
    runs: list[PairResult] = []
    diagnostics: dict[str, dict[str, float | None]] | None = Field(None, exclude_if=is_none)
    diagnostics_source: str | None = Field(None, exclude_if=is_none)
    downstream: dict[str, dict[str, float]] = {}
    downstream_source: str | None = None
    downstream_origin: dict[str, str] | None = Field(None, exclude_if=is_none)
    downstream_details: dict[str, dict[str, TaskResult]] | None = Field(None,
                                                                       exclude_if=is_none)
    correlations: Correlations = Correlations()
    examples: list[Example] = []
    failures: dict[str, str] | None = Field(None, exclude_if=is_none)

    @property
    def name(self) -> str:
        """The spec's name."""
        return str(self.spec.get("name", ""))

    @property
    def seed(self) -> int | None:
        """The spec's seed."""
        seed = self.spec.get("seed")
        return None if seed is None else int(seed)

    def decoders(self) -> list[str]:
        """The decoders of the runs, in order of first appearance."""
        return list(dict.fromkeys(run.decoder for run in self.runs))

    def primary_decoder(self) -> str | None:
        """The decoder the correlations are over (the spec's first), or None without runs."""
        decoders = self.decoders()
        if self.correlations.decoder in decoders:
            return self.correlations.decoder
        return decoders[0] if decoders else None

    def published_diagnostics(self) -> dict[str, dict[str, float | None]]:
        """Diagnostic -> encoder -> value of a run made from published tables."""
        return self.diagnostics or self.correlations.diagnostics

    def published_source(self) -> str:
        """Where a run made from published tables took its diagnostics from ("" otherwise)."""
        return self.diagnostics_source or self.correlations.sources.get("diagnostics", "")

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
