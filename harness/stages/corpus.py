"""Stage 1: read or generate the corpus, filter by length, normalise, split train/test."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cached_property
from itertools import islice
from pathlib import Path
from typing import Any

from harness.spec import Source
from harness.stages.base import RunContext, file_digest, log
from harness.text.lines import LineFile
from harness.text.reading import iter_source, normalise
from harness.util.cache import artifact_key, read_meta

VERSION = 1
CHUNK = 8_192
"""Sentences written at a time."""


@dataclass(frozen=True)
class Corpus:
    """The prepared corpus: normalised train/test sentences and the raw test sentences.

    `train` (and `fit`) are read from the artifact's files on use (`harness.text.lines.LineFile`: a
    read-only sequence that never holds the split; it pickles as its path), so a job holds no
    copy of a corpus of 100M sentences; the test split is small and a list.
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
    train: Sequence[str]
    test: list[str]
    test_raw: list[str]

    @cached_property
    def fit(self) -> Sequence[str]:
        """The fit text, read from its file on use (`LineFile`), or the training split."""
        fit_file = self.directory / "fit.txt"
        if not fit_file.exists():
            return self.train
        # Counted when written (an artifact built before the count was recorded counts on use).
        return LineFile(fit_file, _recorded(self.directory, "fit_sentences"))


def _source_identity(source: Source, seed: int) -> dict[str, Any]:
    if source.path is not None:
        # The content, not where it lies: the same file in another checkout hits the cache.
        # "fields": lines are measured as awk's default FS splits them (harness.data.awk);
        # files read before, split at any Unicode space, are read again.
        return {"sha256": file_digest(source.path), "limit": source.limit, "fields": "awk"}
    from harness.synthetic import GENERATOR_VERSION

    return {"generate": source.generate, "sentences": source.sentences,
            "seed": seed if source.seed is None else source.seed,
            "generator_version": GENERATOR_VERSION}


def _recorded(directory: Path, count: str) -> int | None:
    """The line count the corpus build recorded in its meta.json, or None."""
    try:
        return read_meta(directory)["summary"].get(count)
    except (OSError, ValueError, KeyError, AttributeError):
        return None


def _read(path: Path, count: int | None) -> list[str]:
    """The lines of a small split's file. Split at newlines only: a sentence may hold a \\r or
    another character `str.splitlines` would break it at (the reader keeps all but spaces and
    tabs)."""
    return list(LineFile(path, count))


def write_split(sentences: Iterable[str], files: Mapping[Path, Callable[[str], str]]) -> int:
    """Write each sentence, transformed by each file's function, as one line of every file;
    return the number of sentences.

    Written `CHUNK` lines at a time, so memory does not grow with the split. A split with no
    sentence is written as one empty line, as before (`"\\n".join([]) + "\\n"`).
    """
    count = 0
    with ExitStack() as stack:
        handles = [(stack.enter_context(open(path, "w", encoding="utf-8", newline="\n")), form)
                   for path, form in files.items()]
        iterator = iter(sentences)
        while chunk := list(islice(iterator, CHUNK)):
            for handle, form in handles:
                handle.write("\n".join(map(form, chunk)) + "\n")
            count += len(chunk)
        if count == 0:
            for handle, _ in handles:
                handle.write("\n")
    return count


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
        def normal(sentence: str) -> str:
            return normalise(sentence, section.normalise)

        def raw(sentence: str) -> str:
            return sentence

        summary = {
            "train_sentences": write_split(
                iter_source(section.train, section.max_tokens, ctx.spec.seed),
                {directory / "train.txt": normal}),
            "test_sentences": write_split(
                iter_source(section.test, section.max_tokens, ctx.spec.seed + 1),
                {directory / "test.txt": normal, directory / "test.raw.txt": raw})}
        if section.fit is not None:
            # Ordered text keeps its blank lines: they separate documents for adjacent-sentence
            # objectives, so it is not length-filtered here.
            summary["fit_sentences"] = write_split(
                iter_source(section.fit, max_tokens=None, default_seed=ctx.spec.seed),
                {directory / "fit.txt": normal})
        return summary

    directory = ctx.cache.produce("corpus", parts, build)
    # Counted when written: a cache hit reads no line of train.txt here.
    count, tests = _recorded(directory, "train_sentences"), _recorded(directory, "test_sentences")
    corpus = Corpus(key=directory.name, train_key=keys["train"], test_key=keys["test"],
                    fit_key=keys.get("fit", keys["train"]), directory=directory,
                    train=LineFile(directory / "train.txt", count),
                    test=_read(directory / "test.txt", tests),
                    test_raw=_read(directory / "test.raw.txt", tests))
    log.debug("corpus: %d train, %d test sentences", len(corpus.train), len(corpus.test))
    ctx.add_time("corpus", time.perf_counter() - started)
    return corpus
