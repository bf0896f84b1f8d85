"""Benchmark specs: YAML -> validated, typed `Spec`, with errors that name file:line and field.

Relative paths in a spec file are resolved against the spec file's folder; paths given with
`--set` against the current directory, as a user typing them would expect.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from harness.errors import HarnessError, SpecError
from harness.protocols import Options
from harness.registry import Registry

Loc = tuple[Any, ...]


class Strict(BaseModel):
    """Spec sections reject unknown keys."""

    model_config = ConfigDict(extra="forbid")


class Source(Strict):
    """Where a corpus split comes from: a generator (`generate`) or a text file (`path`)."""

    generate: str | None = None
    sentences: int | None = Field(default=None, gt=0)
    seed: int | None = None
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


class EncodeSection(Strict):
    dtype: Literal["float32", "float16"] = "float32"
    batch_size: int = Field(default=256, gt=0)


class GenerationSection(Strict):
    beam: int = Field(default=5, gt=0)
    max_len: int = Field(default=30, gt=0)
    batch_size: int = Field(default=256, gt=0)
    # Rank hypotheses by summed log-probability (none), by its mean per token (mean), or as the
    # paper's released code does (paper); see docs/decoders.md.
    length_penalty: Literal["none", "mean", "paper"] = "none"
    stop_after: int | None = Field(default=None, ge=1)  # ended hypotheses before a sentence stops


class CorrelationSection(Strict):
    method: Literal["spearman", "pearson", "kendall"] = "spearman"
    rank_by: str = "id"  # the paper's Table 1 ranks by Id


class ReportSection(Strict):
    formats: list[Literal["md", "html"]] = ["md"]


class Component(Strict):
    """A component entry: a bare name in YAML, or a mapping with `name:` plus its options."""

    name: str
    options: dict[str, Any] = {}
    # Decoders only: the encoders this decoder is trained for (default: every encoder).
    encoders: list[str] | None = None
    _settings: Options | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _from_yaml(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"name": value}
        if isinstance(value, dict) and "name" in value and "options" not in value:
            core = {k: value[k] for k in ("name", "encoders") if k in value}
            return {**core, "options": {k: v for k, v in value.items() if k not in core}}
        if not isinstance(value, (dict, Component)):
            raise ValueError("expected a component name or a mapping with `name:` and options")
        return value

    @property
    def settings(self) -> Options:
        """The options validated by the component's own options class."""
        if self._settings is None:
            raise RuntimeError(f"component {self.name!r} was not resolved against a registry")
        return self._settings

    def identity(self) -> dict[str, Any]:
        """Name and validated options, for cache keys."""
        return {"name": self.name, "options": self.settings.model_dump(mode="json")}


class DownstreamSection(Strict):
    """Downstream scores per encoder: a published table (`reference`), tasks the harness
    evaluates itself (`tasks`, SentEval's data layout in `data_dir`), or both; encoders in the
    table keep its scores, the others get computed ones."""

    reference: Path | None = None
    tasks: list[Component] = []
    data_dir: Path | None = None
    config: Literal["prototyping", "literature"] = "prototyping"


class SpecDocument(Strict):
    """What every spec document has: a name, a seed, and what its reading found."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    seed: int = 1

    _source: str = PrivateAttr(default="<spec>")
    _sha256: str = PrivateAttr(default="")
    _problems: list[SpecError] = PrivateAttr(default_factory=list)

    @property
    def source(self) -> str:
        """The file the spec was read from."""
        return self._source

    @property
    def problems(self) -> list[SpecError]:
        """What keeps this spec from running here (missing prepared files, unavailable
        components or device): `validate` lists them and exits 2, `run` refuses to start."""
        return self._problems

    @property
    def sha256(self) -> str:
        """Hash of the spec after overrides, as recorded in provenance."""
        return self._sha256


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
    correlation: CorrelationSection = CorrelationSection()
    report: ReportSection = ReportSection()


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

    @field_validator("encoders", mode="before")
    @classmethod
    def _all_or_list(cls, value: Any) -> Any:
        if isinstance(value, str) and value != "all":
            raise ValueError(f"expected `all` or a list of encoder names, e.g. [{value}]")
        return value


    def components(self, kind: str) -> list[Component]:
        """The spec's components of a kind (encoders already expanded from `all`)."""
        value = {"encoder": self.encoders, "decoder": self.decoders, "metric": self.metrics,
                 "task": self.downstream.tasks}[kind]
        assert isinstance(value, list)
        return value


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
    correlation: CorrelationSection = CorrelationSection()
    report: ReportSection = ReportSection()




