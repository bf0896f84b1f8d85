"""Which model a published score belongs to: reference tables and the models their rows measured,
the rule binding a row to an encoder, the names of subword vectors, and published tables shown
beside a run.

A reference table is YAML: `source:` (a citation), `tasks:` (its columns, in order), `scores:`
(row -> column -> number), and optionally `kind:` (`diagnostics` or `downstream`, default
downstream) and `models:` (row -> the model that row measured, e.g. `{model:
bert-large-nli-mean-tokens, dim: 1024}` or `{vectors: bpemb-en-50k-300d, dim: 300}`). An encoder
says what it is through its optional `declares()` (`harness.protocols.declared_model`). A row
applies to an encoder only when the row declares a model and every key of it is equal in the
encoder's declaration and the row states every key the encoder declares (`row_mismatch`); a row
that declares no model applies to nothing, and a row's name alone never makes it apply.

Why both directions: an encoder declares every option that changes its vectors (GEM's `k`, `h`,
`window`, `sigma_power`; SBERT's `normalise`; a window pooling's `window`, ...), besides the
model or vectors it runs. A row that leaves one of them out does not say which value its scores
were measured with, so it cannot be taken to be this encoder's: with the looser rule (only the
row's keys compared) a GEM with `k: 10` would take the scores of the paper's GEM (`k: 45`), since
the row never mentioned `k`. A row therefore binds only to a declaration equal to its own (the
`files` entry, recorded and never compared, aside); a new vector-changing option unbinds rows
that do not state it, which says so (`row_mismatch` names the keys), rather than binding them
silently.

A model in a local directory is named by the digest of its files' content (`directory_model`),
never by the folder's name: copies of one model under two names are one model, and a changed
weight file is another.

Nothing here reads a spec (`harness.spec.preflight` uses this module) or loads a model.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from harness.errors import DataError, PluginError
from harness.results.model import PublishedTable
from harness.util.cache import META_FILE, file_digest, read_meta

if TYPE_CHECKING:
    import numpy as np

KINDS = ("diagnostics", "downstream")
"""What a reference table's columns are: V2S diagnostics (Table 4) or downstream tasks (Table 5)."""

BPEMB_FILE = re.compile(r"(?P<lang>[a-z]+)\.wiki\.bpe\.vs(?P<size>\d+)\.d(?P<dim>\d+)\.w2v\.(bin|txt)")
"""BPEmb's vector files (Heinzerling & Strube 2018), e.g. en.wiki.bpe.vs50000.d300.w2v.bin."""

# ---------------------------------------------------------------------------- reference tables


@dataclass(frozen=True)
class ReferenceTable:
    """A reference table as read: citation, kind, columns, rows and the models rows declare."""

    path: Path
    source: str
    kind: str
    tasks: list[str]
    scores: dict[str, dict[str, float]]
    models: dict[str, dict[str, Any]] = field(default_factory=dict)


