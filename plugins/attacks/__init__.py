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


class BagOfWordsOptions(Options):
    words: int = Field(2000, ge=1, description="the content words it predicts: the most "
                       "frequent of the leaked sentences")
    epochs: int = Field(30, ge=1, description="full-batch training epochs of the classifier")
    held_out: float = Field(0.1, gt=0, lt=0.5, description="share of the leaked pairs that "
                            "chooses the decision threshold")


class AlignOptions(Options):
    pairs: int = Field(1000, ge=3, description="leaked (text, vector) pairs the map is fitted "
                       "on (k)")
    surrogate: str | None = Field(None, description="the encoder of the run whose space the "
                                  "vectors are mapped into (default: the first other encoder "
                                  "under study)")


def build_decoder(options: Options, context: BuildContext) -> Attack:
    from .decoding import AdaptiveDecoder

    return AdaptiveDecoder()


def build_rerank(options: RerankOptions, context: BuildContext) -> Attack:
    from .decoding import Rerank

    return Rerank(options.candidates)


def build_nearest(options: NearestOptions, context: BuildContext) -> Attack:
    from .nearest import Nearest

    return Nearest(options.corpus)


def build_bag_of_words(options: BagOfWordsOptions, context: BuildContext) -> Attack:
    from .words import BagOfWords

    return BagOfWords(options.words, options.epochs, options.held_out, seed=context.seed,
                      device=context.device)


def build_align(options: AlignOptions, context: BuildContext) -> Attack:
    from .align import Align

    return Align(options.pairs, options.surrogate)


@hookimpl
def register_attacks(register: Register) -> None:
    """Register the adaptive decoder, its re-ranking, the nearest public sentence, bag-of-words
    inference and few-shot alignment into a surrogate's space."""
    register("decoder", build_decoder,
             description="the run's decoder trained on the leaked (defended) pairs: its best "
                         "output (Kerscher & Eger 2020, as an adaptive attacker)")
    register("rerank", build_rerank, options=RerankOptions,
             description="the decoder's candidates re-encoded through the store, the closest "
                         "to the attacked vector kept (vec2text's step 0, Morris et al. 2023)")
    register("nearest", build_nearest, options=NearestOptions,
             description="the public sentence whose vector is closest by cosine (no training)")
    register("bag-of-words", build_bag_of_words, options=BagOfWordsOptions,
             description="which content words the sentence holds, from its vector (a "
                         "multi-label classifier; Song & Raghunathan 2020)")
    register("align", build_align, options=AlignOptions,
             description="a ridge map from k leaked pairs into a surrogate encoder's space, "
                         "read by the surrogate's decoder (ALGEN, Chen et al. 2025)")