SECTION_FOR_KIND: dict[str, Loc] = {"encoder": ("encoders",), "decoder": ("decoders",),
                                    "metric": ("metrics",), "task": ("downstream", "tasks")}
PATH_FIELDS: tuple[Loc, ...] = (("corpus", "train", "path"), ("corpus", "test", "path"),
                                ("corpus", "fit", "path"),
                                ("downstream", "reference"), ("diagnostics", "reference"),
                                ("vocab", "model"), ("vocab", "vectors"),
                                ("downstream", "data_dir"))


# --------------------------------------------------------------------------- YAML with lines

def _line_map(node: yaml.Node, file: str, loc: Loc = (), lines: dict[Loc, int] | None = None
              ) -> dict[Loc, int]:
    """Map every field path in the YAML tree to its 1-based line; refuse duplicate keys."""
    lines = {} if lines is None else lines
    lines.setdefault(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[Any] = set()
        for key_node, value_node in node.value:
            key = key_node.value
            path = loc + (key,)
            if key in seen:
                raise SpecError(f"duplicate key {key!r}", file=file,
                                line=key_node.start_mark.line + 1, field=_dotted(path))
            seen.add(key)
            lines[path] = key_node.start_mark.line + 1
            _line_map(value_node, file, path, lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[loc + (index,)] = item.start_mark.line + 1
            _line_map(item, file, loc + (index,), lines)
    return lines


def _dotted(loc: Sequence[Any]) -> str:
    return ".".join(str(part) for part in loc) or "<top>"


def _line_of(lines: dict[Loc, int], loc: Loc) -> int | None:
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None


def _read_yaml(path: Path) -> tuple[Any, dict[Loc, int]]:
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError("spec file not found", file=file) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read spec: {exc}", file=file) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or exc.context or "syntax error"
        if exc.problem and exc.context:  # "while parsing a flow sequence at line 3: expected ..."
            start = exc.context_mark
            problem = (exc.context + (f" at line {start.line + 1}" if start else "")
                       + f": {exc.problem}")
        raise SpecError(f"malformed YAML: {problem}", file=file, line=line) from None
    except yaml.YAMLError as exc:
        raise SpecError(f"malformed YAML: {exc}", file=file) from None
    if node is None or not isinstance(data, dict):
        raise SpecError("a spec must be a YAML mapping (name:, corpus:, encoders:, ...)",
                        file=file, line=1)
    return data, _line_map(node, file)


# --------------------------------------------------------------------------- overrides

def _parse_override(text: str) -> tuple[Loc, Any]:
    if "=" not in text:
        raise SpecError(f"{text!r}: expected KEY.PATH=VALUE", file="--set")
    key, raw = text.split("=", 1)
    if not re.fullmatch(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*", key):
        raise SpecError(f"{text!r}: malformed key path", file="--set")
    try:
        value = yaml.safe_load(raw) if raw.strip() else raw
    except yaml.YAMLError:
        value = raw
    return tuple(int(p) if p.isdigit() else p for p in key.split(".")), value


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> set[Loc]:
    """Apply `a.b=v` overrides in place (values parsed as YAML); return the paths set."""
    changed: set[Loc] = set()
    for text in overrides:
        loc, value = _parse_override(text)
        target: Any = data
        for depth, part in enumerate(loc[:-1]):
            nxt = loc[depth + 1]
            if isinstance(target, list) and isinstance(part, int) and part < len(target):
                if isinstance(target[part], str):  # bare component name -> mapping with options
                    target[part] = {"name": target[part]}
                target = target[part]
            elif isinstance(target, dict):
                child = target.get(part)
                if not isinstance(child, (dict, list)):
                    child = [] if isinstance(nxt, int) else {}
                    target[part] = child
                target = child
            else:
                raise SpecError(f"{text!r}: cannot descend into {_dotted(loc[:depth + 1])}",
                                file="--set", field=_dotted(loc))
        last = loc[-1]
        if isinstance(target, list) and isinstance(last, int) and last < len(target):
            target[last] = value
        elif isinstance(target, dict):
            target[last] = value
        else:
            raise SpecError(f"{text!r}: no such list item", file="--set",
                            field=_dotted(loc))
        changed.add(loc)
    return changed


# --------------------------------------------------------------------------- validation

def _describe_error(error: dict[str, Any], model: type[BaseModel] | None = None) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        if model is None:
            return "unknown key"
        if not model.model_fields:
            return "unknown key; this takes no options"
        return f"unknown key; expected one of: {', '.join(model.model_fields)}"
    if kind == "missing":
        return "required field is missing"
    message = error["msg"].removeprefix("Value error, ")
    value = error.get("input")
    if kind not in ("value_error",) and not isinstance(value, (dict, list)):
        message += f" (got {value!r})"
    return message


def _is_union_tag(part: Any) -> bool:
    """Pydantic names union members in error paths (`list[Component]`, `literal['all']`)."""
    return isinstance(part, str) and "[" in part


def _model_at(model: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    """The pydantic model that owns the last key of `loc`, to list its valid keys."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = current.model_fields.get(part)
        if field is None:
            return None
        annotation = field.annotation
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        nested = [c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)]
        for c in candidates:
            nested += [a for a in getattr(c, "__args__", ())
                       if isinstance(a, type) and issubclass(a, BaseModel)]
        current = nested[0] if nested else None
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _raise_first(exc: ValidationError, *, file: str, lines: dict[Loc, int], prefix: Loc,
                 model: type[BaseModel], overridden: set[Loc]) -> None:
    errors = exc.errors()
    # `encoders: [..]` fails both union members; the `literal['all']` complaint is noise.
    errors = [e for e in errors if not (e["type"] == "literal_error" and any(
        _is_union_tag(p) for p in e["loc"]))] or errors
    located = []
    for error in errors:
        error["loc"] = tuple(p for p in error["loc"] if not _is_union_tag(p))
        loc = prefix + error["loc"]
        line = _line_of(lines, loc)
        located.append((line or 0, loc, error))
    located.sort(key=lambda item: item[0])
    line, loc, error = located[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    owner = _model_at(model, tuple(error["loc"])) if error["type"] == "extra_forbidden" else None
    source = "--set" if any(loc[:len(o)] == o for o in overridden) else file
    raise SpecError(_describe_error(error, owner) + more, file=source,
                    line=None if source == "--set" else line, field=_dotted(loc))


def _resolve_paths(spec: Spec | TableSpec, base: Path, overridden: set[Loc], file: str,
                   lines: dict[Loc, int]) -> None:
    for loc in PATH_FIELDS:
        section: Any = spec
        for part in loc[:-1]:
            section = getattr(section, part, None)
        value = getattr(section, loc[-1], None)
        if value is None:
            continue
        from_set = any(loc[:len(o)] == o for o in overridden)
        root = Path.cwd() if from_set else base
        path = value if value.is_absolute() else (root / value)
        object.__setattr__(section, loc[-1], path)
        exists = path.is_dir() if loc[-1] == "data_dir" else path.is_file()
        if not exists:
            source = "--set" if from_set else file
            prepare = (f"harness data senteval --dir {path}" if loc[-1] == "data_dir"
                       else getattr(section, "prepare", None))
            error = SpecError(f"{'directory' if loc[-1] == 'data_dir' else 'file'} not found: "
                              f"{path}"
                              + (f"; make it with: {prepare}" if prepare else ""),
                              file=source, line=None if source == "--set" else _line_of(lines, loc),
                              field=_dotted(loc))
            if not prepare:
                raise error
            spec._problems.append(error)  # declared as prepared by a command: not a typo


def resolve_components(spec: Spec, registry: Registry, *, file: str = "<spec>",
                       lines: dict[Loc, int] | None = None, overridden: set[Loc] = frozenset(),
                       base: Path | None = None) -> None:
    """Check every component name against the registry and validate its options in place.

    Relative paths in options are resolved against `base` (the spec file's folder), or the
    current directory for options given with `--set`.
    """
    lines = lines or {}
    base = base or Path.cwd()
    if spec.encoders == "all":
        spec.encoders = [Component(name=info.name) for info in registry
                         if info.kind == "encoder" and info.status() == "ok"]
        if not spec.encoders:
            raise SpecError("`encoders: all` found no available encoder", file=file,
                            line=_line_of(lines, ("encoders",)), field="encoders")
    for kind, section in SECTION_FOR_KIND.items():
        for index, component in enumerate(spec.components(kind)):
            loc = (*section, index)
            source = "--set" if any(loc[:len(o)] == o or o[:len(loc)] == loc
                                    for o in overridden) else file
            line = None if source == "--set" else _line_of(lines, loc)
            if kind == "task":
                component.name = component.name.lower()  # tasks are spelled MR or mr alike
            try:
                info = registry.get(kind, component.name)
            except HarnessError as exc:
                raise SpecError(str(exc), file=source, line=line,
                                field=_dotted(loc + ("name",))) from None
            try:
                component._settings = info.options.model_validate(component.options)
            except ValidationError as exc:
                # Options sit beside `name` in YAML: drop the `options` level from the path.
                _raise_first(exc, file=file, lines=lines, prefix=loc, model=info.options,
                             overridden=overridden)
            component._settings = _resolve_option_paths(
                component._settings, Path.cwd() if source == "--set" else base)
            if component.encoders is not None:
                where = dict(file=source, line=None if source == "--set" else
                             _line_of(lines, loc + ("encoders",)),
                             field=_dotted(loc + ("encoders",)))
                if kind != "decoder":
                    raise SpecError("only decoders take `encoders:`", **where)
                known = [e.name for e in spec.components("encoder")]
                unknown = [name for name in component.encoders if name not in known]
                if unknown:
                    raise SpecError(f"{', '.join(unknown)} not among the spec's encoders "
                                    f"({', '.join(known)})", **where)
            status = info.status(component._settings)
            if status != "ok":
                spec._problems.append(SpecError(f"{kind} {component.name!r} is {status}",
                                                file=source, line=line,
                                                field=_dotted(loc + ("name",))))
    _check_unique_names(spec, file, lines, overridden)
    _check_rank_by(spec, file, lines, overridden)
    _check_task_data(spec, registry, file, lines, overridden)


def _resolve_option_paths(settings: Options, base: Path) -> Options:
    """`settings` with its relative `Path` values made absolute against `base`."""
    updates = {name: base / value for name, value in settings
               if isinstance(value, Path) and not value.is_absolute()}
    return settings.model_copy(update=updates) if updates else settings


def _where(loc: Loc, file: str, lines: dict[Loc, int], overridden: set[Loc]) -> dict[str, Any]:
    """file, line and field of `loc` for a SpecError (`--set` when an override wrote it)."""
    from_set = any(loc[:len(o)] == o or o[:len(loc)] == loc for o in overridden)
    return {"file": "--set" if from_set else file,
            "line": None if from_set else _line_of(lines, loc), "field": _dotted(loc)}


def _check_unique_names(spec: Spec, file: str, lines: dict[Loc, int],
                        overridden: set[Loc]) -> None:
    """Each component may appear once per section: results, samples and ranks are keyed by
    name, so two entries of one name would overwrite each other."""
    for kind, section in SECTION_FOR_KIND.items():
        seen: dict[str, int] = {}
        for index, component in enumerate(spec.components(kind)):
            if component.name in seen:
                raise SpecError(
                    f"{kind} {component.name!r} appears twice (also entry {seen[component.name]}); "
                    "results are keyed by name: keep one entry, or compare option settings in "
                    "two runs (`harness compare`)", **_where((*section, index, "name"), file, lines,
                                                           overridden))
            seen[component.name] = index


def _check_device(spec: Spec, file: str, lines: dict[Loc, int], overridden: set[Loc]) -> None:
    """Record as a problem a device this machine lacks (torch is imported only for a GPU)."""
    from harness.devices import resolve_device

    try:
        resolve_device(spec.device)
    except HarnessError as exc:
        reason = str(exc).split(": ", 1)[-1]  # without resolve_device's "device 'x'" prefix
        spec._problems.append(SpecError(f"{spec.device!r}: {reason}",
                                        **_where(("device",), file, lines, overridden)))


def _check_rank_by(spec: Spec, file: str, lines: dict[Loc, int], overridden: set[Loc]) -> None:
    """An explicit `rank_by` must name one of the metrics (the default is only used when it
    does: the run notes that no rank was made otherwise)."""
    metrics = [m.name for m in spec.components("metric")]
    rank_by = spec.correlation.rank_by
    if metrics and rank_by not in metrics and "rank_by" in spec.correlation.model_fields_set:
        raise SpecError(f"{rank_by!r} is not among the spec's metrics ({', '.join(metrics)})",
                        **_where(("correlation", "rank_by"), file, lines, overridden))


def _check_task_data(spec: Spec, registry: Registry, file: str, lines: dict[Loc, int],
                     overridden: set[Loc]) -> None:
    """Record as problems the SentEval files the downstream tasks would read and cannot: found
    now, not after every decoder has trained."""
    from harness.downstream.base import GeneratedTask
    from harness.protocols import BuildContext

    data_dir = spec.downstream.data_dir
    for index, component in enumerate(spec.components("task")):
        if registry.get("task", component.name).status(component.settings) != "ok":
            continue  # already a problem
        task = registry.create("task", component.name, component.settings,
                               BuildContext(seed=spec.seed))
        if isinstance(task, GeneratedTask):
            continue  # the harness makes its data
        if data_dir is None:
            raise SpecError(f"task {component.name!r} reads SentEval data: set it to SentEval's "
                            "data/downstream directory (make one with `harness data senteval "
                            "--dir DIR`)", **_where(("downstream", "data_dir"), file, lines,
                                                    overridden))
        missing = [path for path in task.files(data_dir) if not path.is_file()]
        if missing:
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            spec._problems.append(SpecError(
                f"task {task.name} needs {missing[0]}{more}; make it with: harness data senteval "
                f"--dir {data_dir} --tasks {task.name}",
                **_where(("downstream", "tasks", index, "name"), file, lines, overridden)))


def load_spec(path: Path | str, overrides: Sequence[str] = (), registry: Registry | None = None
              ) -> Spec | TableSpec:
    """Read, override, validate and resolve a spec file; raise `SpecError` on any problem.

    A spec with `diagnostics:` is a `TableSpec` (correlate published tables); any other is a
    `Spec` (train and evaluate decoders).
    """
    path = Path(path)
    file = str(path)
    data, lines = _read_yaml(path)
    if "scores" in data and "name" not in data:
        raise SpecError("this is a table of published scores (`scores:`), not a spec; a spec "
                        "names it, e.g. `downstream: {reference: FILE}` or "
                        "`diagnostics: {reference: FILE}`", file=file, line=lines.get(("scores",)))
    overridden = apply_overrides(data, overrides)
    model: type[Spec] | type[TableSpec] = TableSpec if "diagnostics" in data else Spec
    try:
        spec = model.model_validate(data)
    except ValidationError as exc:
        _raise_first(exc, file=file, lines=lines, prefix=(), model=model, overridden=overridden)
    _resolve_paths(spec, path.resolve().parent, overridden, file, lines)
    if registry is not None and isinstance(spec, Spec):
        resolve_components(spec, registry, file=file, lines=lines, overridden=overridden,
                           base=path.resolve().parent)
    if isinstance(spec, Spec) and spec.device not in ("auto", "cpu"):
        _check_device(spec, file, lines, overridden)
    spec._source = file
    spec._sha256 = hashlib.sha256(
        json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()
    return spec