def read_table(path: Path) -> ReferenceTable:
    """Return the reference table in `path`; raise `DataError` naming the file and field."""
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DataError(f"{path}: cannot read reference table: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("scores"), dict):
        raise DataError(f"{path}: a reference table needs `scores:` (encoder -> task -> score)")
    tasks = data.get("tasks") or sorted({t for row in data["scores"].values() for t in row})
    scores: dict[str, dict[str, float]] = {}
    for encoder, row in data["scores"].items():
        if not isinstance(row, dict):
            raise DataError(f"{path}: scores.{encoder}: expected a mapping task -> score")
        for task, value in row.items():
            if task not in tasks:
                raise DataError(f"{path}: scores.{encoder}.{task}: task not in `tasks:`")
            if value is None:
                continue
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise DataError(f"{path}: scores.{encoder}.{task}: expected a number, "
                                f"got {value!r}")
            scores.setdefault(str(encoder), {})[str(task)] = float(value)
    kind = data.get("kind", "downstream")
    if kind not in KINDS:
        raise DataError(f"{path}: kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    return ReferenceTable(path=path, source=str(data.get("source", path.name)), kind=kind,
                          tasks=[str(t) for t in tasks], scores=scores,
                          models=_models(path, data.get("models") or {}, data["scores"]))


def row_declarations(table: ReferenceTable) -> dict[str, dict[str, Any] | None]:
    """Each row of a published table as `downstream_scores` takes a declaration: the model the
    row declares, or None (paired by name) where it declares none."""
    return {row: table.models.get(row) for row in table.scores}


def _models(path: Path, models: Any, rows: Mapping[Any, Any]) -> dict[str, dict[str, Any]]:
    """The table's `models:`, checked: rows of the table, each a mapping of plain values."""
    if not isinstance(models, dict):
        raise DataError(f"{path}: models: expected a mapping row -> the model it measured")
    checked = {}
    for row, model in models.items():
        if row not in rows:
            raise DataError(f"{path}: models.{row}: no such row in `scores:`; name a row")
        if not isinstance(model, dict) or not model:
            raise DataError(f"{path}: models.{row}: expected a mapping such as "
                            "{model: NAME, dim: N} or {vectors: NAME, dim: N}")
        for key, value in model.items():
            if not _plain(value):
                raise DataError(f"{path}: models.{row}.{key}: expected a name, a number, "
                                f"null or a list of them, got {value!r}")
        checked[str(row)] = {str(k): v for k, v in model.items()}
    return checked


def _plain(value: Any) -> bool:
    """A name, a number, true/false, null (an option left unset, e.g. InferSent's
    `vocab_size: null`) or a list of them."""
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (str, int, float, bool))


# -------------------------------------------------------------------------- the binding rule


def describe(model: Mapping[str, Any]) -> str:
    """A declared model as one phrase: `model: bert-large-nli-mean-tokens, dim: 1024`."""
    return ", ".join(f"{key}: {value}" for key, value in model.items()) or "nothing"


def row_mismatch(row_model: Mapping[str, Any] | None, declares: Mapping[str, Any] | None
                 ) -> str | None:
    """None when a table row that measured `row_model` applies to an encoder declaring
    `declares`, else why not.

    The row applies when it declares a model, each of its keys has an equal value in `declares`,
    and it states every key `declares` has (but `files`, which is recorded, not compared): the
    encoder declares every option that changes its vectors, and a row silent about one does not
    say its scores were measured with this encoder's value (module docstring). `declares` None
    stands for a row of another published table that states no model: published tables are then
    paired by name (a table spec's choice).
    """
    if declares is None:
        return None
    if not row_model:
        return "its row declares no model (`models:`), so it applies to no encoder"
    declared = {key: value for key, value in declares.items() if key != "files"}
    if _stated_equal(row_model, declared) and not unstated(row_model, declared):
        return None
    return (f"its row measured {describe(row_model)}; this encoder declares "
            f"{describe(declared)}{unstated_note(row_model, declared)}")


def _stated_equal(row_model: Mapping[str, Any], declares: Mapping[str, Any]) -> bool:
    """Every key of the row has an equal value in `declares`."""
    return all(key in declares and _same(declares[key], value) for key, value in row_model.items())


def unstated(row_model: Mapping[str, Any], declares: Mapping[str, Any]) -> list[str]:
    """The keys `declares` has (but `files`) that the row does not state, in declared order."""
    return [key for key in declares if key != "files" and key not in row_model]


def unstated_note(row_model: Mapping[str, Any], declares: Mapping[str, Any]) -> str:
    """` (the row does not state k, h)` when the row's own keys all match `declares` and only
    keys it leaves out keep it from applying; "" otherwise (the values that differ say why)."""
    keys = unstated(row_model, declares)
    return f" (the row does not state {', '.join(keys)})" \
        if keys and _stated_equal(row_model, declares) else ""


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values: lists item by item, and true is not 1."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def split_declaration(declared: Any, plugin: str, name: str) -> tuple[dict[str, Any],
                                                                      dict[str, str]]:
    """(declared model, files) from what an encoder's `declares()` returned: a mapping of
    JSON values whose optional `files` entry (file -> digest) is kept apart; raise
    `PluginError` naming the plugin for anything else."""
    if not isinstance(declared, Mapping) or not all(isinstance(k, str) for k in declared):
        raise PluginError(plugin, f"encoder {name!r}: declares() must return a mapping with "
                                  f"string keys, got {type(declared).__name__}")
    declares = dict(declared)
    files = declares.pop("files", None) or {}
    try:
        json.dumps(declares, allow_nan=False)
        files = {str(k): str(v) for k, v in dict(files).items()}
    except (TypeError, ValueError) as exc:
        raise PluginError(plugin, f"encoder {name!r}: declares() must return JSON values "
                                  f"(and `files` a mapping file -> digest): {exc}") from None
    return declares, files


