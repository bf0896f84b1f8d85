"""Stage 2: the subword vocabulary (BPE + fastText vectors) trained on the training split."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.vocab import SubwordVocab, train_subword_vocab

VERSION = 1


@dataclass(frozen=True)
class Vocab:
    """The run's vocabulary artifact."""

    key: str
    vocab: SubwordVocab


def prepare_vocab(ctx: RunContext, corpus: Corpus) -> Vocab:
    """Return the subword vocabulary for the corpus, from the cache when it exists."""
    started = time.perf_counter()
    section = ctx.spec.vocab
    parts = {"version": VERSION, "corpus": corpus.key, **section.model_dump()}

    def build(directory: Path) -> dict[str, Any]:
        vocab = train_subword_vocab(corpus.train, directory, bpe_size=section.bpe_size,
                                    dim=section.dim, epochs=section.epochs)
        return {"pieces": len(vocab), "dim": vocab.dim}

    directory = ctx.cache.produce("vocab", parts, build)
    ctx.add_time("vocab", time.perf_counter() - started)
    return Vocab(key=directory.name, vocab=SubwordVocab.load(directory))
