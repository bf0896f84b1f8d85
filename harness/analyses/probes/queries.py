"""Probes asked for on the command line (`harness generate`, `harness analogy`), decoded with
every trained pair of a spec.

- `generate`: decode any sentences from their vectors (Table 2, left: "Input sentence x,
  encoders and their sample reproductions y from vec2sent");
- `analogy`: for queries a, b, c with vectors r, s, v, decode u = r - s + v (section 4: "we
  compute the vector u := r - s + v (inspired by 'king-woman+man') and give u as input to
  V2S"), the z of the analogy a : b :: z : c;
- `analogy_set`: a whole analogy set (a TSV file), every item solved and scored;
- `decode_expression`: any vector expression over named sentences (`harness.analyses.probes.expression`);
- `interpolate`: decode z(alpha) = alpha x + (1 - alpha) y between two sentences' vectors
  (section 1's interpolation of any two vectors).

Each probe runs the spec's stages up to the trained decoders, as `harness run` does (from the
cache when the spec has been run; whatever the cache lacks is built), encodes the query
sentences normalised like the corpus, and decodes with the spec's `generation` settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.analyses.probes.analogies import (
    AnalogySet,
    analogy_vectors,
    read_analogy_set,
    score_analogies,
    solve_analogies,
)
from harness.analyses.probes.expression import evaluate, names, parse
from harness.analyses.probes.interpolation import alphas as path_alphas
from harness.analyses.probes.pairs import ProbedPair, normaliser, trained_pairs
from harness.analyses.probes.results import AnalogyOutput, AnalogySetResult, Form
from harness.errors import SpecError
from harness.spec import Spec
from harness.util.cache import Cache


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
class SolvedSet:
    """One pair's answers to an analogy set: its scores and every item's output."""

    encoder: str
    decoder: str
    result: AnalogySetResult
    items: list[AnalogyOutput]


@dataclass(frozen=True)
class AnalogySetRun:
    """An analogy set solved by every selected pair."""

    analogy_set: AnalogySet
    pairs: list[SolvedSet] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"set": {"name": self.analogy_set.name, "source": self.analogy_set.source,
                        "form": self.analogy_set.form, "items": len(self.analogy_set.items)},
                "outputs": [{"encoder": p.encoder, "decoder": p.decoder,
                             "summary": p.result.model_dump(mode="json", exclude={"examples"}),
                             "items": [i.model_dump(mode="json") for i in p.items]}
                            for p in self.pairs]}


def generate(spec: Spec, cache: Cache, sentences: Sequence[str], *,
             encoders: Sequence[str] = (), decoders: Sequence[str] = ()) -> ProbeResult:
    """Decode each sentence from its own vector, with every (selected) encoder and decoder."""
    inputs = normalised(spec, sentences, at_least=1)
    return _probe(spec, cache, inputs, lambda vectors: vectors, encoders, decoders)


def analogy(spec: Spec, cache: Cache, a: str, b: str, c: str, *, form: Form = "paper",
            encoders: Sequence[str] = (), decoders: Sequence[str] = ()) -> ProbeResult:
    """Decode u = vec(a) - vec(b) + vec(c), the z of a : b :: z : c (the paper's form), or
    vec(b) - vec(a) + vec(c), the d of a : b :: c : d (the classic form)."""
    a, b, c = normalised(spec, [a, b, c], at_least=3)
    row = f"{a} - {b} + {c}" if form == "paper" else f"{b} - {a} + {c}"
    return _probe(spec, cache, [a, b, c],
                  lambda v: analogy_vectors(form, v[0:1], v[1:2], v[2:3]),
                  encoders, decoders, rows=[row])


def interpolate(spec: Spec, cache: Cache, x: str, y: str, steps: int, *,
                encoders: Sequence[str] = (), decoders: Sequence[str] = ()) -> ProbeResult:
    """Decode z(alpha) = alpha vec(x) + (1 - alpha) vec(y) for `steps` alphas from 1 to 0."""
    if steps < 2:
        raise SpecError(f"interpolation needs at least 2 steps (its two ends), got {steps}",
                        file="--interpolate")
    x, y = normalised(spec, [x, y], at_least=2)
    weights = np.asarray(path_alphas(steps))[:, None]
    return _probe(spec, cache, [x, y],
                  lambda v: weights * v[0:1] + (1.0 - weights) * v[1:2],
                  encoders, decoders, rows=[f"alpha={a:.2f}" for a in weights[:, 0]])


def analogy_set(spec: Spec, cache: Cache, path: Path, form: Form = "paper", *,
                encoders: Sequence[str] = (), decoders: Sequence[str] = ()) -> AnalogySetRun:
    """Solve and score every item of the analogy set in `path` with every selected pair."""
    items = read_analogy_set(path, form).normalised(normaliser(spec.corpus.normalise))
    run = AnalogySetRun(items)
    for pair in trained_pairs(spec, cache, encoders, decoders):
        result, scored = score_analogies(items, solve_analogies(items, pair.encode,
                                                                pair.decode))
        run.pairs.append(SolvedSet(pair.encoder, pair.decoder, result, scored))
    return run


def decode_expression(spec: Spec, cache: Cache, text: str, lets: Mapping[str, str], *,
                      encoders: Sequence[str] = (), decoders: Sequence[str] = ()
                      ) -> ProbeResult:
    """Decode the vector of expression `text` over the sentences named in `lets`."""
    tree = parse(text)
    # A dry run on zero vectors: undefined names and operations the language refuses are
    # found before any encoder loads.
    evaluate(tree, {name: np.zeros(1) for name in lets})
    used = names(tree)
    sentences = dict(zip(used, normalised(spec, [lets[n] for n in used], at_least=0)))

    def combine(vectors: np.ndarray) -> np.ndarray:
        lookup = {name: vectors[index] for index, name in enumerate(used)}
        return evaluate(tree, lookup)[None, :]

    row = " ".join(text.split())
    if used:
        row += "  where " + "; ".join(f"{n} = {s}" for n, s in sentences.items())
    return _probe(spec, cache, list(sentences.values()), combine, encoders, decoders,
                  rows=[row])


def normalised(spec: Spec, sentences: Sequence[str], *, at_least: int) -> list[str]:
    """The sentences normalised like the spec's corpus; raise unless there are `at_least` and
    none is empty."""
    normalise = normaliser(spec.corpus.normalise)
    out = [normalise(s) for s in sentences]
    if len(out) < at_least or any(not s.strip() for s in out):
        raise SpecError(f"expected {at_least} non-empty sentence{'s' if at_least != 1 else ''}, "
                        f"got {len(out)}" + (" (some empty)" if out else ""), file="<input>")
    return out


def _probe(spec: Spec, cache: Cache, inputs: list[str], combine: Callable[[np.ndarray], Any],
           encoders: Sequence[str], decoders: Sequence[str],
           rows: list[str] | None = None) -> ProbeResult:
    result = ProbeResult(rows=rows or inputs)
    for pair in trained_pairs(spec, cache, encoders, decoders):
        result.probes.append(Probe(pair.encoder, pair.decoder, _decoded(pair, inputs, combine)))
    return result


def _decoded(pair: ProbedPair, inputs: list[str], combine: Callable[[np.ndarray], Any]
             ) -> list[str]:
    return pair.decode(np.asarray(combine(pair.encode(inputs)), dtype=np.float32))
