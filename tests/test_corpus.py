"""Corpus reading: the paper's length filter, `limit`, normalisation, unreadable files."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.corpus import keep, load_source, normalise, read_lines
from harness.errors import DataError
from harness.spec import Normalise, Source


def test_keep_is_the_papers_nf_filter() -> None:
    # awk 'NF<15': 14 tokens kept, 15 dropped, empty lines dropped
    assert keep(" ".join(["w"] * 14), 15)
    assert not keep(" ".join(["w"] * 15), 15)
    assert not keep("", 15) and not keep("   ", 15)


def test_read_lines_filters_then_limits_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    path.write_text("one two\n" + " ".join(["x"] * 20) + "\n\nthree  four\tfive\nsix\n",
                    encoding="utf-8")
    assert list(read_lines(path, 15, None)) == ["one two", "three four five", "six"]
    assert list(read_lines(path, 15, 2)) == ["one two", "three four five"]
    assert list(read_lines(path, 3, None)) == ["one two", "six"]


def test_normalise_lowercases_and_zeroes_digits() -> None:
    text = "In 2008, Obama won 52.9% ."
    assert normalise(text, Normalise()) == text
    assert normalise(text, Normalise(lowercase=True)) == "in 2008, obama won 52.9% ."
    assert normalise(text, Normalise(digits="zero")) == "In 0000, Obama won 00.0% ."


def test_non_utf8_file_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("fine\nalso fine\ncaf\xe9 au lait\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"latin1\.txt:3: not UTF-8"):
        list(read_lines(path, 15, None))


def test_missing_file_and_empty_result(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        list(read_lines(tmp_path / "nope.txt", 15, None))
    path = tmp_path / "long.txt"
    path.write_text(" ".join(["w"] * 30) + "\n")
    with pytest.raises(DataError, match="no sentence with fewer than 15 tokens"):
        load_source(Source(path=path), 15, 1)


def test_generated_source_is_seeded_and_filtered() -> None:
    source = Source(generate="quickstart", sentences=50)
    first, again = load_source(source, 15, 1), load_source(source, 15, 1)
    assert first == again and len(first) == 50
    assert load_source(source, 15, 2) != first
    assert all(len(s.split()) < 6 for s in load_source(source, 6, 1))


def test_unknown_generator_is_a_validation_error() -> None:
    with pytest.raises(ValueError, match="unknown generator 'nope'; known: quickstart"):
        Source(generate="nope", sentences=5)
