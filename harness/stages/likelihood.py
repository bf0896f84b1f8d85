"""The decoder's likelihoods for the metrics that grade a vector by them (`info`, `retrieval`):
the trained decoder as a scorer of any test sentence given any test vector, and the run's
unconditional model.

The unconditional model is the decoder's twin trained on vectors that carry nothing: the same
decoder component and options, the same seed and training sentences, every input vector zero
(one dimension: a zero times any weight is zero, so the width of the vector does not matter).
It is trained once per decoder, seed and training size of a run, whichever job first asks; the
cache keys it on the decoder and the corpus only, so every encoder's job finds it. A decoder
trained on the random-gaussian control would not do: it sees a different random vector with
each training sentence and can fit that noise, which makes it a worse language model than one
that never had an input and would inflate every encoder's gain over it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.protocols import DecoderLikelihood, UnconditionalLikelihood
from harness.spec import Component
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.encode import Encoded
from harness.stages.train import TrainedDecoder, decoder_parts, train_decoder_for
from harness.stages.vocab import Vocab
from harness.util.cache import artifact_key

VERSION = 1
UNCONDITIONAL = "(unconditional)"
"""How the unconditional model's vectors are named where an encoder's would be (logs, keys)."""
NLL_FILE = "nll.npy"


@dataclass(frozen=True)
class Decoding:
    """What a sample set was generated with: the decoder entry, its trained weights, and the
    vectors, corpus and vocabulary it read. Handed to the score stage for the metrics that
    need the decoder or the unconditional model."""

    component: Component
    trained: TrainedDecoder
    encoded: Encoded
    corpus: Corpus
    vocab: Vocab


def decoder_likelihood(ctx: RunContext, decoding: Decoding) -> DecoderLikelihood:
    """The trained decoder as `DecoderLikelihood`: NLL of test sentence j given test vector i
    for any pairs (i, j), loaded on first use."""
    from harness.generation.perplexity import reference_nll
    from harness.stages.generate import load_trained_decoder

    vocab = decoding.vocab.vocab
    ids = vocab.encode(decoding.corpus.test)
    loaded: list[Any] = []

    def nll(vector_rows: np.ndarray, sentence_rows: np.ndarray) -> np.ndarray:
        if not loaded:
            loaded.append(load_trained_decoder(ctx, decoding.component, decoding.trained,
                                               decoding.encoded, decoding.vocab))
        vectors = np.asarray(decoding.encoded.vectors("test"))[np.asarray(vector_rows)]
        scored = reference_nll(loaded[0], vectors, [ids[j] for j in sentence_rows],
                               bos_id=vocab.bos_id, eos_id=vocab.eos_id,
                               batch_size=ctx.spec.generation.batch_size, device=ctx.device)
        return np.array([value for value, _ in scored], dtype=np.float64)

    return DecoderLikelihood(name=decoding.component.name, encoder=decoding.encoded.encoder,
                             sentences=len(ids), nll=nll, key=decoding.trained.key)


def unconditional_vectors(ctx: RunContext, corpus: Corpus) -> Encoded:
    """Zero vectors (n, 1) for the training and test splits: the unconditional model's input."""
    keys, directories = {}, {}
    for split, key, count in (("train", corpus.train_key, len(corpus.train)),
                              ("test", corpus.test_key, len(corpus.test))):
        def build(directory: Path, split: str = split, count: int = count) -> dict[str, Any]:
            np.save(directory / f"{split}.npy", np.zeros((count, 1), dtype=np.float32))
            return {"sentences": count}

        directories[split] = ctx.cache.produce(
            "encode", {"version": VERSION, "vectors": "zero", "corpus": key, "split": split},
            build, label=f"{UNCONDITIONAL} {split}")
        keys[split] = directories[split].name
    return Encoded(encoder=UNCONDITIONAL, keys=keys, dim=1, directories=directories)


def unconditional_model(ctx: RunContext, decoding: Decoding, zero: Encoded) -> TrainedDecoder:
    """The unconditional twin of the decoder that generated the samples, trained on `zero`
    (`unconditional_vectors`) when the cache lacks it (module docstring)."""
    trained = decoding.trained
    return train_decoder_for(ctx, decoding.component, zero, decoding.corpus, decoding.vocab,
                             seed=trained.seed, sentences=trained.sentences)


def unconditional_likelihood(ctx: RunContext, decoding: Decoding) -> UnconditionalLikelihood:
    """Each test sentence's NLL under the unconditional model, computed once per model."""
    from harness.generation.perplexity import reference_nll
    from harness.stages.generate import load_trained_decoder

    zero = unconditional_vectors(ctx, decoding.corpus)
    key = unconditional_key(ctx, decoding.component, zero, decoding.vocab,
                            seed=decoding.trained.seed, sentences=decoding.trained.sentences)
    started = time.perf_counter()

    def build(directory: Path) -> dict[str, Any]:
        # Trained only when the NLLs are missing: a run that joins a bundle finds the
        # bundle's NLLs installed under this key and trains no unconditional model.
        trained = unconditional_model(ctx, decoding, zero)
        vocab = decoding.vocab.vocab
        model = load_trained_decoder(ctx, decoding.component, trained, zero, decoding.vocab)
        scored = reference_nll(model, zero.vectors("test"), vocab.encode(decoding.corpus.test),
                               bos_id=vocab.bos_id, eos_id=vocab.eos_id,
                               batch_size=ctx.spec.generation.batch_size, device=ctx.device)
        np.save(directory / NLL_FILE, np.array(scored, dtype=np.float64).reshape(-1, 2))
        return {"sentences": len(scored)}

    directory = ctx.cache.produce("nll", nll_parts(key, zero), build,
                                  label=f"{UNCONDITIONAL} -> {decoding.component.name}")
    ctx.add_time("score", time.perf_counter() - started)
    rows = np.load(directory / NLL_FILE)
    return UnconditionalLikelihood(nll=rows[:, 0], tokens=rows[:, 1].astype(np.int64),
                                   key=key)


def unconditional_key(ctx: RunContext, component: Component, zero: Encoded, vocab: Vocab, *,
                      seed: int, sentences: int | None = None) -> str:
    """The cache key of decoder `component`'s unconditional model trained with `seed` (on the
    first `sentences` training sentences, for a curve point), known without training it."""
    return artifact_key("train", decoder_parts(component, zero, vocab, seed=seed,
                                               sentences=sentences))


def nll_parts(trained_key: str, zero: Encoded) -> dict[str, Any]:
    """The cache key's parts of the test sentences' NLLs under the unconditional model whose
    training artifact is `trained_key`."""
    return {"version": VERSION, "trained": trained_key, "encoded": zero.keys["test"]}


def unconditional_nll_keys(ctx: RunContext, corpus: Corpus, vocab: Vocab
                           ) -> list[tuple[str, int, str]]:
    """(decoder, seed, key of the "nll" artifact) of every unconditional model a run of
    `ctx.spec` scores with (one per decoder and seed, when a metric needs one): what a joined
    run shares with its reference (`harness.reference.archive`)."""
    if not any("unconditional" in m.info.needs for m in ctx.spec.metrics):
        return []
    zero = unconditional_vectors(ctx, corpus)
    return [(decoder.name, seed,
             artifact_key("nll", nll_parts(unconditional_key(ctx, decoder, zero, vocab,
                                                             seed=seed), zero)))
            for decoder in ctx.spec.decoders for seed in ctx.spec.decoder_seeds(decoder)]
