"""Subword vocabulary: a sentencepiece BPE model plus one vector per piece (BPEmb-like).

The same assets serve the pooling encoders (sentence = subword vectors) and the decoders (their
vocabulary and frozen input/output embeddings), as in the Vec2Sent code, which uses BPEmb
(Heinzerling & Strube 2018) for both. A vocabulary is either trained on the run's corpus
(`train_subword_vocab`: BPE, then fastText skip-gram on the segmented corpus) or imported from
existing files (`import_subword_vocab`: e.g. BPEmb's `en.wiki.bpe.vs10000.model` with
`en.wiki.bpe.vs10000.d100.w2v.txt`).
"""

from __future__ import annotations

import itertools
import shutil
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import DataError
from harness.text.lines import LineFile
from harness.text.skipgram import train_skipgram, write_corpus

MODEL_FILE = "bpe.model"
VECTORS_FILE = "vectors.npy"

PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
"""Special ids of a vocabulary trained by `train_subword_vocab`; imported models keep theirs."""


def _processor(model_path: Path) -> Any:
    import sentencepiece as spm

    try:
        return spm.SentencePieceProcessor(model_file=str(model_path))
    except (OSError, RuntimeError) as exc:
        raise DataError(f"{model_path}: not a readable sentencepiece model ({exc}); give a BPE "
                        "`.model` file such as BPEmb's en.wiki.bpe.vs10000.model") from None


def _missing_specials(processor: Any) -> list[str]:
    """Special tokens the model lacks (BPEmb models have no pad), in the order they get ids."""
    lookup = {"pad": processor.pad_id, "bos": processor.bos_id, "eos": processor.eos_id}
    return [name for name, get in lookup.items() if get() < 0]


class SubwordVocab:
    """A BPE segmenter and one vector per id; ids follow the sentencepiece model.

    Special tokens the model lacks (a BPEmb model has no pad piece) get ids after the model's
    pieces, with zero vectors, so decoders always have pad/bos/eos.
    """

    def __init__(self, model_path: Path, vectors: np.ndarray) -> None:
        self.model_path = Path(model_path)
        self.processor = _processor(self.model_path)
        pieces = self.processor.get_piece_size()
        extra = _missing_specials(self.processor)
        if vectors.ndim != 2 or vectors.shape[0] != pieces + len(extra):
            raise DataError(f"{model_path}: {vectors.shape[0]} vectors for {pieces} pieces"
                            + (f" + {len(extra)} added special ids" if extra else ""))
        self.pieces_in_model = pieces
        ids = {name: pieces + extra.index(name) for name in extra}
        self.pad_id = ids.get("pad", self.processor.pad_id())
        self.unk_id = self.processor.unk_id()
        self.bos_id = ids.get("bos", self.processor.bos_id())
        self.eos_id = ids.get("eos", self.processor.eos_id())
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)

    @classmethod
    def load(cls, directory: Path) -> SubwordVocab:
        """Return the vocabulary saved in `directory` by `train_subword_vocab` or
        `import_subword_vocab`."""
        directory = Path(directory)
        return cls(directory / MODEL_FILE, np.load(directory / VECTORS_FILE, allow_pickle=False))

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
        return self.processor.decode([i for i in ids
                                      if i not in specials and 0 <= i < self.pieces_in_model])


# --------------------------------------------------------------------------------- training


SAMPLE_SENTENCES = 1_000_000
"""BPE learns its merges from at most about this many sentences: a larger corpus is sampled."""
SAMPLE_SEED = 0
ENCODE_CHUNK = 65_536
"""Sentences segmented (and held as Python lists of pieces) at a time for fastText."""


