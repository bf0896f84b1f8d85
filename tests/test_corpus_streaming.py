"""The corpus stage streams: the files it writes are byte for byte those of the list-based stage
it replaced, the training split is a `LineFile` read from disk (a cache hit reads none of it),
and preparing a split does not hold it in memory."""

from __future__ import annotations

import pickle
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from harness.spec import Normalise, Source
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus, prepare_corpus
from harness.synthetic import generate_sentences
from harness.text import lines
from harness.text.lines import LineFile
from harness.text.reading import keep, normalise, read_lines
from harness.util.cache import Cache

NORMALISE = Normalise(lowercase=True, digits="zero")


def spec(train: Source, test: Source, fit: Source | None = None, max_tokens: int = 15
         ) -> SimpleNamespace:
    corpus = SimpleNamespace(train=train, test=test, fit=fit, max_tokens=max_tokens,
                             normalise=NORMALISE)
    return SimpleNamespace(seed=1, corpus=corpus)


def list_based_files(run: SimpleNamespace) -> dict[str, bytes]:
    """The files as the stage wrote them before it streamed: whole lists, joined."""
    def load(source: Source, max_tokens: int | None, seed: int) -> list[str]:
        if source.path is not None:
            return list(read_lines(source.path, max_tokens, source.limit))
        seed = seed if source.seed is None else source.seed
        return [s for s in generate_sentences(source.generate, source.sentences, seed)
                if max_tokens is None or keep(s, max_tokens)]

    section = run.corpus
    train = load(section.train, section.max_tokens, run.seed)
    test_raw = load(section.test, section.max_tokens, run.seed + 1)
    files = {"train.txt": [normalise(s, section.normalise) for s in train],
             "test.txt": [normalise(s, section.normalise) for s in test_raw],
             "test.raw.txt": test_raw}
    if section.fit is not None:
        files["fit.txt"] = [normalise(s, section.normalise)
                            for s in load(section.fit, None, run.seed)]
    return {name: ("\n".join(lines) + "\n").encode("utf-8") for name, lines in files.items()}


def prepared(tmp_path: Path, run: SimpleNamespace) -> Corpus:
    return prepare_corpus(RunContext(spec=run, cache=Cache(root=tmp_path / "cache")))  # type: ignore[arg-type]


def assert_files_as_before(corpus: Corpus, run: SimpleNamespace) -> None:
    expected = list_based_files(run)
    written = {path.name: path.read_bytes() for path in corpus.directory.glob("*.txt")}
    assert written == expected


def test_a_generated_corpus_is_written_as_before(tmp_path):
    run = spec(Source(generate="quickstart", sentences=3000),
               Source(generate="quickstart", sentences=200, seed=2), max_tokens=9)
    corpus = prepared(tmp_path, run)
    assert_files_as_before(corpus, run)
    assert isinstance(corpus.train, LineFile) and len(corpus.train) < 3000  # some filtered
    assert list(corpus.train) == corpus.train.path.read_text("utf-8").splitlines()
    assert corpus.fit is corpus.train and len(corpus.test) == len(corpus.test_raw)


def test_a_file_corpus_is_written_as_before(tmp_path):
    source = tmp_path / "news.txt"
    source.write_text("  In 2008 ,  Obama   won .\n\nÜber  ALLES\t3.5 …\n" + "w " * 20 + "\n"
                      "The café\u00a0au lait\n" * 5 + "last line without newline", "utf-8")
    run = spec(Source(path=source, limit=6), Source(path=source), fit=Source(path=source))
    corpus = prepared(tmp_path, run)
    assert_files_as_before(corpus, run)
    assert (corpus.directory / "train.txt").read_text("utf-8").splitlines()[:2] == [
        "in 0000 , obama won .", "über alles 0.0 …"]  # by hand: collapsed, lowercased, zeroes
    assert corpus.test_raw[:2] == ["In 2008 , Obama won .", "Über ALLES 3.5 …"]
    assert isinstance(corpus.fit, LineFile) and corpus.fit[1] == ""  # blank lines kept
    assert len(corpus.fit) == len(list_based_files(run)["fit.txt"].splitlines())


def test_a_cache_hit_reads_no_line_of_the_training_split(tmp_path, monkeypatch):
    run = spec(Source(generate="quickstart", sentences=2000),
               Source(generate="quickstart", sentences=50, seed=2))
    built = prepared(tmp_path, run)

    def refuse(read: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(path: Path, *args: object) -> Any:
            assert Path(path).name != "train.txt", "train.txt was read"
            return read(path, *args)
        return guarded

    monkeypatch.setattr("harness.text.lines.scan_lines", refuse(lines.scan_lines))
    monkeypatch.setattr("harness.text.lines._stream", refuse(lines._stream))
    hit = prepared(tmp_path, run)
    assert hit.directory == built.directory and len(hit.train) == 2000  # count from meta.json
    # A job gets the corpus pickled: the training split as its path and count.
    assert len(pickle.dumps(hit.train)) < 300
    again = pickle.loads(pickle.dumps(hit))
    assert isinstance(again.train, LineFile) and again == hit


def test_preparing_a_corpus_does_not_hold_the_split(tmp_path):
    """100,000 sentences (about 10 MB as a list of strings; the list-based stage traced 60 MB
    at 200,000) are written with about one chunk's Python allocations (tracemalloc)."""
    source = tmp_path / "big.txt"
    with source.open("w", encoding="utf-8") as handle:
        for i in range(100_000):
            handle.write(f"The Writer{i % 997} sent {i % 89} Letters to Person{i} on Day {i}\n")
    run = spec(Source(path=source), Source(generate="quickstart", sentences=20, seed=2))
    tracemalloc.start()
    try:
        corpus = prepared(tmp_path, run)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = sum(len(line) + 49 + 8 for line in corpus.train)  # str objects + list slots
    assert len(corpus.train) == 100_000 and size > 8_000_000
    assert peak < size / 4, f"peak {peak / 1e6:.1f} MB of Python allocations"


def test_an_empty_generated_split_is_written_as_before(tmp_path):
    run = spec(Source(generate="quickstart", sentences=20), Source(generate="quickstart",
                                                                   sentences=20, seed=2),
               max_tokens=2)  # every sentence has more tokens: nothing kept
    corpus = prepared(tmp_path, run)
    assert_files_as_before(corpus, run)
    assert len(corpus.train) == 0 and corpus.test == []
