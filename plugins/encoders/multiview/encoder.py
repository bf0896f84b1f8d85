"""The trainable multi-view encoders: fit (word vectors, objective, post-processing), save, load
and encode with the pooling of multi-view Table 2 / Tang & de Sa appendix C.

Representation of a sentence with words X and GRU states H (multi-view Table 2, section 2.4):

    view f   unsupervised mean(H)            supervised [max(H); mean(H); min(H); h^M]
    view g   unsupervised mean(G)            supervised [max(G); mean(G); min(G)]
    ensemble unsupervised (z^f + z^g) / 2    supervised [z^f; z^g]

with G = W X (discriminative) or h^-1(X) (generative), and each view's vector post-processed:
its top principal component removed, then l2-normalised. The invertible-decoder encoders pool f
without h^M (Tang & de Sa appendix C). The principal components are estimated once, on the fit
corpus after training, because the core requires that a sentence's vector depend on that
sentence only (the papers remove the component of each evaluation batch).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch.nn import functional

from harness.plugin import DataError, HarnessError

from .objectives import DiscriminativeObjective, GenerativeObjective
from .orthonormal import power_iteration, remove_top_component
from .training import OrderedCorpus, TrainingConfig, fit_objective
from .views import Init, mean_over_time, pool_over_time
from .word_vectors import WordVectors, train_word_vectors

VERSION = "1"
MODEL_FILE = "model.safetensors"
ENCODER_FILE = "encoder.json"

View = Literal["both", "f", "g"]


def _view(suffix: str) -> View:
    """Return the view a registered name's suffix selects: "f", "g", or both for none."""
    if suffix == "f":
        return "f"
    if suffix == "g":
        return "g"
    if suffix in ("", "both"):
        return "both"
    raise ValueError(f"unknown multi-view view {suffix!r}: expected 'f', 'g' or none")


@dataclass(frozen=True)
class Framework:
    """What distinguishes the registered encoders besides their options."""

    objective: Literal["generative", "discriminative"]
    decoder: Literal["linear", "bijective"] = "linear"
    init: Init = "he"
    last_state: bool = True          # supervised f pooling includes h^M (multi-view Table 2)
    paper_hidden: int = 1024         # d per direction in the paper


FRAMEWORKS: dict[str, Framework] = {
    # Multi-view appendix 3: N = 512, d = 1024, He initialisation, gates 1.
    "multiview-g": Framework("generative"),
    "multiview-d": Framework("discriminative"),
    # Tang & de Sa appendix A/C: 1200 per direction, orthonormal init, [max; mean; min] pooling.
    "invertible-linear": Framework("generative", "linear", "orthogonal", False, 1200),
    "invertible-bijective": Framework("generative", "bijective", "orthogonal", False, 1200),
}

# Sizes the papers give (paper) or that fit the quickstart: 20k sentences in < ~60 s on one core
# (small). The papers state neither epochs, clipping threshold, sentence cut nor the number of
# sentences for the principal components; those are this plugin's choices.
PRESETS: dict[str, dict[str, Any]] = {
    "paper": {"word_dim": 300, "word_epochs": 5, "min_count": 5, "epochs": 1, "batch_size": 512,
              "clip": 1.0, "max_words": 50, "pc_sentences": 50_000},
    "small": {"hidden": 128, "word_dim": 64, "word_epochs": 5, "min_count": 1, "epochs": 3,
              "batch_size": 128, "clip": 1.0, "max_words": 30, "pc_sentences": 5000},
}


_FRAMEWORK_SETTINGS: dict[str, tuple[str, ...]] = {
    "generative": ("negatives", "beta"),
    "bijective": ("coupling_layers", "coupling_hidden"),
    "discriminative": ("window", "power_iterations"),
}
"""The settings only one objective ("generative", "discriminative") or decoder ("bijective")
reads (`MultiViewEncoder._build_objective`, `training.fit_objective`)."""