# ---------------------------------------------------------------------- subword vectors' names


def trained_vectors(bpe_size: int, dim: int) -> str:
    """What subword vectors trained on the run's corpus are called in a declaration."""
    return f"run-trained bpe{bpe_size} {dim}d"


def imported_vectors(vectors_file: str | Path, sha256: str) -> str:
    """What imported subword vectors are called: BPEmb's name for BPEmb's files (e.g.
    `bpemb-en-50k-300d` for en.wiki.bpe.vs50000.d300.w2v.bin), else the file's name and the
    start of its sha256."""
    name = Path(vectors_file).name
    match = BPEMB_FILE.fullmatch(name)
    if match is None:
        return f"{name} sha256:{sha256[:16]}"
    size = int(match["size"])
    size_name = f"{size // 1000}k" if size % 1000 == 0 else str(size)
    return f"bpemb-{match['lang']}-{size_name}-{match['dim']}d"


def pooled_vectors(vocab: Any) -> str | None:
    """What the subword vectors of `vocab` (a factory's `context.vocab`) are called, for encoders
    that pool them: the vocabulary's own `vectors_name` when it has one (the stand-in preflight
    builds), else what the run's vocabulary stage recorded beside its files; None when neither
    says (a vocabulary built outside a run)."""
    name = getattr(vocab, "vectors_name", None)
    if isinstance(name, str) and name:
        return name
    model_path = getattr(vocab, "model_path", None)
    if model_path is None or not (Path(model_path).parent / META_FILE).is_file():
        return None
    meta = read_meta(Path(model_path).parent)
    parts, summary = meta.get("parts", {}), meta.get("summary", {})
    if summary.get("source") == "imported" and summary.get("vectors_file"):
        return imported_vectors(summary["vectors_file"], str(parts.get("vectors_sha256", "")))
    if "bpe_size" in parts and summary.get("dim"):
        return trained_vectors(int(parts["bpe_size"]), int(summary["dim"]))
    return None


@dataclass(frozen=True)
class PreviewVocabulary:
    """A stand-in for the run's vocabulary before it exists: what its vectors are called
    (`pooled_vectors`) and their shape (all zeros, no memory), enough to build an encoder and ask
    what it declares."""

    vectors_name: str
    pieces: int
    dim: int  # of the subword vectors
    pad_id: int = 0
    unk_id: int = 1
    bos_id: int = 2
    eos_id: int = 3

    @property
    def vectors(self) -> np.ndarray:
        """(pieces, dim) zeros, as a read-only view of one number."""
        import numpy as np

        return np.broadcast_to(np.zeros((), dtype=np.float32), (self.pieces, self.dim))

    def __len__(self) -> int:
        return self.pieces


def preview_vocabulary(bpe_size: int, dim: int, vectors: Path | None) -> PreviewVocabulary | None:
    """The stand-in for a spec's vocabulary: trained (`bpe_size`, `dim`) or imported from the
    `vectors` file; None when the file's dimension cannot be told without reading it all."""
    if vectors is None:
        return PreviewVocabulary(trained_vectors(bpe_size, dim), bpe_size, dim)
    match = BPEMB_FILE.fullmatch(vectors.name)
    width = int(match["dim"]) if match else _vectors_dim(vectors)
    if width is None:
        return None
    pieces = int(match["size"]) if match else 1
    name = imported_vectors(vectors, "" if match else file_digest(vectors))
    return PreviewVocabulary(name, pieces, width)


