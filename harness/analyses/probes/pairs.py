"""The trained encoder x decoder pairs a probe decodes with: each pair encodes any sentences with
its encoder and decodes any vectors with its trained decoder, in batches, with the spec's
`generation` settings (or the probes' own beam)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.errors import SpecError
from harness.spec import (
    ENCODE_BATCH_SIZE,
    Component,
    GenerationSection,
    Normalise,
    Spec,
    encode_batch_size,
    preflight,
    refuse,
)
from harness.stages.base import RunContext
from harness.stages.corpus import prepare_corpus
from harness.stages.encode import Encoded, encode_corpus
from harness.stages.generate import decode as decode_vectors
from harness.stages.generate import load_trained_decoder
from harness.stages.train import TrainedDecoder, train_decoder_for
from harness.stages.vocab import Vocab, prepare_vocab
from harness.util.cache import Cache
from harness.util.devices import resolve_device


@dataclass(frozen=True)
class ProbedPair:
    """One encoder with one of its trained decoders, ready to encode and decode anything."""

    encoder: str
    decoder: str
    encoded: Encoded
    model: Any
    vocab: Vocab
    generation: GenerationSection
    device: str
    batch_size: int = ENCODE_BATCH_SIZE

    def encode(self, sentences: Sequence[str]) -> np.ndarray:
        """The encoder's vectors of `sentences` (normalised as the corpus is, by the caller)."""
        return self.encoded.encode(list(sentences), self.batch_size)

    def decode(self, vectors: np.ndarray) -> list[str]:
        """The decoder's sentence for each vector (N, D), batched."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if len(vectors) == 0:
            return []
        hypotheses = decode_vectors(self.model, vectors, self.generation, self.vocab,
                                    self.device)
        return [self.vocab.vocab.decode(h.ids) for h in hypotheses]


def normaliser(options: Normalise) -> Callable[[str], str]:
    """How a probe's sentences are normalised: as the corpus is (case, digits), whitespace
    collapsed as the corpus reader does."""
    from harness.text.reading import normalise

    return lambda sentence: " ".join(normalise(sentence, options).split())


def probed_pair(ctx: RunContext, decoder: Component, trained: TrainedDecoder, encoded: Encoded,
                vocab: Vocab, beam: int | None = None) -> ProbedPair:
    """The pair of `encoded`'s encoder and the trained `decoder`, searching with the spec's
    `generation` settings, or with width `beam` when given."""
    generation = ctx.spec.generation
    if beam is not None:
        generation = generation.model_copy(update={"beam": beam})
    return ProbedPair(encoder=encoded.encoder, decoder=decoder.name, encoded=encoded,
                      model=load_trained_decoder(ctx, decoder, trained, encoded, vocab),
                      vocab=vocab, generation=generation, device=ctx.device,
                      batch_size=encode_batch_size(ctx.spec))


def trained_pairs(spec: Spec, cache: Cache, encoders: Sequence[str] = (),
                  decoders: Sequence[str] = ()) -> Iterator[ProbedPair]:
    """Yield each selected encoder x decoder pair the spec trains, with its trained decoder
    (the cache's, or trained now as `harness run` would)."""
    # Metrics, downstream tasks and probes play no part here: their problems do not stop a probe.
    refuse(preflight(spec), sections=("device", "corpus", "vocab", "encoders", "decoders"))
    chosen_decoders = {c.name for c in _chosen(spec, "decoder", decoders)}
    chosen_encoders = {c.name for c in _chosen(spec, "encoder", encoders)}
    pairs = [(encoder, decoder) for encoder, decoder in spec.pairs()
             if encoder.name in chosen_encoders and decoder.name in chosen_decoders]
    if not pairs:
        raise SpecError("the spec trains none of the chosen decoders for the chosen encoders "
                        "(see the decoders' `encoders:`)", file="--decoder")
    ctx = RunContext(spec=spec, cache=cache, device=resolve_device(spec.device))
    corpus = prepare_corpus(ctx)
    vocab = prepare_vocab(ctx, corpus)
    encoded: dict[str, Encoded] = {}
    for encoder, decoder in pairs:
        if encoder.name not in encoded:
            encoded[encoder.name] = encode_corpus(ctx, encoder, corpus, vocab)
        trained = train_decoder_for(ctx, decoder, encoded[encoder.name], corpus, vocab)
        yield probed_pair(ctx, decoder, trained, encoded[encoder.name], vocab)


def _chosen(spec: Spec, kind: str, names: Sequence[str]) -> list[Component]:
    """The spec's components of `kind` named in `names` (all of them when `names` is empty)."""
    components = spec.components(kind)
    known = [c.name for c in components]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SpecError(f"{', '.join(map(repr, unknown))} not among the spec's {kind}s "
                        f"({', '.join(known) or 'none'})", file=f"--{kind}")
    if not components:
        raise SpecError(f"the spec has no {kind}s to probe", file=spec.source, field=f"{kind}s")
    return [c for c in components if not names or c.name in names]
