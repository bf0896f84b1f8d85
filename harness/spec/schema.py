"""The spec's schema: what a benchmark spec may say, as typed, validated pydantic models.

`Spec` trains and evaluates decoders; `TableSpec` correlates published tables. Component entries
(`Component`) are resolved against the registry once, when the spec is loaded
(`harness.spec.resolve`); stages read the resolved entries and never look a name up again.
The sections an analysis reads (`privacy:`, `probes:`, ...) are the analysis's own, declared
with it (`harness.protocols.AnalysisParts`): loading validates them with the analysis's settings
class and the spec carries them under their keys, read typed with
`spec.section("privacy", PrivacySection)`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import (
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from typing_extensions import Self

from harness.generation.ranking import LengthPenalty
from harness.protocols import BuildContext, ComponentInfo, Options
from harness.registry.components import build
from harness.results.comparison import ComparisonSection
from harness.spec.document import SpecDocument
from harness.spec.sections import CurveSection, ReferenceSection, Strict


class Source(Strict):
    """Where a corpus split comes from: a generator (`generate`) or a text file (`path`)."""

    generate: str | None = None
    sentences: int | None = Field(default=None, gt=0)
    seed: int | None = Field(default=None, ge=0, lt=2**32)
    path: Path | None = None
    limit: int | None = Field(default=None, gt=0)
    prepare: str | None = None  # how to make a missing `path` file (a command to run)

    @model_validator(mode="after")
    def _one_kind(self) -> Source:
        if (self.generate is None) == (self.path is None):
            raise ValueError("give exactly one of `generate: NAME` or `path: FILE`")
        if self.generate is not None:
            from harness.synthetic import GENERATORS

            if self.generate not in GENERATORS:
                raise ValueError(f"unknown generator {self.generate!r}; known: "
                                 + ", ".join(sorted(GENERATORS)))
            if self.sentences is None:
                raise ValueError("`generate` needs `sentences: N`")
            if self.limit is not None:
                raise ValueError("`limit` applies to `path`; use `sentences` with `generate`")
        elif self.sentences is not None or self.seed is not None:
            raise ValueError("`sentences`/`seed` apply to `generate`; use `limit` with `path`")
        return self


class Normalise(Strict):
    """Text normalisation applied to both splits (BPEmb-like: lowercase, digits to 0)."""

    lowercase: bool = False
    digits: Literal["keep", "zero"] = "keep"


class CorpusSection(Strict):
    train: Source
    test: Source
    fit: Source | None = None  # text for trainable encoders (e.g. ordered, adjacent sentences)
    max_tokens: int = Field(default=15, gt=1)
    normalise: Normalise = Normalise()


class VocabSection(Strict):
    """Train BPE + fastText vectors on the corpus (`bpe_size`, `dim`, `epochs`), or load existing
    files: a sentencepiece `model` (e.g. BPEmb's `.model`) with its piece `vectors` (word2vec or
    fastText text, fastText `.bin`, or a `.npy` aligned with the model's piece ids)."""

    bpe_size: int = Field(default=4000, ge=50)
    dim: int = Field(default=100, gt=0)
    epochs: int = Field(default=5, gt=0)
    model: Path | None = None
    vectors: Path | None = None

    @model_validator(mode="after")
    def _train_or_load(self) -> VocabSection:
        if (self.model is None) != (self.vectors is None):
            raise ValueError("give both `model:` and `vectors:` to load a vocabulary, or neither "
                             "to train one on the corpus")
        training = sorted(self.model_fields_set & {"bpe_size", "dim", "epochs"})
        if self.model is not None and training:
            names, them = ", ".join(training), "them" if len(training) > 1 else "it"
            raise ValueError(f"{names} only {'apply' if len(training) > 1 else 'applies'} to "
                             f"training a vocabulary; remove {them} or remove `model`/`vectors`")
        return self


ENCODE_BATCH_SIZE = 256
"""Sentences per call of an encoder's `encode` where the spec sets no `encode.batch_size`."""


class EncodeSection(Strict):
    dtype: Literal["float32", "float16"] = "float32"
    batch_size: int = Field(default=ENCODE_BATCH_SIZE, gt=0)


def encode_batch_size(spec: Spec) -> int:
    """Sentences per call of an encoder's `encode` in a run of `spec`: its `encode.batch_size`
    (default `ENCODE_BATCH_SIZE`). Every stage that encodes reads the batch size here."""
    return spec.encode.batch_size


class GenerationSection(Strict):
    beam: int = Field(default=5, gt=0)
    max_len: int = Field(default=30, gt=0)
    batch_size: int = Field(default=256, gt=0)
    # Rank hypotheses by summed log-probability (none), by its mean per token (mean), or as the
    # paper's released code does (paper); see docs/decoders.md.
    length_penalty: LengthPenalty = "none"
    stop_after: int | None = Field(default=None, ge=1)  # ended hypotheses before a sentence stops


class ReportSection(Strict):
    formats: list[Literal["md", "html", "csv"]] = ["md"]  # csv: tables/*.csv
    # Published tables (reference-table YAML) shown beside the run's numbers, never used as
    # input: e.g. the paper's Table 4 (diagnostics) and Table 5 (downstream).
    compare: list[Path] = []


class Entry(Strict):
    """A registered component named in a spec: a bare name in YAML, or a mapping with `name:`
    plus its options.

    Loading a spec with a registry resolves the entry once (`resolved`): `info` is its registry
    entry and `settings` its options validated by the component's own options class.
    """

    CORE_KEYS: ClassVar[tuple[str, ...]] = ("name",)
    """The keys of a YAML mapping that belong to the entry; the others are the options."""

    name: str
    options: dict[str, Any] = {}
    _info: ComponentInfo | None = PrivateAttr(default=None)
    _settings: Options | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _from_yaml(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"name": value}
        if isinstance(value, dict) and "options" not in value:
            core = {k: value[k] for k in cls.CORE_KEYS if k in value}
            return {**core, "options": {k: v for k, v in value.items() if k not in core}}
        if not isinstance(value, (dict, Entry)):
            raise ValueError("expected a component name or a mapping with `name:` and options")
        return value

    def resolved(self, info: ComponentInfo, settings: Options) -> Self:
        """This entry resolved: registered as `info` (whose name it takes), options `settings`."""
        copy = self.model_copy(update={"name": info.name})
        copy._info, copy._settings = info, settings
        return copy

    @property
    def is_resolved(self) -> bool:
        """Whether the entry was resolved against a registry (`resolved`)."""
        return self._info is not None

    @property
    def info(self) -> ComponentInfo:
        """The registry entry of the component."""
        if self._info is None:
            raise RuntimeError(f"component {self.name!r} was not resolved against a registry")
        return self._info

    @property
    def settings(self) -> Options:
        """The options validated by the component's own options class."""
        if self._settings is None:
            raise RuntimeError(f"component {self.name!r} was not resolved against a registry")
        return self._settings

    @property
    def plugin(self) -> str:
        """The plugin that registered the component."""
        return self.info.plugin

    def identity(self) -> dict[str, Any]:
        """Name, validated options, plugin and its version: the component's part of cache keys."""
        return {"name": self.name, "options": self.settings.model_dump(mode="json"),
                "plugin": self.info.plugin, "version": self.info.version}

    def build(self, context: BuildContext, purpose: str = "") -> Any:
        """A new instance of the component (`harness.registry.components.build`)."""
        return build(self.info, self.settings, context, purpose)


class Component(Entry):
    """An entry of a spec's encoders, decoders, metrics or downstream tasks."""

    CORE_KEYS: ClassVar[tuple[str, ...]] = ("name", "encoders", "seeds", "family")

    # Decoders only: the encoders this decoder is trained for (default: every encoder).
    encoders: list[str] | None = None
    # Decoders: how many decoders to train per encoder, with seeds seed, seed+1, ...; the
    # diagnostics are then means over them, with their spread (training variance). Downstream
    # tasks: how many classifier seeds, overriding `downstream.seeds` (`task_seeds`).
    seeds: int = Field(default=1, ge=1)
    # Encoders only: the family the encoder belongs to (views of one model, poolings of one
    # table), which the analyses report within and across (`Spec.families`).
    family: str | None = Field(default=None, min_length=1)

    def trains_for(self, encoder: str) -> bool:
        """True when this decoder is trained for `encoder` (every encoder unless `encoders:`
        names some)."""
        return self.encoders is None or encoder in self.encoders


class ExecutorEntry(Entry):
    """The spec's `executor:`: how the encoder jobs run, a registered executor by name with its
    options (`harness list` shows them; `local`, the default, runs them in this process one
    after another)."""

    name: str = "local"


class AnalysisEntry(Entry):
    """An entry of the spec's `analyses:`: a registered analysis by name, with its options
    (`harness list` shows them). The first-party analyses read their own sections
    (`correlation:`, `breakdown:`, `probes:`) and take no options here."""


class DefenceEntry(Entry):
    """An entry of the privacy analysis's `privacy.defences`: a registered defence by name, with
    its options and
    `levels`, the values of the option its options class names in `LEVEL` (`epsilon` for
    `laplace`): the privacy analysis attacks the encoders' vectors under each level.

    `seed` seeds the defence's noise (default: the spec's `seed`). It is the defender's secret:
    a local-DP guarantee holds only while it is (docs/privacy.md), so it is excluded from the
    spec's JSON form (results.json) and its hash (provenance)."""

    CORE_KEYS: ClassVar[tuple[str, ...]] = ("name", "levels", "seed")

    levels: list[Any] | None = None
    seed: int | None = Field(default=None, ge=0, exclude=True, repr=False)
    _at_levels: list[Any] = PrivateAttr(default_factory=list)

    def noise_seed(self, spec_seed: int) -> int:
        """The seed of this defence's noise: its own `seed`, else the spec's `spec_seed`."""
        return spec_seed if self.seed is None else self.seed

    def with_levels(self, entries: list[Self]) -> Self:
        """This entry with its levels resolved, each an entry of its own settings."""
        copy = self.model_copy()
        copy._info, copy._settings, copy._at_levels = self._info, self._settings, entries
        return copy

    def at_levels(self) -> list[Self]:
        """One resolved entry per level, in the spec's order (the entry itself without
        `levels`)."""
        return list(self._at_levels) or [self]


class DownstreamSection(Strict):
    """Downstream scores per encoder: a published table (`reference`), tasks the harness
    evaluates itself (`tasks`, SentEval's data layout in `data_dir`), or both; encoders in the
    table keep its scores, the others get computed ones."""

    reference: Path | None = None
    tasks: list[Component] = []
    data_dir: Path | None = None
    config: Literal["prototyping", "literature"] = "prototyping"
    # The tasks' seed, apart from the run's: SentEval's default `params.seed`, so computed
    # scores are those SentEval's procedure gives at its default (docs/downstream.md).
    seed: int = Field(default=1111, ge=0, lt=2**32)
    # Classifier seeds per task (seed, seed + 1, ...): the score is the first's, with the
    # spread over all; a task's own `seeds:` overrides it.
    seeds: int = Field(default=5, ge=1, le=1000)

    def task_seeds(self, task: Component, seeded: bool = True) -> list[int]:
        """The seeds task `task` is evaluated at: `seed` and the next ones, as many as its own
        `seeds:` or else `seeds` asks for; only `seed` for a task whose result does not depend
        on it (`seeded` False, `harness.protocols.is_seeded`)."""
        count = task.seeds if "seeds" in task.model_fields_set else self.seeds
        return [self.seed + offset for offset in range(count if seeded else 1)]


class Spec(SpecDocument):
    """A validated benchmark spec."""

    device: str = "auto"
    corpus: CorpusSection
    vocab: VocabSection = VocabSection()
    encode: EncodeSection = EncodeSection()
    encoders: list[Component] | Literal["all"]
    # Empty decoders (and metrics) make a downstream-only run: encode, evaluate tasks, report.
    decoders: list[Component] = []
    generation: GenerationSection = GenerationSection()
    metrics: list[Component] = []
    downstream: DownstreamSection = DownstreamSection()
    comparison: ComparisonSection = ComparisonSection()
    report: ReportSection = ReportSection()
    executor: ExecutorEntry = ExecutorEntry()
    # The analyses over the jobs' results, in order: `all` (every registered analysis that can
    # run here, ordered so that each comes after those it needs) or a list of names.
    analyses: list[AnalysisEntry] | Literal["all"] = "all"
    curve: CurveSection = CurveSection()
    # A reference bundle to join: its encoders' rows instead of training them again.
    reference: ReferenceSection | None = None
    _joined: dict[str, tuple[str, bool]] = PrivateAttr(default_factory=dict)

    @field_validator("metrics")
    @classmethod
    def _metrics_for_decoders(cls, value: list[Component], info: ValidationInfo
                              ) -> list[Component]:
        if info.data.get("decoders") and not value:
            raise ValueError("at least 1 metric is needed to score the decoders' output")
        return value

    @field_validator("device")
    @classmethod
    def _known_device(cls, value: str) -> str:
        if not re.fullmatch(r"auto|cpu|cuda(:\d+)?|mps", value):
            raise ValueError(f"expected auto, cpu, cuda, cuda:N or mps, not {value!r}")
        return value

    @field_validator("encoders", "analyses", mode="before")
    @classmethod
    def _all_or_list(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str) and value != "all":
            example = f", e.g. [{value}]" if re.fullmatch(r"[a-z0-9][a-z0-9:-]*", value) else ""
            kind = "analysis" if info.field_name == "analyses" else "encoder"
            raise ValueError(f"expected `all` or a list of {kind} names{example}")
        if info.field_name == "encoders" and isinstance(value, list) and not value:
            raise ValueError("name at least one encoder (or `all`; `harness list` shows them)")
        return value

    def stated_size(self, split: str) -> int | None:
        """The most sentences the spec lets a corpus split hold, where it states one: a
        generated split's `sentences`, a file's `limit` (the filter may keep fewer)."""
        source = getattr(self.corpus, split)
        return source.sentences if source.generate is not None else source.limit


    def components(self, kind: str) -> list[Component]:
        """The spec's components of a kind (encoders already expanded from `all`)."""
        value = {"encoder": self.encoders, "decoder": self.decoders, "metric": self.metrics,
                 "task": self.downstream.tasks}[kind]
        assert isinstance(value, list)
        return value

    def studied(self, encoders: list[str]) -> list[str]:
        """The encoders among `encoders` that enter correlations and rankings: all of them with
        `comparison.controls: include`, else those not registered as controls."""
        if self.comparison.controls == "include":
            return list(encoders)
        controls = set(self.controls())
        return [name for name in encoders if name not in controls]

    def families(self) -> dict[str, list[str]]:
        """Family -> the spec's encoders declared in it (`family:`), in spec order."""
        found: dict[str, list[str]] = {}
        for encoder in self.components("encoder"):
            if encoder.family is not None:
                found.setdefault(encoder.family, []).append(encoder.name)
        return found

    def controls(self) -> list[str]:
        """The run's encoders registered as controls, in spec order, then the joined
        reference's controls (`joined`)."""
        return ([e.name for e in self.components("encoder") if e.info.control]
                + [label for label, (_, control) in self._joined.items() if control])

    def joined(self, encoders: dict[str, tuple[str, bool]], own: list[Component]) -> Self:
        """A copy for a run that joins a reference: `encoders` maps the label of each
        bundled encoder to its registered name and whether it is a control; `own` are the
        spec's encoders the run trains itself."""
        copy = self.model_copy(update={"encoders": own})
        copy._joined = dict(encoders)
        return copy

    def joined_labels(self) -> list[str]:
        """The labels of a joined reference's encoders in this run (none without one)."""
        return list(self._joined)

    def encoder_names(self) -> list[tuple[str, str]]:
        """(name in the run, registered name) of every encoder whose rows the run holds: the
        joined reference's first, then the spec's own."""
        return ([(label, name) for label, (name, _) in self._joined.items()]
                + [(e.name, e.info.name) for e in self.components("encoder")])

    def decoder_seeds(self, decoder: Component) -> list[int]:
        """The seeds of the decoders `decoder` trains per encoder: the spec's seed, then the
        next ones, one per decoder its `seeds:` asks for."""
        return [self.seed + offset for offset in range(decoder.seeds)]

    def decoders_to_train(self) -> int:
        """How many decoders the encoders' own work trains: per encoder and decoder, one per
        seed at the full size and at each `curve.train_sizes` entry; as many unconditional
        models per decoder when a metric needs them (`info`). The analyses' jobs train more
        (`harness.executors.jobs.decoders_to_train` counts them too)."""
        def extra(encoder: str) -> int:
            return len(self.curve.train_sizes) if self.curve.draws_for(encoder) else 0

        encoders = [e.name for e in self.components("encoder")]
        unconditional = sum(
            decoder.seeds * (1 + max((extra(e) for e in encoders if decoder.trains_for(e)),
                                     default=0))
            for decoder in self.decoders if any(decoder.trains_for(e) for e in encoders)
        ) if any("unconditional" in m.info.needs for m in self.metrics) else 0
        return (sum(decoder.seeds * (1 + extra(encoder.name))
                    for encoder, decoder in self.pairs()) + unconditional)

    def pairs(self) -> list[tuple[Component, Component]]:
        """The encoder x decoder jobs, in run order: each decoder for the encoders it is
        trained for."""
        return [(encoder, decoder) for encoder in self.components("encoder")
                for decoder in self.decoders if decoder.trains_for(encoder.name)]


class DiagnosticsSection(Strict):
    reference: Path


class TableSpec(SpecDocument):
    """A spec that correlates published tables without training anything.

    `diagnostics.reference` is a table of V2S scores per encoder (e.g. the paper's Table 4) and
    `downstream.reference` one of downstream scores (Table 5); the run recomputes the
    correlations (Figure 2) and the ranks (Table 1) from them.
    """

    diagnostics: DiagnosticsSection
    downstream: DownstreamSection
    comparison: ComparisonSection = ComparisonSection()
    report: ReportSection = ReportSection()
