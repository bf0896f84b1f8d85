"""Frozen fastText word vectors trained on the fit corpus (multi-view section 3; Tang & de Sa
appendix A): skip-gram vectors, fixed during learning, and words absent from the vocabulary are
the zero vector.

Stored as `word_vectors.npy` plus `words.json` (words and counts): no pickles.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from harness.plugin import DataError, train_skipgram

VECTORS_FILE = "word_vectors.npy"
WORDS_FILE = "words.json"

ABSENT = 0
"""Id of every word outside the vocabulary; its vector is all zeros."""

_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokenize(sentence: str, lowercase: bool = True) -> list[str]:
    """Return the words of `sentence`: runs of word characters, and each punctuation mark alone.

    "Anna's cat." -> ["anna", "'", "s", "cat", "."], the tokenisation of the STS files.
    """
    return _TOKEN.findall(sentence.lower() if lowercase else sentence)


class WordVectors:
    """A word vocabulary (id 0 = absent words) with one frozen vector and one corpus count each."""

    def __init__(self, words: Sequence[str], counts: np.ndarray, vectors: np.ndarray, *,
                 lowercase: bool) -> None:
        if len(words) != len(counts) or len(words) != vectors.shape[0]:
            raise DataError(f"word vectors: {len(words)} words, {len(counts)} counts and "
                            f"{vectors.shape[0]} vectors; retrain the encoder")
        if words[ABSENT] != "" or np.any(vectors[ABSENT] != 0):
            raise DataError("word vectors: entry 0 must be the empty word with a zero vector")
        self.words = list(words)
        self.counts = np.asarray(counts, dtype=np.int64)
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.lowercase = lowercase
        self.index = {word: i for i, word in enumerate(self.words) if i != ABSENT}

    def __len__(self) -> int:
        return len(self.words)

    @property
    def dim(self) -> int:
        """Dimension of the word vectors."""
        return int(self.vectors.shape[1])

    def ids(self, sentence: str) -> list[int]:
        """Return the word ids of `sentence`, ABSENT (0) for words outside the vocabulary."""
        get = self.index.get
        return [get(word, ABSENT) for word in tokenize(sentence, self.lowercase)]

    def noise_distribution(self, power: float = 0.75) -> np.ndarray:
        """Return P_e(w), the unigram distribution raised to `power` and renormalised.

        Multi-view eq. 1 (after Mikolov et al. 2013): negative samples are drawn from it. The
        absent-word id gets probability 0.
        """
        weights = self.counts.astype(np.float64) ** power
        weights[ABSENT] = 0.0
        total = weights.sum()
        if total <= 0:
            raise DataError("word vectors: the vocabulary has no counted word to sample from")
        return weights / total

    def save(self, directory: Path) -> None:
        """Write `word_vectors.npy` and `words.json` into `directory`."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / VECTORS_FILE, self.vectors)
        (directory / WORDS_FILE).write_text(json.dumps(
            {"lowercase": self.lowercase, "words": self.words, "counts": self.counts.tolist()},
            ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> WordVectors:
        """Return the word vectors saved in `directory` by `save`."""
        directory = Path(directory)
        for name in (VECTORS_FILE, WORDS_FILE):
            if not (directory / name).exists():
                raise DataError(f"{directory / name}: missing; fit the encoder again")
        meta = json.loads((directory / WORDS_FILE).read_text(encoding="utf-8"))
        return cls(meta["words"], np.asarray(meta["counts"]),
                   np.load(directory / VECTORS_FILE, allow_pickle=False),
                   lowercase=bool(meta["lowercase"]))


def train_word_vectors(sentences: Iterable[str], *, dim: int, epochs: int, min_count: int,
                       lowercase: bool = True, threads: int = 1) -> WordVectors:
    """Return skip-gram fastText vectors (Bojanowski et al. 2017) of the words of `sentences`.

    The vocabulary is every word seen at least `min_count` times; each gets fastText's vector
    (its own plus its character n-grams'); row 0 is the zero vector of unknown words. Training
    runs in a fresh process, reproducibly (harness.text.skipgram).
    """
    tokens = (" ".join(tokenize(sentence, lowercase)) for sentence in sentences)
    try:
        words, counts, vectors = train_skipgram(tokens, dim=dim, epochs=epochs,
                                                min_count=min_count, minn=3, maxn=6,
                                                bucket=200_000, threads=threads)
    except DataError as exc:
        raise DataError(f"word vectors: {exc}") from None
    return WordVectors([""] + words, np.concatenate([[0], counts]),
                       np.concatenate([np.zeros((1, dim), dtype=np.float32), vectors]),
                       lowercase=lowercase)
