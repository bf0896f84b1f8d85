"""Stage 1: read or generate the corpus, filter by length, normalise, split train/test."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.cache import artifact_key
from harness.corpus import load_source, normalise
from harness.spec import Source
from harness.stages.base import RunContext, file_digest, log

VERSION = 1


@dataclass(frozen=True)
class Corpus:
    """The prepared corpus: normalised train/test sentences and the raw test sentences.

    `fit` is the text trainable encoders learn from: the `corpus.fit` source when the spec has
    one (e.g. ordered text with adjacent sentences), else the training split. Each part has a
    key of its own (`train_key`, `test_key`, `fit_key`: what determines its sentences), so later
    stages depend only on the parts they read: a new test set retrains no decoder.
    """

    key: str
    train_key: str
    test_key: str
    fit_key: str
    directory: Path
    train: list[str]
    test: list[str]
    test_raw: list[str]

    @cached_property
    def fit(self) -> list[str]:
        """The fit text, read on first use: it may be large, and only a fit that the cache
        lacks reads it."""
        fit_file = self.directory / "fit.txt"
        return _read(fit_file) if fit_file.exists() else self.train


def _source_identity(source: Source, seed: int) -> dict[str, Any]:
    if source.path is not None:
        # The content, not where it lies: the same file in another checkout hits the cache.
        return {"sha256": file_digest(source.path), "limit": source.limit}
    from harness.synthetic import GENERATOR_VERSION

    return {"generate": source.generate, "sentences": source.sentences,
            "seed": seed if source.seed is None else source.seed,
            "generator_version": GENERATOR_VERSION}


def _read(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def prepare_corpus(ctx: RunContext) -> Corpus:
    """Return the run's corpus, from the cache when it exists."""
    started = time.perf_counter()
    section = ctx.spec.corpus
    common = {"version": VERSION, "max_tokens": section.max_tokens,
              "normalise": section.normalise.model_dump()}
    sources = {"train": _source_identity(section.train, ctx.spec.seed),
               # the test split's generator defaults to another seed than the training split's
               "test": _source_identity(section.test, ctx.spec.seed + 1),
               "fit": None if section.fit is None else _source_identity(section.fit,
                                                                        ctx.spec.seed)}
    parts = {**common, **sources}
    keys = {part: artifact_key(f"corpus-{part}", {**common, part: identity})
            for part, identity in sources.items() if identity is not None and part != "fit"}
    if sources["fit"] is not None:  # not length-filtered: max_tokens plays no part
        keys["fit"] = artifact_key("corpus-fit", {"version": VERSION, "fit": sources["fit"],
                                                  "normalise": common["normalise"]})

    def build(directory: Path) -> dict[str, Any]:
        train = load_source(section.train, section.max_tokens, ctx.spec.seed)
        test_raw = load_source(section.test, section.max_tokens, ctx.spec.seed + 1)
        files = {"train.txt": [normalise(s, section.normalise) for s in train],
                 "test.txt": [normalise(s, section.normalise) for s in test_raw],
                 "test.raw.txt": test_raw}
        if section.fit is not None:
            # Ordered text keeps its blank lines: they separate documents for adjacent-sentence
            # objectives, so it is not length-filtered here.
            fit = load_source(section.fit, max_tokens=None, default_seed=ctx.spec.seed)
            files["fit.txt"] = [normalise(s, section.normalise) for s in fit]
        for name, lines in files.items():
            (directory / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        return {"train_sentences": len(train), "test_sentences": len(test_raw)}

    directory = ctx.cache.produce("corpus", parts, build)
    corpus = Corpus(key=directory.name, train_key=keys["train"], test_key=keys["test"],
                    fit_key=keys.get("fit", keys["train"]), directory=directory,
                    train=_read(directory / "train.txt"), test=_read(directory / "test.txt"),
                    test_raw=_read(directory / "test.raw.txt"))
    log.debug("corpus: %d train, %d test sentences", len(corpus.train), len(corpus.test))
    ctx.add_time("corpus", time.perf_counter() - started)
    return corpus
