"""Trainable encoders of the multi-view frameworks (Tang & de Sa, "Improving sentence
representations with multi-view frameworks") and of invertible decoders (Tang & de Sa,
"Exploiting invertible decoders for unsupervised sentence representation learning").

Registration imports pydantic only; torch and fastText load when a run builds an encoder.
See docs/multiview.md.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from harness.plugin import Options, Register, hookimpl

if TYPE_CHECKING:
    from harness.plugin import BuildContext


class MultiViewOptions(Options):
    """Options shared by every multi-view encoder; unset sizes come from `preset`."""

    preset: Literal["paper", "small"] = Field(
        "paper", description="sizes: 'paper' (d 1024, 1200 for invertible-*; N 512; 300-d word "
        "vectors) or 'small' (d 128, N 128, 64-d word vectors: the quickstart)")
    representation: Literal["unsupervised", "supervised"] = Field(
        "unsupervised", description="multi-view Table 2: mean-pooled views averaged "
        "(unsupervised) or [max; mean; min(; last)] pooled views concatenated (supervised)")
    hidden: int | None = Field(None, ge=1, description="d, GRU units per direction")
    word_dim: int | None = Field(None, ge=2, description="dimension of the fastText word vectors")
    word_epochs: int | None = Field(None, ge=1, description="fastText skip-gram epochs")
    min_count: int | None = Field(None, ge=1, description="fewest occurrences of a word in the "
                                  "vocabulary (other words are zero vectors)")
    epochs: int | None = Field(None, ge=1, description="passes over the fit corpus")
    batch_size: int | None = Field(None, ge=2, description="N, sentences per batch")
    lr: float = Field(5e-4, gt=0.0, description="Adam learning rate (the papers: 5e-4)")
    clip: float | None = Field(None, ge=0.0, description="gradient-norm clipping (0 = off)")
    max_words: int | None = Field(None, ge=1, description="training sees each sentence's first "
                                  "max_words words (encoding sees all)")
    pc_sentences: int | None = Field(None, ge=1, description="fit sentences used to estimate "
                                     "each view's top principal component")
    lowercase: bool = Field(True, description="lowercase words before looking them up")


class GenerativeOptions(MultiViewOptions):
    """Options of the generative frameworks (multi-view 2.2; invertible decoders 3)."""

    negatives: int = Field(5, ge=1, description="K, negative samples per predicted word")
    beta: float = Field(0.01, ge=0.0, description="b of the orthonormal update of U (0 = off)")


class BijectiveOptions(GenerativeOptions):
    """Options of the bijection + linear decoder (invertible decoders 3.3.2)."""

    coupling_layers: int = Field(1, ge=1, description="NICE additive coupling layers")
    coupling_hidden: int | None = Field(None, ge=1, description="hidden units of the coupling "
                                        "network m (default: d)")


class DiscriminativeOptions(MultiViewOptions):
    """Options of the discriminative framework (multi-view 2.3)."""

    window: int = Field(3, ge=1, description="c, neighbours within c sentences are positives")
    power_iterations: int = Field(5, ge=0, description="T, power iterations estimating the "
                                  "top component removed in training (0 = no removal)")


_FAMILIES: dict[str, tuple[type[Options], str]] = {
    "multiview-g": (GenerativeOptions, "multi-view, generative: bi-GRU f + inverse of the "
                    "orthonormal linear decoder g = U^T"),
    "multiview-d": (DiscriminativeOptions, "multi-view, discriminative: bi-GRU f + linear "
                    "average g agreeing on neighbouring sentences"),
    "invertible-linear": (GenerativeOptions, "invertible decoders: bi-GRU encoder + inverse of "
                          "its orthonormal linear decoder"),
    "invertible-bijective": (BijectiveOptions, "invertible decoders: bi-GRU encoder + inverse "
                             "of its NICE bijection + linear decoder"),
}
_VIEWS = {"f": "view f only (bi-GRU)", "g": "view g only (linear)"}
_SINGLE_VIEWS = ("multiview-g", "multiview-d")


def _available() -> str | None:
    """None when torch and fastText are importable, else what to install."""
    missing = [m for m in ("torch", "fasttext") if importlib.util.find_spec(m) is None]
    return f"pip install {' '.join(missing)}" if missing else None


def _factory(name: str) -> Callable[[Options, BuildContext], Any]:
    def build(options: Options, context: BuildContext) -> Any:
        from .encoder import build_encoder

        return build_encoder(name, options, seed=context.seed, device=context.device,
                             workdir=context.workdir)

    build.__name__ = f"build_{name.replace('-', '_').replace(':', '_')}"
    return build


@hookimpl
def register_encoders(register: Register) -> None:
    """Register the four frameworks and the single views of the multi-view ones."""
    for family, (options, description) in _FAMILIES.items():
        register(family, _factory(family), description=description, options=options,
                 availability=_available, trainable=True)
        if family in _SINGLE_VIEWS:
            for view, what in _VIEWS.items():
                name = f"{family}:{view}"
                register(name, _factory(name), description=f"{family}, {what}",
                         options=options, availability=_available, trainable=True)
