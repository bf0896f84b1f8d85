"""First-party attacks, registered through the same hook third-party ones use
(`register_attacks`): what reads text back from an encoder's vectors, each with the threat
model it assumes (docs/privacy.md). The privacy analysis runs those the spec's
`privacy.attacks:` names on every encoder x defence x level and reports the strongest.
Registration imports no attack: the factories import their module when a run builds them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from harness.plugin import Options, Register, hookimpl

if TYPE_CHECKING:
    from harness.plugin import Attack, BuildContext


class RerankOptions(Options):
    candidates: int = Field(8, ge=2, le=64, description="candidates per vector: the decoder's "
                            "best and samples from it, each re-encoded through the store")


class NearestOptions(Options):
    corpus: int = Field(20000, ge=1, description="sentences of the public corpus searched (the "
                        "first N of the training split's text)")


class OracleOptions(Options):
    corpus: int = Field(2000, ge=1, description="public sentences ranked (the first N distinct "
                        "of the training split's text)")
    repeats: int = Field(8, ge=2, le=64, description="queries of each candidate under a "
                         "randomised defence: their mean estimates its vector before noise, "
                         "their spread the noise")


class BagOfWordsOptions(Options):
    words: int = Field(2000, ge=1, description="the content words it predicts: the most "
                       "frequent of the leaked sentences")
    epochs: int = Field(30, ge=1, description="full-batch training epochs of the classifier, "
                        "each on a fresh draw of the leaked vectors through the store under a "
                        "randomised defence (the stored ones first)")
    held_out: float = Field(0.1, gt=0, lt=0.5, description="share of the leaked pairs that "
                            "chooses the decision threshold")


class PriorOptions(Options):
    sentences: int = Field(50, ge=0, description="the most frequent leaked sentences tried as "
                           "the constant output")
    words: int = Field(20, ge=0, description="the most frequent content words tried, the "
                       "first 1, 2, ..., N of them joined")


class AlignOptions(Options):
    pairs: int = Field(1000, ge=3, description="leaked (text, vector) pairs the map is fitted "
                       "on (k)")
    surrogate: str | None = Field(None, description="the encoder of the run whose space the "
                                  "vectors are mapped into (default: the first other encoder "
                                  "under study)")
    draws: int = Field(4, ge=1, le=64, description="draws of the leaked vectors the map is "
                       "fitted on, stacked: the stored ones and draws - 1 queries of the leaked "
                       "texts through the store (noise augmentation; one draw under a "
                       "deterministic defence)")


class CorrectorOptions(Options):
    steps: int = Field(3, ge=0, le=50, description="correction steps (T) after the decoder's "
                       "hypothesis")
    beam: int = Field(2, ge=1, le=16, description="hypotheses kept per vector at each step "
                      "(the sequence-level beam)")
    candidates: int = Field(4, ge=1, le=32, description="rewrites proposed per hypothesis and "
                            "step, each re-encoded through the store (and the decoder's "
                            "candidates at step 0)")
    pairs: int = Field(2000, ge=1, description="leaked pairs the corrector trains on (the "
                       "first N of the training split)")
    hypotheses: int = Field(2, ge=1, le=8, description="the decoder's hypotheses per leaked "
                            "pair it learns to correct (its best, then samples)")
    epochs: int = Field(10, ge=1, description="training epochs, each with a fresh draw of "
                        "the leaked vectors through the store under a randomised defence (the "
                        "stored ones first)")
    hidden: int = Field(128, ge=8, description="GRU width")
    words: int = Field(5000, ge=1, description="the corrector's word vocabulary: the most "
                       "frequent words of the leaked sentences")


def build_decoder(options: Options, context: BuildContext) -> Attack:
    from .decoding import AdaptiveDecoder

    return AdaptiveDecoder()


def build_rerank(options: RerankOptions, context: BuildContext) -> Attack:
    from .decoding import Rerank

    return Rerank(options.candidates)


def build_corrector(options: CorrectorOptions, context: BuildContext) -> Attack:
    from .correction import Corrector, Settings

    return Corrector(Settings(**options.model_dump()))


def build_nearest(options: NearestOptions, context: BuildContext) -> Attack:
    from .nearest import Nearest

    return Nearest(options.corpus)


def build_oracle(options: OracleOptions, context: BuildContext) -> Attack:
    from .oracle import OracleRanking

    return OracleRanking(options.corpus, options.repeats)


def build_bag_of_words(options: BagOfWordsOptions, context: BuildContext) -> Attack:
    from .words import BagOfWords

    return BagOfWords(options.words, options.epochs, options.held_out, seed=context.seed,
                      device=context.device)


def build_prior(options: PriorOptions, context: BuildContext) -> Attack:
    from .prior import Prior

    return Prior(options.sentences, options.words)


def build_align(options: AlignOptions, context: BuildContext) -> Attack:
    from .align import Align

    return Align(options.pairs, options.surrogate, options.draws)


@hookimpl
def register_attacks(register: Register) -> None:
    """Register the adaptive decoder, its re-ranking, iterative correction, the nearest public
    sentence, oracle ranking of the public sentences by the noise model's likelihood,
    bag-of-words inference, few-shot alignment into a surrogate's space and the prior (one
    constant output)."""
    register("decoder", build_decoder,
             description="the run's decoder trained on the leaked (defended) pairs: its best "
                         "output (Kerscher & Eger 2020, as an adaptive attacker)")
    register("rerank", build_rerank, options=RerankOptions,
             description="the decoder's candidates re-encoded through the store, the closest "
                         "to the attacked vector kept (vec2text's step 0, Morris et al. 2023)")
    register("corrector", build_corrector, options=CorrectorOptions,
             description="iterative correction: a model rewriting the decoder's hypothesis "
                         "from the target vector, the hypothesis's and their difference, T "
                         "steps of a beam, the closest by cosine kept (vec2text, Morris et al. "
                         "2023)")
    register("nearest", build_nearest, options=NearestOptions,
             description="the public sentence whose vector is closest by cosine (no training)")
    register("oracle", build_oracle, options=OracleOptions,
             description="the public sentence under which the attacked vector is likeliest, "
                         "by the store's noise model as repeated queries reveal it (cosine "
                         "under a deterministic defence)")
    register("bag-of-words", build_bag_of_words, options=BagOfWordsOptions,
             description="which content words the sentence holds, from its vector (a "
                         "multi-label classifier; Song & Raghunathan 2020)")
    register("prior", build_prior, options=PriorOptions,
             description="one constant output for every vector, the best the leaked sentences "
                         "suggest (a frequent sentence, or the most frequent content words): "
                         "what knowing the kind of text alone scores")
    register("align", build_align, options=AlignOptions,
             description="a ridge map from k leaked pairs into a surrogate encoder's space, "
                         "read by the surrogate's decoder (ALGEN, Chen et al. 2025)")
