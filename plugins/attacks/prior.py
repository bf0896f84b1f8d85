"""The prior: one constant output for every vector, the best that the leaked sentences alone
suggest. It reads no vector, so what it scores is what an attack gets for knowing the kind of
text and nothing of the sentence; the floor of leakage is at least this (docs/privacy.md).

Its candidates are the leaked sentences that occur most often and the most frequent content
words of the leaked sentences, the first k of them joined (k = 1, 2, ...); it keeps the one
with the highest mean content-word F1 (`token-f1:content`, 13a tokens) against the leaked
sentences, the measure every attack is compared on.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from harness.plugin import AttackInputs, Inversion, ThreatModel

from ..metrics.tokens import content_tokens, token_prf

SAMPLE = 2000
"""The leaked sentences a candidate is scored against (the first ones)."""


def candidates(texts: list[str], sentences: int, words: int) -> list[str]:
    """The `sentences` most frequent of `texts` (those occurring more than once), then the
    most frequent content words joined, the first 1, 2, ..., `words` of them (equal counts in
    alphabetical order)."""
    repeated = [text for text, count in sorted(Counter(texts).items(),
                                               key=lambda item: (-item[1], item[0]))
                if count > 1][:sentences]
    counts = Counter(word for text in texts for word in content_tokens(text, "13a"))
    frequent = [word for word, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
    return repeated + [" ".join(frequent[:k]) for k in range(1, min(words, len(frequent)) + 1)]


def mean_f1(reference: list[str], output: str) -> float:
    """The mean content-word F1 (13a tokens) of one constant `output` against `reference`."""
    return float(np.mean([token_prf(text, output, content=True, tokenize="13a")[2]
                          for text in reference])) if reference else 0.0


class Prior:
    """The best constant output: of `candidates(leaked texts, sentences, words)`, the one with
    the highest mean content-word F1 on the first `SAMPLE` leaked sentences."""

    threat = ThreatModel(leaked=None)

    def __init__(self, sentences: int, words: int) -> None:
        self.sentences, self.words = sentences, words
        self.output = ""

    def fit(self, inputs: AttackInputs) -> None:
        texts = list(inputs.texts)
        found = candidates(texts, self.sentences, self.words)
        sample = texts[:SAMPLE]
        scores = [mean_f1(sample, candidate) for candidate in found]
        self.output = found[int(np.argmax(scores))] if found else ""

    def invert(self, vectors: np.ndarray) -> Inversion:
        return Inversion(sentences=[self.output] * len(vectors))
