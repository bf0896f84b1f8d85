"""A hashed bag of words weighted by inverse document frequency (tf-idf), fitted on the run's text.

A sentence's vector holds, in each of `dim` hash buckets, the count of its tokens in the bucket
(tf) times the bucket's inverse document frequency (Spärck Jones 1972), l2-normalised. Each
non-blank sentence of the fit text is a document: the harness encodes sentences, so a word is
rare when few sentences hold it. Blank lines, which separate documents in ordered fit text, are
skipped; they are no documents of their own.

The idf is the smoothed one of scikit-learn's `TfidfTransformer` (`smooth_idf=True`):

    idf(b) = ln((1 + N) / (1 + df(b))) + 1

with N documents of which df(b) hold a token of bucket b. The ones added inside act as a document
holding every token, so a bucket the fit text never saw gets a finite weight (the largest); the
one added outside keeps a bucket found in every document from weighing nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from . import __version__
from .bow import bucket

VERSION = "1"
STATE_FORMAT = "v2s-example-idf/1"
STATE_FILE = "idf.json"
FREQUENCY_FILE = "document_frequency.npy"


def read_stopwords(path: Path | None) -> frozenset[str]:
    """Return the lowercase words of a file with one word per line (blank lines ignored)."""
    if path is None:
        return frozenset()
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return frozenset(word for line in lines if (word := line.strip().lower()))


def tokens(sentence: str, stopwords: frozenset[str]) -> list[str]:
    """Return the sentence's lowercase whitespace tokens that are not stopwords."""
    return [token for token in sentence.lower().split() if token not in stopwords]


def document_frequency(sentences: Iterable[str], dim: int, stopwords: frozenset[str]
                       ) -> tuple[np.ndarray, int]:
    """Return (df, N): per bucket, how many of the N non-blank sentences hold a token of it."""
    df = np.zeros(dim, dtype=np.int64)
    documents = 0
    for sentence in sentences:
        if not sentence.strip():
            continue
        documents += 1
        # a bucket counts once per document, however often its tokens repeat there
        df[list({bucket(token, dim) for token in tokens(sentence, stopwords)})] += 1
    return df, documents


def inverse_document_frequency(df: np.ndarray, documents: int) -> np.ndarray:
    """Return the smoothed idf, ln((1 + N) / (1 + df)) + 1, of every bucket (float64)."""
    return np.log((1.0 + documents) / (1.0 + df.astype(np.float64))) + 1.0


def _digest(*parts: bytes) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(len(part).to_bytes(8, "little"))  # so no two part lists hash alike
        hasher.update(part)
    return hasher.hexdigest()[:16]


class HashedTfIdfEncoder:
    """Sentence vector = l2-normalised tf-idf of its lowercase, non-stopword tokens in `dim`
    hash buckets (see the module docstring).

    Implements `harness.protocols.TrainableEncoder`: `fit` counts document frequencies, `save`
    writes them as `.npy` plus JSON (no pickles). A sentence without tokens (empty, or stopwords
    only) maps to the zero vector; one whose words the fit text never saw gets a unit vector
    like any other.
    """

    def __init__(self, dim: int = 64, stopwords: Path | None = None) -> None:
        if dim < 1:
            raise ValueError(f"dim must be positive, got {dim}")
        self._dim = int(dim)
        self.stopwords = read_stopwords(stopwords)
        self._stopwords_digest = _digest(*(word.encode("utf-8") for word in sorted(self.stopwords)))
        # The fit stage keys its cached state on the options, which hold the stopwords' path,
        # not their words: an edited file must refit rather than reuse counts made without it.
        self.fit_version = f"{VERSION}/stopwords={self._stopwords_digest}"
        self.df: np.ndarray | None = None
        self.documents = 0
        self.idf: np.ndarray | None = None

    @property
    def dim(self) -> int:
        """The number of hash buckets (known before fitting)."""
        return self._dim

    def fingerprint(self) -> str:
        """Encoder, plugin version, options (dim, stopword list) and the fitted counts' digest."""
        state = "unfitted" if self.df is None else _digest(
            self.df.astype("<i8").tobytes(), self.documents.to_bytes(8, "little"))
        return (f"example-idf/{__version__}/{VERSION}/blake2b/dim={self._dim}/"
                f"stopwords={self._stopwords_digest}/state={state}")

    def _set_state(self, df: np.ndarray, documents: int) -> None:
        self.df = df
        self.documents = int(documents)
        self.idf = inverse_document_frequency(df, self.documents)

    def fit(self, sentences: Sequence[str]) -> None:
        """Count each bucket's document frequency over the non-blank sentences of the fit text."""
        self._set_state(*document_frequency(sentences, self._dim, self.stopwords))

    def save(self, directory: Path) -> None:
        """Write the document frequencies (.npy) and the document count (JSON) to `directory`."""
        if self.df is None:
            raise RuntimeError("example-idf: nothing to save; call fit() first")
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / FREQUENCY_FILE, self.df, allow_pickle=False)
        state = {"format": STATE_FORMAT, "dim": self._dim, "documents": self.documents,
                 "stopwords": self._stopwords_digest}
        (directory / STATE_FILE).write_text(json.dumps(state, indent=1), encoding="utf-8")

    def load(self, directory: Path) -> None:
        """Restore the state `save` wrote; refuse one fitted with other options."""
        directory = Path(directory)
        state = json.loads((directory / STATE_FILE).read_text(encoding="utf-8"))
        if state.get("format") != STATE_FORMAT:
            raise ValueError(f"example-idf: {directory / STATE_FILE} is not a {STATE_FORMAT} "
                             "state; fit the encoder again")
        for key, mine in (("dim", self._dim), ("stopwords", self._stopwords_digest)):
            if state[key] != mine:
                raise ValueError(f"example-idf: the state in {directory} was fitted with "
                                 f"{key}={state[key]!r}, this encoder has {mine!r}; fit again")
        df = np.load(directory / FREQUENCY_FILE, allow_pickle=False)
        if df.shape != (self._dim,):
            raise ValueError(f"example-idf: {directory / FREQUENCY_FILE} has shape {df.shape}, "
                             f"expected ({self._dim},)")
        self._set_state(df.astype(np.int64), state["documents"])

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return an (n, dim) float32 array; each sentence is encoded on its own."""
        if self.idf is None:
            raise RuntimeError("example-idf: call fit() or load() before encode()")
        counts = np.zeros((len(sentences), self._dim), dtype=np.float64)
        for row, sentence in enumerate(sentences):
            for token in tokens(sentence, self.stopwords):
                counts[row, bucket(token, self._dim)] += 1.0
        weighted = counts * self.idf
        norms = np.linalg.norm(weighted, axis=1, keepdims=True)
        # Divide only non-zero rows: a sentence without tokens stays a zero vector, not NaN.
        np.divide(weighted, norms, out=weighted, where=norms > 0)
        return weighted.astype(np.float32)
