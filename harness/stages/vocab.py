"""Stage 2: the subword vocabulary: BPE + fastText vectors trained on the training split, or
existing files (a BPEmb-like sentencepiece model with its piece vectors) imported.

Training reads the split's file (`corpus.train` is a `LineFile`), never a list of it: BPE learns
from the file (a seeded sample above `SAMPLE_SENTENCES` lines), and fastText from a segmented
copy written a chunk at a time."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.results.model import VocabSummary
from harness.spec import VocabSection
from harness.stages.base import RunContext, file_digest, log
from harness.stages.corpus import Corpus
from harness.text.subwords import (
    SAMPLE_SENTENCES,
    SubwordVocab,
    bpe_sample,
    import_subword_vocab,
    train_subword_vocab,
)
from harness.util.cache import read_meta

VERSION = 2


@dataclass(frozen=True)
class Vocab:
    """The run's vocabulary artifact; `summary` is what its build recorded (pieces, dim, and for
    imported files the count of pieces that had no vector)."""

    key: str
    vocab: SubwordVocab
    summary: VocabSummary = field(default_factory=VocabSummary)


def _trained(section: VocabSection, corpus: Corpus
             ) -> tuple[dict[str, Any], Callable[[Path], dict[str, Any]]]:
    # The key parts are those of the stage before files could be imported, so caches stay valid.
    parts: dict[str, Any] = {"version": VERSION, "corpus": corpus.train_key,
                             "bpe_size": section.bpe_size, "dim": section.dim,
                             "epochs": section.epochs}
    sample = bpe_sample(len(corpus.train), SAMPLE_SENTENCES)
    if sample is not None:
        # BPE learns from a sample of a larger corpus (train_subword_vocab); up to the bound it
        # learns from every sentence, as before the bound, and such caches stay valid.
        parts["bpe_sample"] = sample

    def build(directory: Path) -> dict[str, Any]:
        vocab = train_subword_vocab(corpus.train, directory, bpe_size=section.bpe_size,
                                    dim=section.dim, epochs=section.epochs,
                                    sample=SAMPLE_SENTENCES)
        return {"source": "trained", "pieces": len(vocab), "dim": vocab.dim}

    return parts, build


def _imported(model: Path, vectors: Path
              ) -> tuple[dict[str, Any], Callable[[Path], dict[str, Any]]]:
    # Content digests, not paths: the same files elsewhere hit the cache, edited files miss it.
    # The corpus is not part of the key: imported vectors do not depend on it.
    parts = {"version": VERSION, "model_sha256": file_digest(model),
             "vectors_sha256": file_digest(vectors), "vectors_suffix": vectors.suffix.lower()}

    def build(directory: Path) -> dict[str, Any]:
        vocab, read = import_subword_vocab(model, vectors, directory)
        if read.missing:
            log.warning("vocab: %d of %d pieces of %s have no vector in %s (%s)", read.missing,
                        vocab.pieces_in_model, model.name, vectors.name,
                        "composed from character n-grams" if read.format == "fasttext-bin"
                        else "zeros")
        return {"source": "imported", "pieces": len(vocab), "dim": vocab.dim,
                "missing_vectors": read.missing, "vectors_format": read.format,
                "model_file": str(model), "vectors_file": str(vectors)}

    return parts, build


def prepare_vocab(ctx: RunContext, corpus: Corpus) -> Vocab:
    """Return the subword vocabulary for the run, from the cache when it exists."""
    started = time.perf_counter()
    section = ctx.spec.vocab
    if section.model is not None and section.vectors is not None:
        parts, build = _imported(Path(section.model), Path(section.vectors))
    else:
        parts, build = _trained(section, corpus)
    directory = ctx.cache.produce("vocab", parts, build)
    ctx.add_time("vocab", time.perf_counter() - started)
    return Vocab(key=directory.name, vocab=SubwordVocab.load(directory),
                 summary=VocabSummary.model_validate(read_meta(directory)["summary"]))
