"""Probes of a spec's trained decoders (Kerscher & Eger 2020, section 4 and Table 2).

- `generate`: decode any sentences from their vectors (Table 2, left: "Input sentence x,
  encoders and their sample reproductions y from vec2sent");
- `analogy`: for queries a, b, c with vectors r, s, v, decode u = r - s + v (section 4: "we
  compute the vector u := r - s + v (inspired by 'king-woman+man') and give u as input to
  V2S"), the z of the analogy a : b :: z : c;
- `interpolate`: decode z(alpha) = alpha x + (1 - alpha) y between two sentences' vectors
  (section 1's interpolation of any two vectors).

Each probe runs the spec's stages up to the trained decoders, as `harness run` does (from the
cache when the spec has been run; whatever the cache lacks is built), encodes the query
sentences normalised like the corpus, and decodes with the spec's `generation` settings.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.cache import Cache
from harness.devices import resolve_device
from harness.errors import SpecError
from harness.spec import Component, Spec, preflight, refuse
from harness.stages.base import RunContext
from harness.stages.corpus import prepare_corpus
from harness.stages.encode import encode_corpus
from harness.stages.generate import decode, load_trained_decoder
from harness.stages.train import train_decoder_for
from harness.stages.vocab import prepare_vocab


@dataclass(frozen=True)
class Probe:
    """One encoder -> decoder pair's outputs, one per query row."""

    encoder: str
    decoder: str
    outputs: list[str]


@dataclass(frozen=True)
class ProbeResult:
    """What a probe decoded: the query rows (the normalised inputs, or how each vector was
    made) and every pair's outputs for them."""

    rows: list[str]
    probes: list[Probe] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"rows": self.rows,
                "outputs": [{"encoder": p.encoder, "decoder": p.decoder,
                             "outputs": p.outputs} for p in self.probes]}


@dataclass(frozen=True)
class _Pair:
    encoder: str
    decoder: str
    encoded: Any
    model: Any
    vocab: Any


def generate(spec: Spec, cache: Cache, sentences: Sequence[str], *,
             encoders: Sequence[str] = (), decoders: Sequence[str] = ()) -> ProbeResult:
    """Decode each sentence from its own vector, with every (selected) encoder and decoder."""
    inputs = _normalised(spec, sentences, at_least=1)
    return _probe(spec, cache, inputs, lambda vectors: vectors, encoders, decoders)


def analogy(spec: Spec, cache: Cache, a: str, b: str, c: str, *,
            encoders: Sequence[str] = (), decoders: Sequence[str] = ()) -> ProbeResult:
    """Decode u = vec(a) - vec(b) + vec(c): the z of a : b :: z : c."""
    a, b, c = _normalised(spec, [a, b, c], at_least=3)
    return _probe(spec, cache, [a, b, c], lambda v: v[0:1] - v[1:2] + v[2:3],
                  encoders, decoders, rows=[f"{a} - {b} + {c}"])


def interpolate(spec: Spec, cache: Cache, x: str, y: str, steps: int, *,
                encoders: Sequence[str] = (), decoders: Sequence[str] = ()) -> ProbeResult:
    """Decode z(alpha) = alpha vec(x) + (1 - alpha) vec(y) for `steps` alphas from 1 to 0."""
    if steps < 2:
        raise SpecError(f"interpolation needs at least 2 steps (its two ends), got {steps}",
                        file="--interpolate")
    x, y = _normalised(spec, [x, y], at_least=2)
    alphas = np.linspace(1.0, 0.0, steps)
    return _probe(spec, cache, [x, y],
                  lambda v: alphas[:, None] * v[0:1] + (1.0 - alphas[:, None]) * v[1:2],
                  encoders, decoders, rows=[f"alpha={a:.2f}" for a in alphas])


def _normalised(spec: Spec, sentences: Sequence[str], *, at_least: int) -> list[str]:
    from harness.corpus import normalise

    out = [normalise(s, spec.corpus.normalise) for s in sentences]
    if len(out) < at_least or any(not s.strip() for s in out):
        raise SpecError(f"expected {at_least} non-empty sentence{'s' if at_least > 1 else ''}, "
                        f"got {len(out)}" + (" (some empty)" if out else ""), file="<input>")
    return out


def _probe(spec: Spec, cache: Cache, inputs: list[str], combine: Any,
           encoders: Sequence[str], decoders: Sequence[str],
           rows: list[str] | None = None) -> ProbeResult:
    result = ProbeResult(rows=rows or inputs)
    for pair in _trained_pairs(spec, cache, encoders, decoders):
        vectors = np.asarray(combine(pair.encoded.encode(inputs, spec.encode.batch_size)),
                             dtype=np.float32)
        hypotheses = decode(pair.model, vectors, spec.generation, pair.vocab,
                            resolve_device(spec.device))
        result.probes.append(Probe(pair.encoder, pair.decoder,
                                   [pair.vocab.vocab.decode(h.ids) for h in hypotheses]))
    return result


def _trained_pairs(spec: Spec, cache: Cache, encoders: Sequence[str],
                   decoders: Sequence[str]) -> Iterator[_Pair]:
    """Yield each selected encoder x decoder pair the spec trains, with its trained decoder."""
    # Metrics and downstream tasks play no part here: their problems do not stop a probe.
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
    encoded = {}
    for encoder, decoder in pairs:
        if encoder.name not in encoded:
            encoded[encoder.name] = encode_corpus(ctx, encoder, corpus, vocab)
        trained = train_decoder_for(ctx, decoder, encoded[encoder.name], corpus, vocab)
        model = load_trained_decoder(ctx, decoder, trained, encoded[encoder.name], vocab)
        yield _Pair(encoder.name, decoder.name, encoded[encoder.name], model, vocab)


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