def train_subword_vocab(sentences: Path | Iterable[str], directory: Path, *, bpe_size: int,
                        dim: int, epochs: int = 5, threads: int = 1,
                        sample: int = SAMPLE_SENTENCES) -> SubwordVocab:
    """Train BPE on `sentences`, then skip-gram fastText vectors on the segmented corpus.

    `sentences` is a file of one sentence per line (a `Path`, or a whole `LineFile`: read from
    disk, never held) or an iterable of sentences without newlines (written to a file first).
    sentencepiece reads the file itself; a corpus of more than `sample` sentences is sampled
    first (each line kept with probability sample/lines, seeded: sentencepiece's own
    `input_sentence_size` sample is not reproducible from run to run). The segmented corpus is
    written for fastText `ENCODE_CHUNK` sentences at a time. Pieces rare enough to get no
    fastText word vector still get one from their character n-grams. fastText runs in a fresh
    process with one thread, which keeps the vectors reproducible (harness.text.skipgram).
    """
    import sentencepiece as spm

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    model_path = directory / MODEL_FILE
    work = directory / "work"  # scratch files, removed when done (and by a rerun after a kill)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        corpus = _corpus_file(sentences, work)
        spm.SentencePieceTrainer.train(
            input=str(_bpe_input(corpus, work, sample)), model_prefix=str(directory / "bpe"),
            model_type="bpe", vocab_size=bpe_size, hard_vocab_limit=False,
            character_coverage=1.0, pad_id=PAD_ID, unk_id=UNK_ID, bos_id=BOS_ID, eos_id=EOS_ID,
            # No NFKC: decoding must be able to give back the input's characters ("…" stays
            # "…"), or even a perfect decoder would score below 100 on Id against such
            # sentences.
            normalization_rule_name="identity", num_threads=threads, minloglevel=2)
        processor = spm.SentencePieceProcessor(model_file=str(model_path))
        segmented = work / "segmented.txt"
        if write_corpus(_segmented(processor, corpus), segmented) == 0:
            raise DataError("fastText: the corpus has no words")
        pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
        _, _, vectors = train_skipgram(segmented, dim=dim, epochs=epochs, min_count=1, minn=2,
                                       maxn=5, bucket=100_000, threads=threads, words=pieces)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # Padding and unknown pieces carry no meaning: zero vectors, so an unseen character adds
    # nothing to a pooled sentence vector (fastText would compose one from "<unk>"'s n-grams).
    vectors[PAD_ID] = 0.0
    vectors[UNK_ID] = 0.0
    np.save(directory / VECTORS_FILE, vectors)
    (directory / "bpe.vocab").unlink(missing_ok=True)
    return SubwordVocab(model_path, vectors)


def _corpus_file(sentences: Path | Iterable[str], work: Path) -> LineFile:
    """The sentences as lines of a file: the given file itself, or `work`/sentences.txt."""
    if isinstance(sentences, LineFile) and sentences.whole:
        return sentences
    if isinstance(sentences, (str, Path)):
        return LineFile(sentences)
    path = work / "sentences.txt"
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for number, sentence in enumerate(sentences, 1):
            if "\n" in sentence:
                raise DataError(f"sentence {number} holds a newline; give one sentence a line")
            handle.write(sentence + "\n")
    return LineFile(path)


def bpe_sample(sentences: int, sample: int = SAMPLE_SENTENCES) -> dict[str, int] | None:
    """How BPE samples a corpus of `sentences` lines (`{"sentences", "seed"}`), or None when it
    learns from every line (up to `sample` lines)."""
    return {"sentences": sample, "seed": SAMPLE_SEED} if sentences > sample else None


def _bpe_input(corpus: LineFile, work: Path, sample: int) -> Path:
    """The file BPE learns from: the corpus, or a seeded sample of about `sample` of its lines
    (in file order) when it has more (`bpe_sample`)."""
    if bpe_sample(len(corpus), sample) is None:
        return corpus.path
    keep = sample / len(corpus)
    rng = np.random.default_rng(SAMPLE_SEED)
    path = work / "sample.txt"
    with open(corpus.path, "rb") as source, path.open("wb") as target:
        while lines := list(itertools.islice(source, ENCODE_CHUNK)):
            chosen = np.flatnonzero(rng.random(len(lines)) < keep)
            target.writelines(lines[i] if lines[i].endswith(b"\n") else lines[i] + b"\n"
                              for i in chosen)
    return path


def _segmented(processor: Any, corpus: Iterable[str]) -> Iterator[str]:
    """Yield each sentence's pieces joined by spaces, segmenting `ENCODE_CHUNK` at a time."""
    iterator = iter(corpus)
    while chunk := list(itertools.islice(iterator, ENCODE_CHUNK)):
        yield from (" ".join(pieces) for pieces in processor.encode(chunk, out_type=str))


# --------------------------------------------------------------------------------- importing


@dataclass(frozen=True)
class PieceVectors:
    """Vectors read from a file for a model's pieces: one row per piece, zeros where absent."""

    vectors: np.ndarray
    missing: int
    """Pieces the file has no vector for (zeros; composed from character n-grams for `.bin`)."""
    format: str


