"""Corpus reading: the paper's length filter, normalisation, and the synthetic generator hook."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from harness.data.awk import field_count
from harness.errors import DataError
from harness.spec import Normalise, Source

_DIGIT = re.compile(r"[0-9]")
_BLANKS = re.compile("[ \t]+")  # awk's default FS: spaces and tabs only


def normalise(sentence: str, options: Normalise) -> str:
    """Return the sentence lowercased and/or with every digit replaced by 0 (BPEmb-like)."""
    if options.lowercase:
        sentence = sentence.lower()
    if options.digits == "zero":
        sentence = _DIGIT.sub("0", sentence)
    return sentence


def keep(sentence: str, max_tokens: int) -> bool:
    """Return True when the corpus stage keeps the line `sentence`: 0 < NF < `max_tokens`.

    NF is awk's, counted on the line's UTF-8 bytes by `harness.data.awk.field_count` (the
    default FS: runs of spaces and tabs only), so this is exactly the paper's `awk 'NF<15'`
    (section 3; `harness data newscrawl` writes what it prints), less the lines that hold no
    token: blank ones (NF = 0) and CRLF blank ones (a lone \\r, which awk counts as a field).
    """
    return _keeps(sentence.encode("utf-8"), tidy(sentence), max_tokens)


def tidy(line: str) -> str:
    """Return the sentence the corpus stage stores for `line`: its awk fields joined by a space.

    Runs of spaces and tabs become one space and leading and trailing ones go; nothing else is
    a separator, so a token holding a no-break or thin space stays one token. A line-ending
    \\r (a CRLF file) and \\n are dropped: "a b\\r\\n" and "a b\\n" give "a b".
    """
    line = line.removesuffix("\n").removesuffix("\r")
    return " ".join(_BLANKS.split(line.strip(" \t")))


def _keeps(record: bytes, sentence: str, max_tokens: int) -> bool:
    """Return True when `record` passes `awk 'NF<max_tokens'` and its `sentence` is not empty."""
    return bool(sentence) and field_count(record, max_tokens) < max_tokens


def read_lines(path: Path, max_tokens: int | None, limit: int | None) -> Iterator[str]:
    """Yield the first `limit` lines of `path` that `keep` keeps, each as `tidy` stores it.

    A line is the bytes up to a \\n, as awk's records; NF is counted on those bytes (a CRLF
    line's \\r included, as awk does), so the lines kept are exactly those `awk 'NF<M'` prints,
    less the blank ones. With `max_tokens=None` every line is kept, blank ones too (as "": they
    separate documents). Raises `DataError` naming the file (and line) when it is missing or
    not UTF-8.
    """
    kept = 0
    try:
        handle = open(path, "rb")  # decoded line by line, so an error can name its line
    except FileNotFoundError:
        raise DataError(f"{path}: corpus file not found") from None
    with handle:
        for number, raw in enumerate(handle, 1):
            if limit is not None and kept >= limit:
                return
            try:
                sentence = tidy(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise DataError(f"{path}:{number}: not UTF-8 text ({exc.reason}); "
                                "convert the file to UTF-8") from None
            if max_tokens is None or _keeps(raw.removesuffix(b"\n"), sentence, max_tokens):
                kept += 1
                yield sentence


def iter_source(source: Source, max_tokens: int | None, default_seed: int) -> Iterator[str]:
    """Yield the raw sentences of one corpus split in file order, one at a time, filtered by
    length unless `max_tokens` is None.

    Nothing is held but the sentence at hand (and, for a generated source, the generator's set
    of sentences seen). A file with no sentence raises DataError once it is read to the end; an
    unknown generator raises it at once.
    """
    if source.path is not None:
        return _file_sentences(source.path, max_tokens, source.limit)
    from harness.synthetic import iter_sentences

    assert source.generate is not None and source.sentences is not None
    seed = default_seed if source.seed is None else source.seed
    try:
        generated = iter_sentences(source.generate, source.sentences, seed)
    except ValueError as exc:
        raise DataError(str(exc)) from None
    return (s for s in generated if max_tokens is None or keep(s, max_tokens))


def _file_sentences(path: Path, max_tokens: int | None, limit: int | None) -> Iterator[str]:
    found = False
    for sentence in read_lines(path, max_tokens, limit):
        found = found or bool(sentence)
        yield sentence
    if not found:
        shorter = "" if max_tokens is None else f" with fewer than {max_tokens} tokens"
        raise DataError(f"{path}: no sentence{shorter}")


def load_source(source: Source, max_tokens: int | None, default_seed: int) -> list[str]:
    """Return the raw sentences of one corpus split in file order, filtered by length unless
    `max_tokens` is None (`iter_source` as a list: for small splits)."""
    return list(iter_source(source, max_tokens, default_seed))