def _vectors_dim(path: Path) -> int | None:
    """The dimension of a `.npy` table (from its header) or a word2vec/fastText text file (from
    its first line); None for other formats."""
    import numpy as np

    try:
        with open(path, "rb") as handle:
            if path.suffix == ".npy":
                version = np.lib.format.read_magic(handle)
                header = np.lib.format.read_array_header_1_0 if version == (1, 0) \
                    else np.lib.format.read_array_header_2_0
                shape = header(handle)[0]
                return int(shape[1]) if len(shape) == 2 else None
            first = handle.readline(1 << 20).decode("utf-8", errors="replace").split()
    except (OSError, ValueError):
        return None
    if len(first) == 2 and all(part.isdigit() for part in first):
        return int(first[1])  # "count dim" header
    return len(first) - 1 if len(first) > 2 else None


# ------------------------------------------------------------------ models in local directories

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".onnx", ".pt", ".pth", ".ckpt", ".h5", ".msgpack",
                   ".npz", ".npy", ".gguf", ".pkl")
"""Suffixes of weight files: safetensors, PyTorch (pickle), ONNX, Keras/TF, Flax, numpy, GGUF."""

CONFIG_SUFFIXES = (".json", ".txt", ".model")
"""Suffixes of the files beside the weights that change what a model computes: its configuration
(`config.json`, `modules.json`, a sentence-transformers pooling layer's `1_Pooling/config.json`,
whose mean or CLS pooling changes the vectors and not their size) and its tokeniser
(`tokenizer.json`, `vocab.txt`, `merges.txt`, a SentencePiece `.model`)."""

_DIGESTS: dict[tuple[str, int, int, int], str] = {}
"""sha256 of files already read in this process, by (path, size, mtime_ns, inode)."""


def model_files(directory: Path) -> list[Path]:
    """The files of the model in `directory` that its identity covers: the weights
    (`WEIGHT_SUFFIXES`) and configuration and tokeniser (`CONFIG_SUFFIXES`), at any depth, in
    the order of their paths relative to `directory`; hidden files and folders (`.git`,
    `.cache`) and documentation (README.md) are left out."""
    directory = Path(directory)
    suffixes = WEIGHT_SUFFIXES + CONFIG_SUFFIXES
    found = [path for path in directory.rglob("*")
             if path.is_file() and path.suffix.lower() in suffixes
             and not any(part.startswith(".") for part in path.relative_to(directory).parts)]
    return sorted(found, key=lambda path: path.relative_to(directory).as_posix())


def content_digest(path: Path) -> str:
    """`harness.util.cache.file_digest` (sha256 of the whole content), read once per process for a
    file whose size, modification time and inode are unchanged."""
    stat = Path(path).stat()
    key = (str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino)
    if key not in _DIGESTS:
        _DIGESTS[key] = file_digest(Path(path))
    return _DIGESTS[key]


def model_digest(directory: Path) -> str:
    """sha256 over the model files of `directory` (`model_files`): each file's path relative
    to `directory` and the sha256 of its content, in that order. The folder's own name and the
    files' times are not part of it: a copy or a renamed folder has the same digest, a changed
    byte in any weight file another."""
    digest = hashlib.sha256()
    for path in model_files(directory):
        digest.update(f"{path.relative_to(directory).as_posix()}\0"
                      f"{content_digest(path)}\n".encode())
    return digest.hexdigest()


def directory_model(directory: Path) -> str:
    """What a model loaded from a local directory is called in a declaration: `local files
    sha256:` and the start of `model_digest`, whatever the folder is named."""
    return f"local files sha256:{model_digest(directory)[:16]}"


# --------------------------------------------------------------------------- published tables


def published_tables(paths: Iterable[Path], declared: Mapping[str, Mapping[str, Any] | None]
                     ) -> list[PublishedTable]:
    """The tables of `report.compare`, to show beside the run's numbers (never used as input):
    each with its rows, the models they declare and, per row, whether it applies to the run's
    encoder of that name (`declared`: encoder -> what it declares)."""
    tables = []
    for path in paths:
        table = read_table(path)
        matches = {row: row in declared and row_mismatch(table.models.get(row),
                                                           declared[row]) is None
                   for row in table.scores}
        tables.append(PublishedTable(source=table.source, kind=table.kind, columns=table.tasks,
                                     scores=table.scores, models=table.models, matches=matches))
    return tables