def read_piece_vectors(path: Path, pieces: Sequence[str]) -> PieceVectors:
    """Return one vector per piece, in the order of `pieces`, from a vectors file.

    Formats, by suffix: `.npy` (rows aligned with the pieces), `.bin` (a fastText model; pieces
    outside its word list get fastText's vector composed from character n-grams), anything else
    word2vec/fastText/GloVe text (`token v1 ... vd` per line, with or without a `count dim`
    header). Text-file tokens that are not pieces are ignored; pieces without a line get zeros.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: vectors file not found; give vocab.vectors an existing file")
    suffix = path.suffix.lower()
    if suffix == ".npy":
        result = _read_npy(path, len(pieces))
    elif suffix == ".bin":
        result = _read_fasttext_bin(path, pieces)
    else:
        result = _read_text_vectors(path, pieces)
    if not np.isfinite(result.vectors).all():
        row = int(np.flatnonzero(~np.isfinite(result.vectors).all(axis=1))[0])
        raise DataError(f"{path}: the vector of piece {pieces[row]!r} is not finite (NaN or inf); "
                        "fix or regenerate the vectors file")
    return result


def _read_npy(path: Path, count: int) -> PieceVectors:
    try:
        array = np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise DataError(f"{path}: not a plain numpy array ({exc}); save it with np.save") from None
    if array.ndim != 2 or array.shape[0] != count or not np.issubdtype(array.dtype, np.number):
        raise DataError(f"{path}: expected a ({count}, dim) array, one row per piece id of the "
                        f"model; found shape {array.shape}, dtype {array.dtype}")
    return PieceVectors(array.astype(np.float32), 0, "npy")


def _read_fasttext_bin(path: Path, pieces: Sequence[str]) -> PieceVectors:
    import fasttext

    try:
        model = fasttext.load_model(str(path))
    except ValueError as exc:
        raise DataError(f"{path}: not a fastText .bin model ({exc})") from None
    known = set(model.get_words())
    vectors = np.stack([model.get_word_vector(piece) for piece in pieces]).astype(np.float32)
    missing = sum(piece not in known for piece in pieces)
    return PieceVectors(vectors, missing, "fasttext-bin")


def _header(line: str) -> int | None:
    """The dimension in a word2vec `count dim` header line, or None for a vector line."""
    parts = line.split()
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        return int(parts[1])
    return None


def _read_text_vectors(path: Path, pieces: Sequence[str]) -> PieceVectors:
    index = {piece: row for row, piece in enumerate(pieces)}
    vectors: np.ndarray | None = None
    found = np.zeros(len(pieces), dtype=bool)
    dim: int | None = None
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise DataError(f"{path}:{number}: not UTF-8 text; give a word2vec/fastText "
                                "text vectors file, a fastText .bin or a .npy") from None
            line = line.rstrip()
            if not line:
                continue
            if number == 1 and (dim := _header(line)) is not None:
                continue
            if dim is None:
                dim = len(line.split(" ")) - 1
            parts = line.rsplit(" ", dim)
            if len(parts) != dim + 1 or not parts[0]:
                raise DataError(f"{path}:{number}: expected a token and {dim} numbers, found "
                                f"{len(parts) - 1} fields; give a word2vec/fastText text file")
            row = index.get(parts[0])
            if row is None or found[row]:
                continue  # a token the model cannot produce, or a repeated one: first line wins
            if vectors is None:
                vectors = np.zeros((len(pieces), dim), dtype=np.float32)
            try:
                vectors[row] = np.asarray(parts[1:], dtype=np.float32)
            except ValueError:
                raise DataError(f"{path}:{number}: the vector of {parts[0]!r} has a field that "
                                "is not a number") from None
            found[row] = True
    if dim is None or dim <= 0:
        raise DataError(f"{path}: no vectors found; give a word2vec/fastText text file")
    if vectors is None:
        raise DataError(f"{path}: none of the model's {len(pieces)} pieces has a vector here; "
                        "are the vectors from the same BPE model (e.g. both BPEmb vs10000)?")
    return PieceVectors(vectors, int((~found).sum()), "text")


def import_subword_vocab(model: Path, vectors: Path, directory: Path
                         ) -> tuple[SubwordVocab, PieceVectors]:
    """Return the vocabulary of an existing sentencepiece model and vectors file, saved into
    `directory` in the layout `SubwordVocab.load` reads, and what was read from the file.

    Special ids the model lacks get zero vectors after its pieces (see `SubwordVocab`).
    """
    model, directory = Path(model), Path(directory)
    if not model.is_file():
        raise DataError(f"{model}: sentencepiece model not found; give vocab.model an existing "
                        "file")
    processor = _processor(model)
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    read = read_piece_vectors(vectors, pieces)
    extra = np.zeros((len(_missing_specials(processor)), read.vectors.shape[1]), np.float32)
    table = np.concatenate([read.vectors, extra])
    if processor.pad_id() >= 0:
        table[processor.pad_id()] = 0.0  # padding carries no meaning, as in a trained vocabulary
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(model, directory / MODEL_FILE)
    np.save(directory / VECTORS_FILE, table)
    return SubwordVocab(directory / MODEL_FILE, table), read
