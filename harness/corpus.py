"""Corpus reading: the paper's length filter, normalisation, and the synthetic generator hook."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from harness.errors import DataError
from harness.spec import Normalise, Source

_DIGIT = re.compile(r"[0-9]")


def normalise(sentence: str, options: Normalise) -> str:
    """Return the sentence lowercased and/or with every digit replaced by 0 (BPEmb-like)."""
    if options.lowercase:
        sentence = sentence.lower()
    if options.digits == "zero":
        sentence = _DIGIT.sub("0", sentence)
    return sentence


def keep(sentence: str, max_tokens: int) -> bool:
    """True for a non-empty sentence with fewer than `max_tokens` whitespace tokens.

    The Vec2Sent corpus keeps sentences with fewer than 15 tokens (`awk 'NF<15'`, section 3).
    """
    return 0 < len(sentence.split()) < max_tokens


def read_lines(path: Path, max_tokens: int | None, limit: int | None) -> Iterator[str]:
    """Yield the first `limit` lines of `path` that pass the length filter, whitespace-collapsed.

    With `max_tokens=None` every line is kept, blank ones too (they separate documents).
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
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(f"{path}:{number}: not UTF-8 text ({exc.reason}); "
                                "convert the file to UTF-8") from None
            sentence = " ".join(line.split())
            if max_tokens is None or keep(sentence, max_tokens):
                kept += 1
                yield sentence


def load_source(source: Source, max_tokens: int | None, default_seed: int) -> list[str]:
    """Return the raw sentences of one corpus split in file order, filtered by length unless
    `max_tokens` is None."""
    if source.path is not None:
        sentences = list(read_lines(source.path, max_tokens, source.limit))
        if not any(sentences):
            limit = "" if max_tokens is None else f" with fewer than {max_tokens} tokens"
            raise DataError(f"{source.path}: no sentence{limit}")
        return sentences
    from harness.synthetic import generate_sentences

    assert source.generate is not None and source.sentences is not None
    seed = default_seed if source.seed is None else source.seed
    try:
        generated = generate_sentences(source.generate, source.sentences, seed)
    except ValueError as exc:
        raise DataError(str(exc)) from None
    return [s for s in generated if max_tokens is None or keep(s, max_tokens)]