@dataclass(frozen=True)
class Settings:
    """Every value that determines a multi-view encoder, options and preset resolved."""

    family: str                     # the registered name without its view suffix
    framework: Framework
    view: View
    representation: Literal["unsupervised", "supervised"]
    hidden: int
    word_dim: int
    word_epochs: int
    min_count: int
    epochs: int
    batch_size: int
    lr: float
    clip: float
    max_words: int
    pc_sentences: int
    lowercase: bool
    seed: int
    negatives: int = 5
    beta: float = 0.01
    coupling_layers: int = 1
    coupling_hidden: int | None = None
    window: int = 3
    power_iterations: int = 5

    @classmethod
    def resolve(cls, name: str, options: Any, seed: int) -> Settings:
        """Return the settings of encoder `name` (e.g. "multiview-d:f") with `options`."""
        family, _, view = name.partition(":")
        framework = FRAMEWORKS[family]
        values = dict(options.model_dump())
        preset = {"hidden": framework.paper_hidden, **PRESETS[values.pop("preset")]}
        for key, default in preset.items():
            if values.get(key) is None:
                values[key] = default
        known = {f.name for f in fields(cls)}
        return cls(family=family, framework=framework, view=_view(view), seed=seed,
                   **{k: v for k, v in values.items() if k in known})

    def training_identity(self) -> dict[str, Any]:
        """Return what determines the trained weights: shared by the views of one framework."""
        identity = asdict(self)
        for key in ("view", "representation", "pc_sentences"):
            identity.pop(key)
        return identity

    def vector_settings(self) -> dict[str, Any]:
        """The settings that change the vectors, by option name: the shared ones, and those of
        this framework's objective and decoder only (`negatives` and `beta` generative, the
        coupling layers bijective, `window` and `power_iterations` discriminative)."""
        read = {*_FRAMEWORK_SETTINGS[self.framework.objective],
                *_FRAMEWORK_SETTINGS.get(self.framework.decoder, ())}
        unused = {key for keys in _FRAMEWORK_SETTINGS.values() for key in keys} - read
        return {key: value for key, value in asdict(self).items()
                if key not in {"family", "framework", "view", "representation", *unused}}

    def training_config(self) -> TrainingConfig:
        """Return the fit loop's configuration."""
        return TrainingConfig(kind=self.framework.objective, epochs=self.epochs,
                              batch_size=self.batch_size, lr=self.lr, clip=self.clip,
                              seed=self.seed, negatives=self.negatives, window=self.window)


