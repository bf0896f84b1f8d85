"""Frozen fastText word vectors trained on the fit corpus (multi-view section 3; Tang & de Sa
appendix A): skip-gram vectors, fixed during learning, and words absent from the vocabulary are
the zero vector.

Stored as `word_vectors.npy` plus `words.json` (words and counts): no pickles.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import DataError

VECTORS_FILE = "word_vectors.npy"
WORDS_FILE = "words.json"

ABSENT = 0
"""Id of every word outside the vocabulary; its vector is all zeros."""

_TOKEN = re.compile(r"\w+|[^\w\s]")
# fastText adds this end-of-line token to its vocabulary; it is not a word of the corpus.
_FASTTEXT_EOS = "</s>"
# Skip-gram weights this large mean the run diverged (they are O(1) when it does not).
_DIVERGED = 1e3


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
    (its own plus its character n-grams'). fastText runs in a fresh Python process: within one
    process, its results depend on the models trained before (measured with fasttext 0.9.3: the
    same call drifts after a few repetitions and can silently diverge), while a fresh process
    with one thread gives the same vectors every time.
    """
    with tempfile.TemporaryDirectory() as directory:
        text = Path(directory) / "corpus.txt"
        with text.open("w", encoding="utf-8") as handle:
            lines = 0
            for sentence in sentences:
                words = tokenize(sentence, lowercase)
                if words:
                    handle.write(" ".join(words) + "\n")
                    lines += 1
        if lines == 0:
            raise DataError("word vectors: the fit corpus has no words")
        out = Path(directory) / "vectors"
        command = [sys.executable, "-c", _CHILD, __file__, str(text), str(out), str(dim),
                   str(epochs), str(min_count), str(threads)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise DataError(f"word vectors: fastText training failed: {last}")
        words = WordVectors.load(out)
    return WordVectors(words.words, words.counts, words.vectors, lowercase=lowercase)


def _train_skipgram(path: str, *, dim: int, epochs: int, min_count: int, threads: int) -> Any:
    """Return a fastText skip-gram model of the text file at `path`.

    fastText's linearly decaying rate can diverge on tiny corpora, with "Encountered NaN" or
    with huge vectors; each retry halves the starting rate (fastText's default, 0.05).
    """
    import fasttext

    lr = 0.05
    for attempt in range(4):
        try:
            model = fasttext.train_unsupervised(
                path, model="skipgram", dim=dim, epoch=epochs, lr=lr, minCount=min_count,
                thread=threads, bucket=200_000, minn=3, maxn=6, verbose=0)
        except RuntimeError as exc:
            if "NaN" not in str(exc) or attempt == 3:
                raise
        else:
            if np.all(np.abs(model.get_input_matrix()) < _DIVERGED) or attempt == 3:
                return model
        lr /= 2
    raise AssertionError("unreachable")


def _train_and_save(text: str, out: str, dim: int, epochs: int, min_count: int,
                    threads: int) -> None:
    """Train on the tokenised text file `text` and save the vectors into `out` (child process)."""
    model = _train_skipgram(text, dim=dim, epochs=epochs, min_count=min_count, threads=threads)
    words, counts = model.get_words(include_freq=True)
    keep = [i for i, word in enumerate(words) if word != _FASTTEXT_EOS]
    vocabulary = [""] + [words[i] for i in keep]
    vectors = np.zeros((len(vocabulary), dim), dtype=np.float32)
    for row, i in enumerate(keep, start=1):
        vectors[row] = model.get_word_vector(words[i])
    frequencies = np.concatenate([[0], np.asarray(counts, dtype=np.int64)[keep]])
    WordVectors(vocabulary, frequencies, vectors, lowercase=False).save(Path(out))


def _child_main(arguments: Sequence[str]) -> None:
    """Entry point of the child process: TEXT OUT DIM EPOCHS MIN_COUNT THREADS."""
    text, out, *numbers = arguments
    dim, epochs, min_count, threads = (int(n) for n in numbers)
    _train_and_save(text, out, dim, epochs, min_count, threads)


# The child loads this file by path, not through its package, whose imports (the plugin
# registration, pydantic) would double its start-up time.
_CHILD = ("import importlib.util, sys; "
          "spec = importlib.util.spec_from_file_location('_multiview_word_vectors', sys.argv[1]); "
          "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
          "module._child_main(sys.argv[2:])")
