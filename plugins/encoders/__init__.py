"""First-party sentence encoders, registered through the same hook as third-party ones.

Registration imports no model code: each factory imports its module when a run builds it, and
the options classes (in `options`, shared with the implementations) need only pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.plugin import Options, Register, hookimpl

from .options import (
    BorepOptions,
    EsnOptions,
    GemOptions,
    GloveGemOptions,
    RandomGaussianOptions,
    RandomLstmOptions,
    WindowOptions,
    glove_availability,
)

if TYPE_CHECKING:
    from harness.plugin import BuildContext


def _build_avg(options: Options, context: BuildContext) -> Any:
    from .pooling import AverageEncoder, context_vocab

    return AverageEncoder(context_vocab(context, "avg"), options)


def _build_max(options: Options, context: BuildContext) -> Any:
    from .pooling import MaxEncoder, context_vocab

    return MaxEncoder(context_vocab(context, "max"), options)


def _over_glove(kind: str) -> Any:
    """The factory of encoder `kind` (a pooling or GEM) over GloVe 6B 50-d."""

    def build(options: Options, context: BuildContext) -> Any:
        from .gem import GeometricEmbedding
        from .pooling import AverageEncoder, AvgMaxHierEncoder, HierarchicalEncoder, MaxEncoder
        from .wordvectors import glove_6b_50d

        classes = {"avg": AverageEncoder, "max": MaxEncoder, "hier": HierarchicalEncoder,
                   "avg-max-hier": AvgMaxHierEncoder, "gem": GeometricEmbedding}
        return classes[kind](glove_6b_50d(), options)

    return build


def _build_hier(options: WindowOptions, context: BuildContext) -> Any:
    from .pooling import HierarchicalEncoder, context_vocab

    return HierarchicalEncoder(context_vocab(context, "hier"), options)


def _build_avg_max_hier(options: WindowOptions, context: BuildContext) -> Any:
    from .pooling import AvgMaxHierEncoder, context_vocab

    return AvgMaxHierEncoder(context_vocab(context, "avg-max-hier"), options)


def _build_gem(options: GemOptions, context: BuildContext) -> Any:
    from .gem import GeometricEmbedding
    from .pooling import context_vocab

    return GeometricEmbedding(context_vocab(context, "gem"), options)


def _build_random_gaussian(options: RandomGaussianOptions, context: BuildContext) -> Any:
    from .controls import RandomGaussianEncoder

    return RandomGaussianEncoder(options, context.seed)


def _build_random_lstm(options: RandomLstmOptions, context: BuildContext) -> Any:
    from .controls import RandomLstmEncoder
    from .pooling import context_vocab

    return RandomLstmEncoder(context_vocab(context, "random-lstm"), options, context.seed)


def _random_weights(kind: str, over_glove: bool) -> Any:
    """The factory of `borep` or `esn` over the run's subwords or GloVe 6B 50-d."""

    def build(options: Options, context: BuildContext) -> Any:
        from .pooling import context_vocab
        from .random_weights import BorepEncoder, EchoStateEncoder
        from .wordvectors import glove_6b_50d

        cls = {"borep": BorepEncoder, "esn": EchoStateEncoder}[kind]
        vocab = glove_6b_50d() if over_glove else context_vocab(context, kind)
        return cls(vocab, options, context.seed)

    return build


@hookimpl
def register_encoders(register: Register) -> None:
    """Register the pooling encoders, GEM and the random-weight encoders (BOREP, ESN) over the
    run's subword vectors and over GloVe, and the controls (random-gaussian, random-lstm)."""
    register("avg", _build_avg, options=Options,
             description="average of the sentence's subword vectors (BPEmb-like, frozen)")
    register("max", _build_max, options=Options,
             description="dimension-wise max of the sentence's subword vectors (SWEM-max)")
    register("hier", _build_hier, options=WindowOptions,
             description="max over averaged 3-subword windows (SWEM-hier, Shen et al. 2018)")
    register("avg-max-hier", _build_avg_max_hier, options=WindowOptions,
             description="[avg; max; hier] pooling of subword vectors, 3x dim (Rücklé et al. 2018)")
    register("gem", _build_gem, options=GemOptions, trainable=True,
             description="geometric embedding: orthogonal-basis word weights (Yang et al. 2018)")
    glove = "GloVe 6B 50-d word vectors (Pennington et al. 2014), offline"
    for kind, options, what in (("avg", Options, "average of the"),
                                ("max", Options, "dimension-wise max of the"),
                                ("hier", WindowOptions, "SWEM-hier over the"),
                                ("avg-max-hier", WindowOptions, "[avg; max; hier] of the")):
        register(f"glove-{kind}", _over_glove(kind), options=options, pretrained=True,
                 availability=glove_availability, description=f"{what} sentence's {glove}")
    register("glove-gem", _over_glove("gem"), options=GloveGemOptions, trainable=True,
             availability=glove_availability,
             description=f"geometric embedding (Yang et al. 2018) over {glove}")
    random: dict[str, tuple[type[Options], str]] = {
        "borep": (BorepOptions, "bag of random embedding projections, pooled"),
        "esn": (EsnOptions, "bidirectional echo state network, max-pooled, 2x dim")}
    for kind, (options, what) in random.items():
        register(kind, _random_weights(kind, False), options=options,
                 description=f"{what}, over the subword vectors (Wieting & Kiela 2019)")
        register(f"glove-{kind}", _random_weights(kind, True), options=options, pretrained=True,
                 availability=glove_availability,
                 description=f"{what}, over {glove} (Wieting & Kiela 2019)")
    register("random-gaussian", _build_random_gaussian, options=RandomGaussianOptions,
             control=True,
             description="control: i.i.d. N(0, 1) vectors, no information (the decoder's floor)")
    register("random-lstm", _build_random_lstm, options=RandomLstmOptions, control=True,
             description="control: untrained BiLSTM-max over subword vectors, 2x dim "
                         "(Wieting & Kiela 2019)")
