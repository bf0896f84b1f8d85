"""Bag-of-words inference (Song & Raghunathan 2020, "Information Leakage in Embedding Models",
Sec. 5: which words a sentence contains, from its embedding): a multi-label logistic classifier
over the content words of the leaked sentences (sacrebleu's 13a tokens, as `token-f1:content`
counts them), its decision threshold chosen on held-out
leaked pairs for the best mean content-word F1 (the measure every attack is compared on).

Noise augmentation, the attacker's use of its query access (`ThreatModel(queries=True)`): under
a randomised defence the store answers every query with fresh noise, so the attacker re-encodes
its leaked training texts through the store and trains each epoch on a fresh draw of their
vectors (epoch 0 on the stored ones), learning the noise's distribution rather than one draw
of it, as the adaptive decoder does. A deterministic store (its answer equals the draw before
exactly) is not queried again (`Redraws`). The held-out pairs keep their stored vectors: the
threshold is chosen on one draw per sentence, as the attacked vectors are stored."""

from __future__ import annotations

from collections import Counter

import numpy as np

from harness.plugin import AttackInputs, Inversion, ThreatModel

from ..metrics.tokens import content_tokens, token_prf
from .draws import Redraws

THRESHOLDS = np.round(np.arange(0.05, 0.96, 0.05), 2)
"""The decision thresholds tried on the held-out pairs."""


def vocabulary(texts: list[str], size: int) -> list[str]:
    """The `size` most frequent content words of `texts`, the more frequent first (equal counts
    in alphabetical order)."""
    counts = Counter(word for text in texts for word in content_tokens(text, "13a"))
    return [word for word, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
            ][:size]


def targets(texts: list[str], words: list[str]) -> np.ndarray:
    """(len(texts), len(words)) float32: 1 where the text holds the word."""
    index = {word: i for i, word in enumerate(words)}
    found = np.zeros((len(texts), len(words)), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in content_tokens(text, "13a"):
            if word in index:
                found[row, index[word]] = 1.0
    return found


def mean_f1(texts: list[str], predicted: list[list[str]]) -> float:
    """The mean over sentences of the content-word F1 of the predicted words (`token_prf`)."""
    return float(np.mean([token_prf(text, " ".join(words), content=True, tokenize="13a")[2]
                          for text, words in zip(texts, predicted, strict=True)]))


class BagOfWords:
    """A linear layer from the standardised vector to one logit per content word, trained with
    binary cross-entropy (Adam, full batches) on the leaked pairs but a held-out share, which
    chooses the threshold a word's probability must reach. Each epoch (one full batch) reads a
    fresh draw of the training pairs' vectors through the store (`Redraws`: epoch 0 the stored
    vectors, epoch e the e-th query; `epochs` - 1 queries of the training texts under a
    randomised defence, at most two under a deterministic one); the standardisation's mean and
    spread are the stored training vectors'."""

    threat = ThreatModel(leaked=None, queries=True)

    def __init__(self, words: int, epochs: int, held_out: float, *, seed: int = 1,
                 device: str = "cpu") -> None:
        self.size, self.epochs, self.held_out = words, epochs, held_out
        self.seed, self.device = seed, device
        self.words: list[str] = []
        self.threshold = 0.5
        self._state: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def fit(self, inputs: AttackInputs) -> None:
        import torch

        texts, vectors = list(inputs.texts), np.asarray(inputs.vectors, dtype=np.float32)
        order = np.random.default_rng(inputs.seed).permutation(len(texts))
        cut = max(1, int(round(self.held_out * len(texts))))
        held, train = order[:cut], order[cut:]
        self.words = vocabulary([texts[i] for i in train], self.size)
        if not self.words or len(train) == 0:
            return
        stored = vectors[train]
        mean, std = stored.mean(axis=0), stored.std(axis=0) + 1e-6
        train_texts = [texts[i] for i in train]
        y = torch.from_numpy(targets(train_texts, self.words))
        draws = Redraws(stored, train_texts, inputs.query)
        generator = torch.Generator().manual_seed(inputs.seed)
        layer = torch.nn.Linear(stored.shape[1], len(self.words))
        with torch.no_grad():
            layer.weight.normal_(0.0, 0.01, generator=generator)
            layer.bias.copy_(torch.logit(y.mean(dim=0).clamp(1e-4, 1 - 1e-4)))
        optimiser = torch.optim.Adam(layer.parameters(), lr=1e-2)
        loss = torch.nn.BCEWithLogitsLoss()
        drawn: np.ndarray | None = None
        x = torch.zeros(0)
        for _ in range(self.epochs):
            found = draws.next()
            if found is not drawn:  # a fresh draw (the same array once the store is settled)
                drawn, x = found, torch.from_numpy((found - mean) / std)
            optimiser.zero_grad()
            loss(layer(x), y).backward()
            optimiser.step()
        self._state = (mean, std, layer.weight.detach().numpy().T.copy(),
                       layer.bias.detach().numpy().copy())
        probabilities = self._probabilities(vectors[held])
        held_texts = [texts[i] for i in held]
        scores = [mean_f1(held_texts, self._words(probabilities, t)) for t in THRESHOLDS]
        self.threshold = float(THRESHOLDS[int(np.argmax(scores))])

    def _probabilities(self, vectors: np.ndarray) -> np.ndarray:
        assert self._state is not None
        mean, std, weight, bias = self._state
        logits = ((np.asarray(vectors, dtype=np.float32) - mean) / std) @ weight + bias
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -50.0, 50.0)))

    def _words(self, probabilities: np.ndarray, threshold: float) -> list[list[str]]:
        found = []
        for row in probabilities:
            chosen = np.flatnonzero(row >= threshold)
            found.append([self.words[i] for i in chosen[np.argsort(-row[chosen], kind="stable")]])
        return found

    def invert(self, vectors: np.ndarray) -> Inversion:
        if self._state is None:
            return Inversion(words=[[] for _ in range(len(vectors))])
        probabilities = self._probabilities(vectors)
        words = self._words(probabilities, self.threshold)
        return Inversion(words=words, scores=[float(row.max()) if len(row) else 0.0
                                              for row in probabilities])
