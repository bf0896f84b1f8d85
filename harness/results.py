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

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field, field_validator

from harness.errors import DataError
from harness.probes.results import PairProbes
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


class SeedSpread(_Record):
    """A metric over decoders trained with different seeds (decoder option `seeds`): each seed's
    value, their mean and sample standard deviation (None for a single seed)."""

    n: int
    values: list[float | None] = []
    mean: float | None = None
    std: float | None = None


class MetricScore(_Record):
    """One metric's corpus score for one encoder x decoder pair.

    `value` is on the paper's 0-100 scale where the metric has one, None where it is undefined
    (Id/PERM without a permutation). `ci95` is its 95% interval and `interval` how it was got:
    "clopper-pearson" (exact, for a proportion of `support` trials), "bootstrap" (percentile
    bootstrap over test sentences), "bootstrap-seeds" (over test sentences and the decoders'
    seeds) or, for a rate over seeds, "clopper-pearson+bootstrap-seeds" (the hull of both).
    `support` is what the value is a rate of: the (reference, hypothesis) pairs scored, or for
    Id/PERM the permutations found (summed over seeds). `undefined_resamples` counts bootstrap
    resamples in which the score was undefined (never dropped silently). With several seeds,
    `value` is the mean over seeds and `seeds` their spread.
    """

    value: float | None
    ci95: tuple[float | None, float | None] = (None, None)
    support: int | None = Field(None, exclude_if=is_none)
    higher_is_better: bool = True
    signature: str | None = Field(None, exclude_if=is_none)
    interval: str | None = Field(None, exclude_if=is_none)
    undefined_resamples: int | None = Field(None, exclude_if=is_none)
    seeds: SeedSpread | None = Field(None, exclude_if=is_none)

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

    @computed_field  # type: ignore[prop-decorator]
    @property
    def still_improving(self) -> bool:
        """True when the best validation loss came in the last epoch trained: training stopped
        at its epoch limit while validation loss was still falling."""
        return (not self.stopped_early and self.epochs is not None
                and self.best_epoch is not None and self.best_epoch >= self.epochs)


class GenerateSummary(_Record):
    """How fast the decoder regenerated the test sentences."""

    sentences_per_s: float | None = None


class SeedRun(_Record):
    """One of several decoders trained for a pair, with its own seed."""

    seed: int
    metrics: dict[str, MetricScore] = {}
    train: TrainSummary = TrainSummary()
    generate: GenerateSummary = GenerateSummary()


class PairResult(_Record):
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


class EncoderIdentity(_Record):
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
    device_name: str | None = Field(None, exclude_if=is_none)
    threads: dict[str, int] | None = Field(None, exclude_if=is_none)
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
    ci95: tuple[float | None, float | None] | None = Field(None, exclude_if=is_none)


class CorrelationSummary(_Record):
    """A diagnostic's mean and minimum rho over the tasks where it is defined."""

    mean: float | None = None
    min: float | None = None
    tasks: int | None = Field(None, exclude_if=is_none)
    mean_ci95: tuple[float | None, float | None] | None = Field(None, exclude_if=is_none)


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


# ----------------------------------------------------------------------------- rank stability


class RankInterval(_Record):
    """One encoder's place on one diagnostic: the point value, its rank (1 best; ties share the
    best) and the 95% interval of its rank over paired bootstrap resamples."""

    value: float | None
    rank: int | None = None
    rank_ci95: tuple[int | None, int | None] = (None, None)


class PairedDifference(_Record):
    """Encoder `a`'s score minus encoder `b`'s on the same resampled test sentences: the
    observed difference, its 95% paired-bootstrap interval and a two-sided bootstrap p-value;
    `significant` when the interval excludes 0."""

    a: str
    b: str
    difference: float | None
    ci95: tuple[float | None, float | None] = (None, None)
    p: float | None = None
    significant: bool = False


class DiagnosticRanking(_Record):
    """Rank stability of the encoders on one decoder's diagnostic (as MTEB's rank-stability
    analysis): each encoder's rank interval and the pairwise differences, from `resamples`
    paired bootstrap resamples of the `sentences` test sentences (and of the decoders' seeds
    when `seeds` is true)."""

    encoders: dict[str, RankInterval] = {}
    differences: list[PairedDifference] = []
    resamples: int = 0
    sentences: int = 0
    seeds: bool = False
    undefined_resamples: int = 0


class LengthBin(_Record):
    """The `n` test sentences of `low` to `high` reference tokens (inclusive; None: open)."""

    low: int | None
    high: int | None
    n: int = 0


class PairLengths(_Record):
    """One pair's diagnostics per length bin: metric -> one score per bin, in bin order."""

    encoder: str
    decoder: str
    metrics: dict[str, list[MetricScore]] = {}


class LengthBreakdown(_Record):
    """Every diagnostic per bin of reference length (`breakdown.length_bins`): the bins, which
    partition the test set, their lower `edges` (chosen from the data when `auto`, each bin then
    holding `least` sentences or more) and each pair's scores on each bin's sentences."""

    tokenisation: str = "whitespace"
    auto: bool = True
    least: int | None = None
    edges: list[int] = []
    bins: list[LengthBin] = []
    runs: list[PairLengths] = []


class FloorGain(_Record):
    """An encoder's score minus the floor encoder's, same decoder: its 95% paired-bootstrap
    interval and p-value over `n` test sentences; `significant` when the interval excludes 0."""

    gain: float | None
    ci95: tuple[float | None, float | None] = (None, None)
    p: float | None = None
    significant: bool = False
    n: int = 0


class FloorGains(_Record):
    """What each encoder adds to what the decoder manages from a vector carrying no
    information (`encoder`, a `random-gaussian`): decoder -> diagnostic -> encoder -> gain."""

    encoder: str
    resamples: int = 0
    seeds: bool = False
    gains: dict[str, dict[str, dict[str, FloorGain]]] = {}


class PublishedTable(_Record):
    """A published table shown beside the run's own numbers (`report.compare`), never used as
    input: its citation, columns, rows, and per row whether the row's declared model is the
    run's encoder (`matches`)."""

    source: str
    kind: str  # "diagnostics" or "downstream"
    columns: list[str] = []
    scores: dict[str, dict[str, float]] = {}
    models: dict[str, dict[str, Any]] = {}
    matches: dict[str, bool] = {}


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
    downstream_missing: dict[str, str] | None = Field(None, exclude_if=is_none)
    encoders: dict[str, EncoderIdentity] | None = Field(None, exclude_if=is_none)
    rankings: dict[str, dict[str, DiagnosticRanking]] | None = Field(None, exclude_if=is_none)
    lengths: LengthBreakdown | None = Field(None, exclude_if=is_none)
    floor: FloorGains | None = Field(None, exclude_if=is_none)
    published: list[PublishedTable] | None = Field(None, exclude_if=is_none)
    correlations: Correlations = Correlations()
    examples: list[Example] = []
    probes: list[PairProbes] | None = Field(None, exclude_if=is_none)  # harness.probes
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
