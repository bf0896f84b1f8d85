"""Subword vocabulary: a sentencepiece BPE model plus fastText vectors for its pieces (BPEmb-like).

The same assets serve the pooling encoders (sentence = subword vectors) and the decoders (their
vocabulary and frozen input/output embeddings), as in the Vec2Sent code, which uses BPEmb
(Heinzerling & Strube 2018) for both.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

MODEL_FILE = "bpe.model"
VECTORS_FILE = "vectors.npy"

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3


class SubwordVocab:
    """A BPE segmenter and one vector per piece; ids follow the sentencepiece model."""

    pad_id, unk_id, bos_id, eos_id = PAD_ID, UNK_ID, BOS_ID, EOS_ID

    def __init__(self, model_path: Path, vectors: np.ndarray) -> None:
        import sentencepiece as spm

        self.model_path = Path(model_path)
        self.processor = spm.SentencePieceProcessor(model_file=str(model_path))
        if vectors.shape[0] != self.processor.get_piece_size():
            raise ValueError(f"{model_path}: {vectors.shape[0]} vectors for "
                             f"{self.processor.get_piece_size()} pieces")
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)

    @classmethod
    def load(cls, directory: Path) -> SubwordVocab:
        """Return the vocabulary saved in `directory` by `train_subword_vocab`."""
        directory = Path(directory)
        return cls(directory / MODEL_FILE, np.load(directory / VECTORS_FILE))

    def __len__(self) -> int:
        return self.vectors.shape[0]

    @property
    def dim(self) -> int:
        """Dimension of the subword vectors."""
        return self.vectors.shape[1]

    def encode(self, sentences: Sequence[str]) -> list[list[int]]:
        """Return the piece ids of each sentence (no bos/eos)."""
        return self.processor.encode(list(sentences), out_type=int)

    def pieces(self, sentence: str) -> list[str]:
        """Return the pieces of one sentence, e.g. ['▁the', '▁teach', 'er']."""
        return self.processor.encode(sentence, out_type=str)

    def decode(self, ids: Iterable[int]) -> str:
        """Return the text of piece ids, ignoring special ids."""
        specials = {self.pad_id, self.bos_id, self.eos_id}
        return self.processor.decode([i for i in ids if i not in specials])


def train_subword_vocab(sentences: Sequence[str], directory: Path, *, bpe_size: int, dim: int,
                        epochs: int = 5, threads: int = 1) -> SubwordVocab:
    """Train BPE on `sentences`, then skip-gram fastText vectors on the segmented corpus.

    Pieces rare enough to get no fastText word vector still get one from their character n-grams.
    fastText seeds its own generator with a fixed seed; one thread keeps the vectors reproducible.
    """
    import sentencepiece as spm

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    model_path = directory / MODEL_FILE
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_prefix=str(directory / "bpe"),
        model_type="bpe", vocab_size=bpe_size, hard_vocab_limit=False,
        character_coverage=1.0, pad_id=PAD_ID, unk_id=UNK_ID, bos_id=BOS_ID, eos_id=EOS_ID,
        num_threads=threads, minloglevel=2)
    processor = spm.SentencePieceProcessor(model_file=str(model_path))
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, dir=directory,
                                     encoding="utf-8") as handle:
        for pieces in processor.encode(list(sentences), out_type=str):
            handle.write(" ".join(pieces) + "\n")
        segmented = handle.name
    try:
        model = _train_fasttext(segmented, dim=dim, epochs=epochs, threads=threads)
    finally:
        os.unlink(segmented)
    vectors = np.stack([model.get_word_vector(processor.id_to_piece(i))
                        for i in range(processor.get_piece_size())]).astype(np.float32)
    vectors[PAD_ID] = 0.0
    np.save(directory / VECTORS_FILE, vectors)
    (directory / "bpe.vocab").unlink(missing_ok=True)
    return SubwordVocab(model_path, vectors)


def _train_fasttext(path: str, *, dim: int, epochs: int, threads: int) -> Any:
    """Return skip-gram fastText vectors of the segmented corpus at `path`.

    On very small corpora fastText's linearly decaying learning rate occasionally diverges
    ("Encountered NaN"); each retry halves the starting rate (fastText's default is 0.05).
    """
    import fasttext

    lr = 0.05
    for attempt in range(4):
        try:
            return fasttext.train_unsupervised(
                path, model="skipgram", dim=dim, epoch=epochs, lr=lr, minCount=1,
                thread=threads, bucket=100_000, minn=2, maxn=5, verbose=0)
        except RuntimeError as exc:
            if "NaN" not in str(exc) or attempt == 3:
                raise
            lr /= 2
    raise AssertionError("unreachable")