def _digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def corpus_digest(sentences: Sequence[str]) -> str:
    """Return the SHA-256 of the sentences, in order (the identity of the fit corpus)."""
    digest = hashlib.sha256()
    for sentence in sentences:
        digest.update(sentence.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def component_sample(sentences: Sequence[str], count: int) -> list[str]:
    """Return up to `count` non-blank sentences, evenly spaced through `sentences`."""
    texts = [s for s in sentences if s.strip()]
    count = min(len(texts), count)
    if count == 0:
        return []
    return [texts[i] for i in np.linspace(0, len(texts) - 1, count).round().astype(int)]


class MultiViewEncoder:
    """A multi-view (or invertible-decoder) sentence encoder; `fit` before `encode`."""

    fit_version = VERSION  # part of the fit stage's cache key

    def __init__(self, settings: Settings, *, device: str = "cpu", workdir: Path | None = None,
                 progress: bool = True) -> None:
        self.settings = settings
        self.device = torch.device(device)
        self.workdir = None if workdir is None else Path(workdir)
        self.progress = progress
        self.words: WordVectors | None = None
        self.objective: GenerativeObjective | DiscriminativeObjective | None = None
        self.components: dict[str, torch.Tensor] = {}
        self.history: list[dict[str, Any]] = []
        self.summary: dict[str, float] = {}
        self._fingerprint: str | None = None

    # --- shape and identity ---------------------------------------------------------------

    def _view_dims(self) -> dict[str, int]:
        """Return the dimension of each used view's representation."""
        s, two_d = self.settings, 2 * self.settings.hidden
        supervised = s.representation == "supervised"
        dims = {"f": (4 if s.framework.last_state else 3) * two_d if supervised else two_d,
                "g": 3 * two_d if supervised else two_d}
        return {v: dims[v] for v in ("f", "g") if s.view in (v, "both")}

    @property
    def dim(self) -> int:
        """2d unsupervised; the concatenated pooled views' size supervised."""
        dims = self._view_dims()
        if self.settings.representation == "unsupervised":
            return next(iter(dims.values()))
        return sum(dims.values())

    def fingerprint(self) -> str:
        """Return name, view, representation, plugin version and the digest of the weights."""
        if self._fingerprint is None:
            raise HarnessError(f"encoder {self.settings.family!r} is not fitted: call fit() or "
                               "load() before fingerprint()")
        s = self.settings
        return f"{s.family}:{s.view}/{s.representation}/v{VERSION}/{self._fingerprint}"

    def declares(self) -> dict[str, Any]:
        """No released model: one trained on this run's corpus (its fit text), by registered
        name, with its representation, every setting that changes its vectors (`settings`:
        options and preset resolved, the seed in use) and its dimension."""
        s = self.settings
        name = s.family if s.view == "both" else f"{s.family}:{s.view}"
        return {"model": f"{name} trained on this run's corpus",
                "representation": s.representation, **s.vector_settings(), "dim": self.dim}

    # --- fit ------------------------------------------------------------------------------

    def fit(self, sentences: Sequence[str], workdir: Path | None = None) -> None:
        """Train word vectors, then the objective, then estimate the post-processing components.

        `sentences` is ordered text: consecutive sentences are neighbours and blank entries ("")
        separate documents. With a `workdir` (this argument, else the one given at
        construction), word vectors and per-epoch checkpoints are kept there, keyed by the
        corpus and the settings they depend on: a killed fit resumes, the views of one framework
        (e.g. multiview-d:f and multiview-d:g) train once, and frameworks with the same word
        settings share one set of word vectors.
        """
        sentences = list(sentences)
        if not any(s.strip() for s in sentences):
            raise DataError(f"encoder {self.settings.family!r}: the fit corpus is empty")
        workdir = Path(workdir) if workdir is not None else self.workdir
        s, corpus_key = self.settings, corpus_digest(sentences)
        words_key = _digest({"version": VERSION, "corpus": corpus_key, "dim": s.word_dim,
                             "epochs": s.word_epochs, "min_count": s.min_count,
                             "lowercase": s.lowercase})[:20]
        key = _digest({"version": VERSION, "training": s.training_identity(),
                       "corpus": corpus_key})[:20]
        scratch = tempfile.TemporaryDirectory() if workdir is None else nullcontext(None)
        with scratch as temporary:
            work = Path(temporary) if temporary else workdir
            assert work is not None  # a scratch directory is made when there is no workdir
            words = self._word_vectors(sentences, work / f"words-{words_key}")
            objective = self._build_objective(words)
            corpus = OrderedCorpus.from_sentences(sentences, words, s.max_words)
            self.history = fit_objective(
                objective, corpus, s.training_config(), noise=words.noise_distribution(),
                checkpoint_dir=work / f"{s.family}-{key}", device=self.device,
                progress=self.progress, label=s.family)
        self.summary = objective.finish()
        self.words, self.objective = words, objective
        self.components = self._principal_components(sentences)
        self._fingerprint = self._state_digest()

    def _word_vectors(self, sentences: Sequence[str], directory: Path) -> WordVectors:
        """Return the word vectors kept in `directory`, training and keeping them if absent."""
        if directory.exists():
            return WordVectors.load(directory)
        s = self.settings
        words = train_word_vectors(sentences, dim=s.word_dim, epochs=s.word_epochs,
                                   min_count=s.min_count, lowercase=s.lowercase)
        tmp = directory.with_name(directory.name + f".tmp{os.getpid()}")
        words.save(tmp)
        try:
            os.replace(tmp, directory)
        except OSError:  # another process kept them first: theirs are identical
            shutil.rmtree(tmp, ignore_errors=True)
        return words

    def _build_objective(self, words: WordVectors) -> GenerativeObjective | DiscriminativeObjective:
        """Return the objective with its initial weights, seeded without touching torch's RNG."""
        s, framework = self.settings, self.settings.framework
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(s.seed)
            if framework.objective == "generative":
                objective: GenerativeObjective | DiscriminativeObjective = GenerativeObjective(
                    words.vectors, s.hidden, decoder=framework.decoder, beta=s.beta,
                    coupling_layers=s.coupling_layers, coupling_hidden=s.coupling_hidden,
                    init=framework.init)
            else:
                objective = DiscriminativeObjective(words.vectors, s.hidden,
                                                    power_iterations=s.power_iterations,
                                                    init=framework.init)
        return objective.to(self.device).eval()

    def _principal_components(self, sentences: Sequence[str]) -> dict[str, torch.Tensor]:
        """Return each view's top principal component over a sample of the fit sentences.

        Power iteration run to convergence in float64 on `component_sample` (Arora et al. 2017's
        component, multi-view section 2.4).
        """
        raw = self._pooled(component_sample(sentences, self.settings.pc_sentences), batch_size=256)
        return {view: power_iteration(z.double(), iterations=1000, tolerance=1e-10).float()
                for view, z in raw.items()}

    # --- encode ---------------------------------------------------------------------------

    def _require_fitted(self) -> tuple[WordVectors, GenerativeObjective | DiscriminativeObjective]:
        if self.words is None or self.objective is None:
            raise HarnessError(f"encoder {self.settings.family!r} is not fitted: call fit() or "
                               "load() first")
        return self.words, self.objective

    @torch.no_grad()
    def _pooled(self, sentences: Sequence[str], batch_size: int) -> dict[str, torch.Tensor]:
        """Return each used view's pooled representation (n, D_view), before post-processing."""
        words, objective = self._require_fitted()
        dims = self._view_dims()
        out = {view: torch.zeros(len(sentences), dim) for view, dim in dims.items()}
        ids = [words.ids(s) for s in sentences]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # less padding per batch
        supervised = self.settings.representation == "supervised"
        for start in range(0, len(order), max(1, batch_size)):
            index = order[start:start + batch_size]
            lengths = torch.tensor([len(ids[i]) for i in index], dtype=torch.long)
            padded = torch.zeros(len(index), int(lengths.max()), dtype=torch.long)
            for row, i in enumerate(index):
                padded[row, :len(ids[i])] = torch.tensor(ids[i], dtype=torch.long)
            inputs = objective.embed(padded.to(self.device))
            rows = torch.tensor(index)
            if "f" in dims:
                states, last = objective.f(inputs, lengths)
                if supervised:
                    parts = [*pool_over_time(states, lengths)]
                    if self.settings.framework.last_state:
                        parts.append(last)
                    out["f"][rows] = torch.cat(parts, dim=-1).float().cpu()
                else:
                    out["f"][rows] = mean_over_time(states, lengths).float().cpu()
            if "g" in dims:
                states = objective.g_states(inputs)
                pooled = (torch.cat(pool_over_time(states, lengths), dim=-1) if supervised
                          else mean_over_time(states, lengths))
                out["g"][rows] = pooled.float().cpu()
        return out

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return the (n, dim) representations: per view, top component removed and l2-normalised,
        then averaged (unsupervised) or concatenated (supervised)."""
        pooled = self._pooled(list(sentences), batch_size)
        views = []
        for view, z in pooled.items():
            z = remove_top_component(z, self.components[view])
            views.append(functional.normalize(z, dim=-1))  # zero rows stay zero
        if self.settings.representation == "unsupervised":
            result = torch.stack(views).mean(dim=0)
        else:
            result = torch.cat(views, dim=-1)
        return result.numpy().astype(np.float32, copy=False)

    # --- save / load ----------------------------------------------------------------------

    def _state_tensors(self) -> dict[str, torch.Tensor]:
        _, objective = self._require_fitted()
        tensors = {f"model.{k}": v for k, v in objective.state_dict().items()}
        tensors.update({f"component.{view}": u for view, u in self.components.items()})
        return {k: v.detach().contiguous().cpu() for k, v in tensors.items()}

    def _state_digest(self) -> str:
        """Return a digest of the weights, components and word vectors (the fingerprint's core)."""
        words, _ = self._require_fitted()
        digest = hashlib.sha256()
        for key, tensor in sorted(self._state_tensors().items()):
            digest.update(key.encode())
            digest.update(tensor.numpy().tobytes())
        digest.update(words.vectors.tobytes())
        digest.update("\n".join(words.words).encode("utf-8"))
        return digest.hexdigest()[:16]

    def save(self, directory: Path) -> None:
        """Write word vectors (.npy + JSON), weights and components (safetensors), settings."""
        words, _ = self._require_fitted()
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        words.save(directory)
        save_file(self._state_tensors(), str(directory / MODEL_FILE))
        (directory / ENCODER_FILE).write_text(json.dumps(
            {"version": VERSION, "settings": asdict(self.settings), "history": self.history,
             "summary": self.summary},
            indent=1), encoding="utf-8")

    def load(self, directory: Path) -> None:
        """Restore the state written by `save`; refuse one fitted with other settings."""
        directory = Path(directory)
        path = directory / ENCODER_FILE
        if not path.exists():
            raise DataError(f"{path}: missing; fit the encoder {self.settings.family!r} again")
        saved = json.loads(path.read_text(encoding="utf-8"))
        mine = json.loads(json.dumps(asdict(self.settings)))
        if saved.get("version") != VERSION or saved.get("settings") != mine:
            raise DataError(f"{path}: fitted with other settings or plugin version; fit "
                            f"{self.settings.family!r} again")
        words = WordVectors.load(directory)
        objective = self._build_objective(words)
        tensors = load_file(str(directory / MODEL_FILE), device=str(self.device))
        objective.load_state_dict({k[len("model."):]: v for k, v in tensors.items()
                                   if k.startswith("model.")})
        self.words, self.objective = words, objective.eval()
        self.components = {k[len("component."):]: v.cpu() for k, v in tensors.items()
                           if k.startswith("component.")}
        self.history = saved.get("history", [])
        self.summary = saved.get("summary", {})
        self._fingerprint = self._state_digest()


def build_encoder(name: str, options: Any, *, seed: int = 1, device: str = "cpu",
                  workdir: Path | None = None, progress: bool = True) -> MultiViewEncoder:
    """Return the unfitted encoder registered as `name` (e.g. "multiview-d:f") with `options`."""
    return MultiViewEncoder(Settings.resolve(name, options, seed), device=device,
                            workdir=workdir, progress=progress)

