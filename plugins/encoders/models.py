"""Model-based encoders of Vec2Sent (Kerscher & Eger 2020, section 3): sent2vec, sbert, and the
adapters running the released InferSent, QuickThought and LASER weights.

Registration imports pydantic and the standard library only; each factory imports its model
module (torch, sentence-transformers) when a run builds the encoder.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, model_validator

from harness.hookspecs import Register, hookimpl
from harness.protocols import Options

from . import sbert
from .adapters.common import WeightsError, is_pickle, pickle_refusal
from .adapters.sources import (
    INFERSENT_WEIGHTS,
    INFERSENT_WORD_VECTORS,
    LASER_WEIGHTS,
    QUICKTHOUGHT_WEIGHTS,
    infersent_availability,
    laser_availability,
    laser_files,
    quickthought_availability,
)

if TYPE_CHECKING:
    from harness.protocols import BuildContext


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

    model: str = Field(sbert.BUNDLED, min_length=1, description=(
        "'minilm' (bundled all-MiniLM-L6-v2, offline), a model directory, or a Hugging Face "
        "name (downloads on first use)"))
    normalise: bool = Field(False, description="L2-normalise the sentence vectors")


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


def _build_sent2vec(options: Sent2VecOptions, context: BuildContext) -> Any:
    from .sent2vec import Sent2VecEncoder

    return Sent2VecEncoder(options, seed=context.seed, device=context.device)


def _build_sbert(options: SbertOptions, context: BuildContext) -> Any:
    return sbert.SentenceBertEncoder(options.model, normalise=options.normalise,
                                     device=context.device)


def _refuse_unopted_pickle(encoder: str, path: Path, allow_pickle: bool) -> None:
    # before any model code is imported: the refusal costs nothing
    if is_pickle(path) and not allow_pickle:
        raise WeightsError(pickle_refusal(encoder, path))


def _build_infersent(options: InferSentOptions, context: BuildContext) -> Any:
    weights = INFERSENT_WEIGHTS.require(options.weights)
    word_vectors = INFERSENT_WORD_VECTORS.require(options.word_vectors)
    _refuse_unopted_pickle("infersent", weights, options.allow_pickle)
    from .adapters.infersent import InferSentEncoder

    return InferSentEncoder(weights, word_vectors, version=options.version,
                            vocab_size=options.vocab_size, tokenize=options.tokenize,
                            allow_pickle=options.allow_pickle, device=context.device)


def _build_quickthought(options: QuickThoughtOptions, context: BuildContext) -> Any:
    weights = QUICKTHOUGHT_WEIGHTS.require(options.weights)
    from .adapters.quickthought import QuickThoughtEncoder

    return QuickThoughtEncoder(weights, tokenize=options.tokenize, device=context.device)


def _build_laser(options: LaserOptions, context: BuildContext) -> Any:
    model, codes, vocab = laser_files(LASER_WEIGHTS.require(options.weights), options.bpe_codes,
                                      options.bpe_vocab)
    _refuse_unopted_pickle("laser", model, options.allow_pickle)
    from .adapters.laser import LaserEncoder

    return LaserEncoder(model, codes, vocab, allow_pickle=options.allow_pickle,
                        device=context.device)


def _sbert_availability(options: SbertOptions | None = None) -> str | None:
    return sbert.availability(options.model if options is not None else sbert.BUNDLED)


@hookimpl
def register_encoders(register: Register) -> None:
    """Register sent2vec, sbert and the adapters of the released InferSent/QuickThought/LASER."""
    register("sent2vec", _build_sent2vec, options=Sent2VecOptions, trainable=True,
             description="average of unigram and bigram embeddings trained on the corpus "
                         "(Pagliardini et al. 2018)")
    register("sbert", _build_sbert, options=SbertOptions, availability=_sbert_availability,
             description="sentence-transformers model; default all-MiniLM-L6-v2, offline "
                         "(Reimers & Gurevych 2019)")
    register("infersent", _build_infersent, options=InferSentOptions,
             availability=infersent_availability,
             description="released InferSent BiLSTM-max over fastText vectors "
                         "(Conneau et al. 2017)")
    register("quickthought", _build_quickthought, options=QuickThoughtOptions,
             availability=quickthought_availability,
             description="released MC-QuickThought GRU encoders, exported from TensorFlow "
                         "(Logeswaran & Lee 2018)")
    register("laser", _build_laser, options=LaserOptions, availability=laser_availability,
             description="released LASER 5-layer BiLSTM-max over BPE (Artetxe & Schwenk 2019)")
