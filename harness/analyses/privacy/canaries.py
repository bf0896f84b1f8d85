"""Canaries: sentences carrying known names, places, numbers and dates at known positions, how
much of each entity an attacker's output recovers, and the candidate sentences its exposure is
measured on (`harness.analyses.privacy.exposure`).

The entities are drawn, from a seed, from values of the kinds the attacker's training text holds
(`harness.analyses.privacy.entities`: the corpus generator's own word lists, or first-party
lists of common first names, cities, numbers and dates), normalised like the run's corpus and
kept only where the run's subword vocabulary represents them without <unk> (`lexicon`). A
corpus with `digits: zero` turns every digit into 0, so numbers that differ only in their digits
become one value. Each canary is measured in subword pieces: one that `generation.max_len` would
cut, or that holds <unk>, is refused (`check_canaries`).

An entity is recovered exactly when its tokens appear, in order and contiguous, in the output,
and partly when at least half of its tokens appear in it. For its exposure (Carlini et al.
2019, "The Secret Sharer", Sec. 4) each entity comes with M candidates: the true value and M-1
other values of its type, drawn from the seed, each substituted into the canary sentence
(`Canary.variants`, the true sentence first).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from harness.analyses.privacy.entities import ENTITY_TYPES, FRAMES, entity_values, final_stop
from harness.analyses.privacy.spec import privacy_settings
from harness.errors import HarnessError
from harness.text.words import words

if TYPE_CHECKING:
    from harness.spec import Spec
    from harness.stages.base import RunContext
    from harness.stages.corpus import Corpus
    from harness.text.subwords import SubwordVocab

__all__ = ["ENTITY_TYPES", "Canary", "canaries", "canary_set", "check_canaries",
           "candidate_lists", "drawn_canaries", "lexicon", "recovered", "recovery_counts",
           "variants_digest"]

MIN_VALUES = 2
"""Values an entity type needs for a rank among candidates to mean anything."""


@dataclass(frozen=True)
class Canary:
    """One canary sentence; its entities, (type, text) in the order they appear; and for each
    entity the candidate sentences of its exposure, the true sentence first."""

    sentence: str
    entities: tuple[tuple[str, str], ...]
    variants: tuple[tuple[str, ...], ...] = ()


def lexicon(values: Mapping[str, Sequence[str]], normalise: Callable[[str], str] = str,
            represents: Callable[[str], bool] = lambda text: True
            ) -> dict[str, tuple[str, ...]]:
    """Entity type -> its values normalised by `normalise` (the run's), without repeats, and
    only those `represents` accepts (the run's vocabulary without <unk>). Raise HarnessError
    for a type left with fewer than two values."""
    found = {}
    for kind, raw in values.items():
        kept = tuple(value for value in dict.fromkeys(normalise(v) for v in raw)
                     if represents(value))
        if len(kept) < MIN_VALUES:
            raise HarnessError(
                f"privacy.canaries: {len(kept)} of the {len(raw)} {kind} values of "
                "harness.analyses.privacy.entities stay distinct after the corpus' "
                "normalisation and free of <unk> in the run's vocabulary, and canaries need "
                f"{MIN_VALUES} of each type: set `privacy.canaries: 0` for this corpus")
        found[kind] = kept
    return found


def canaries(count: int, seed: int, values: Mapping[str, Sequence[str]],
             normalise: Callable[[str], str] = str, candidates: int = 32, stop: str = "."
             ) -> list[Canary]:
    """`count` canary sentences from `seed`: canary i fills frame i modulo the frames' number
    with values drawn from `values` (`lexicon`'s), ends in `stop` (`final_stop`) and is
    normalised by `normalise`; each entity gets min(`candidates`, its type's values) candidate
    sentences, the true one first."""
    rng = np.random.default_rng(seed)
    found = []
    for index in range(count):
        frame = FRAMES[index % len(FRAMES)] + stop
        kinds = [kind for _, kind in sorted((frame.index("{" + kind + "}"), kind)
                                            for kind in ENTITY_TYPES if "{" + kind + "}" in frame)]
        chosen = {kind: values[kind][int(rng.integers(len(values[kind])))] for kind in kinds}
        variants = []
        for kind in kinds:
            others = [value for value in values[kind] if value != chosen[kind]]
            size = min(candidates, len(values[kind])) - 1
            drawn = [others[int(i)] for i in rng.choice(len(others), size=size, replace=False)]
            variants.append(tuple(normalise(frame.format(**{**chosen, kind: value}))
                                  for value in [chosen[kind], *drawn]))
        found.append(Canary(sentence=normalise(frame.format(**chosen)),
                            entities=tuple((kind, normalise(chosen[kind])) for kind in kinds),
                            variants=tuple(variants)))
    return found


def variants_digest(found: Sequence[Canary]) -> str:
    """SHA-256 of every canary's candidate sentences: what a cache key holds in their place
    (they are many, M per entity)."""
    return hashlib.sha256(json.dumps([c.variants for c in found]).encode()).hexdigest()


def candidate_lists(found: Sequence[Canary]) -> tuple[list[int], list[tuple[str, ...]]]:
    """Each (canary, entity) in order, flattened: the canary's row and the entity's candidate
    sentences (`Canary.variants`, the true one first), as a ranker is asked them."""
    rows, lists = [], []
    for row, canary in enumerate(found):
        for variants in canary.variants:
            rows.append(row)
            lists.append(variants)
    return rows, lists


def check_canaries(found: Sequence[Canary], encode: Callable[[str], list[int]], unk_id: int,
                   max_len: int) -> None:
    """Raise HarnessError for a canary that holds <unk> in the run's vocabulary (`encode`: a
    sentence -> its piece ids) or that decoding would cut: `max_len` counts the end of
    sentence, so a canary may have at most `max_len` - 1 pieces."""
    lengths = []
    for canary in found:
        ids = encode(canary.sentence)
        if unk_id in ids:
            raise HarnessError(f"privacy.canaries: the canary {canary.sentence!r} holds a "
                               "character the run's vocabulary writes as <unk>; set "
                               "`privacy.canaries: 0` for this vocabulary")
        lengths.append(len(ids))
    longest = max(lengths, default=0)
    if longest + 1 > max_len:
        sentence = found[lengths.index(longest)].sentence
        raise HarnessError(f"privacy.canaries: the canary {sentence!r} is {longest} subword "
                           f"pieces and generation.max_len {max_len} (the end of sentence "
                           f"included) would cut it: raise `generation.max_len` to at least "
                           f"{longest + 1}, or set `privacy.canaries: 0`")


def canary_set(spec: Spec, vocab: SubwordVocab, sentences: Sequence[str] = ()) -> list[Canary]:
    """The run's canaries (`privacy.canaries`, `privacy.canary_seed`,
    `privacy.canary_candidates`): their entities from the corpus generator's lists or the
    first-party ones, kept where the run's `vocab` writes them without
    <unk>, punctuated as `sentences` (the corpus' training sentences) end theirs, normalised
    like the corpus; refused when `generation.max_len` would cut one."""
    from harness.text.reading import normalise as normalised

    section = privacy_settings(spec)
    options = spec.corpus.normalise

    def normalise(sentence: str) -> str:
        return " ".join(normalised(sentence, options).split())

    def represents(text: str) -> bool:
        return vocab.unk_id not in vocab.encode([text])[0]

    values = lexicon(entity_values(spec.corpus.train.generate), normalise, represents)
    found = canaries(section.canaries, section.canary_seed, values, normalise,
                     section.canary_candidates, final_stop(sentences))
    check_canaries(found, lambda sentence: vocab.encode([sentence])[0], vocab.unk_id,
                   spec.generation.max_len)
    return found


CANARIES_FILE = "canaries.json"


STOP_SAMPLE = 1000
"""The training sentences `final_stop` reads."""


def drawn_canaries(ctx: RunContext, corpus: Corpus, vocab: SubwordVocab, vocab_key: str
                   ) -> list[Canary]:
    """The run's canaries (`canary_set`), drawn once per run and kept in the cache, so that
    every privacy job (each encoder's points, the floor's) reads the same set."""
    spec = ctx.spec
    section = privacy_settings(spec)
    parts = {"version": 2, "canaries": section.canaries, "seed": section.canary_seed,
             "candidates": section.canary_candidates, "vocab": vocab_key,
             "normalise": spec.corpus.normalise.model_dump(mode="json"),
             "generate": spec.corpus.train.generate, "max_len": spec.generation.max_len,
             "corpus": corpus.train_key}

    def build(directory: Path) -> dict[str, int]:
        found = canary_set(spec, vocab, corpus.train[:STOP_SAMPLE])
        (directory / CANARIES_FILE).write_text(json.dumps(
            [asdict(canary) for canary in found], ensure_ascii=False), encoding="utf-8")
        return {"canaries": len(found)}

    directory = ctx.cache.produce("canaries", parts, build, label="the canaries")
    return [Canary(sentence=c["sentence"], entities=tuple(tuple(e) for e in c["entities"]),
                   variants=tuple(tuple(v) for v in c["variants"]))
            for c in json.loads((directory / CANARIES_FILE).read_text(encoding="utf-8"))]


def recovered(entity: str, hypothesis: str) -> tuple[bool, bool]:
    """(exact, partial): the entity's tokens contiguous in the hypothesis; at least half of its
    tokens anywhere in it (each token counted as often as it occurs). Tokens are sacrebleu's
    13a tokens (`harness.text.words`), so "london." holds "london"."""
    tokens, output = words(entity), words(hypothesis)
    width = len(tokens)
    exact = any(output[i:i + width] == tokens for i in range(len(output) - width + 1))
    remaining = list(output)
    hits = 0
    for token in tokens:
        if token in remaining:
            remaining.remove(token)
            hits += 1
    return exact, 2 * hits >= width


def recovery_counts(found: Sequence[Canary], hypotheses: Sequence[str]
                    ) -> dict[str, tuple[int, int, int]]:
    """Entity type -> (entities, recovered exactly, recovered partly) over the canaries and the
    attacker's output for each."""
    counts = {kind: [0, 0, 0] for kind in ENTITY_TYPES}
    for canary, hypothesis in zip(found, hypotheses, strict=True):
        for kind, text in canary.entities:
            exact, partial = recovered(text, hypothesis)
            counts[kind][0] += 1
            counts[kind][1] += exact
            counts[kind][2] += partial
    return {kind: (n, e, p) for kind, (n, e, p) in counts.items() if n}
