"""Corpus reading: the paper's length filter, `limit`, normalisation, unreadable files."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.data.awk import field_count
from harness.data.newscrawl import prepare_newscrawl
from harness.errors import DataError
from harness.spec import Normalise, Source
from harness.text.reading import keep, load_source, normalise, read_lines, tidy


def test_keep_is_the_papers_nf_filter() -> None:
    # awk 'NF<15': 14 tokens kept, 15 dropped, empty lines dropped
    assert keep(" ".join(["w"] * 14), 15)
    assert not keep(" ".join(["w"] * 15), 15)
    assert not keep("", 15) and not keep("   ", 15)


W13 = " ".join(f"w{i}" for i in range(13))
NBSP14 = f"{W13} non\xa0breaking"  # 14 awk fields; str.split() makes 15 of them
THIN14 = f"thin\u2009space {W13}"


def test_keep_counts_fields_as_awk_default_fs() -> None:
    for line in (NBSP14, THIN14, f"{W13} a\x0bb", f"{W13} a\x0cb", f"{W13} a\rb",
                 f"{W13} ideographic\u3000space", f"\t{W13}\t \tlast \t"):
        assert keep(line, 15) and field_count(line.encode()) == 14, repr(line)
    assert not keep(f"{NBSP14} w", 15) and not keep(f"{W13}\ta\tb", 15)
    assert keep(f"{W13} last\r", 15)  # CRLF: the \r is part of the last field, NF = 14
    assert not keep(f"{W13} last \r", 15)  # a blank before it: the \r is field 15, as in awk
    assert not keep("\r", 15) and not keep(" \t\r", 15)  # NF = 1 in awk, but no token
    assert field_count(b" \t\r") == 1 and field_count(b" \t ") == 0


def test_tidy_keeps_tokens_whole_and_drops_the_line_end() -> None:
    assert tidy(NBSP14).split(" ") == NBSP14.split(" ") and len(tidy(NBSP14).split(" ")) == 14
    assert tidy("a b\r\n") == tidy("a b\n") == tidy("a b") == "a b"
    assert tidy(" \ta\t\t b \t") == "a b"
    assert tidy("a\x0bb\x0cc d\xa0e") == "a\x0bb\x0cc d\xa0e"  # not separators
    assert tidy("a\rb\r\n") == "a\rb" and tidy("\r\n") == tidy(" \t") == ""


def test_read_lines_keeps_unicode_spaces_crlf_tabs_vt_ff(tmp_path: Path) -> None:
    path = tmp_path / "odd.txt"
    lines = [NBSP14, THIN14, f"{W13} crlf\r", f"\t{W13}\tlast\t", f"{W13} a\x0bb\x0cc",
             "\r", f"{NBSP14} w", f"{W13} x \r", "  ", "tail"]
    path.write_bytes("\n".join(lines).encode("utf-8"))  # no final newline
    kept = list(read_lines(path, 15, None))
    assert kept == [NBSP14, THIN14, f"{W13} crlf", f"{W13} last", f"{W13} a\x0bb\x0cc", "tail"]
    assert [len(s.split(" ")) for s in kept[:5]] == [14] * 5
    assert list(read_lines(path, None, None))[5:9] == ["", f"{NBSP14} w", f"{W13} x", ""]


def test_newscrawl_and_the_corpus_stage_keep_the_same_lines(tmp_path: Path) -> None:
    lines = [NBSP14, f"{W13} too many", THIN14, f"{W13} crlf\r", " \t", f"{W13}\x0bvt\x0cff"]
    source = tmp_path / "news.gz"
    source.write_bytes(gzip.compress("\n".join(lines).encode("utf-8") + b"\n"))
    made = prepare_newscrawl(2007, 5, tmp_path / "out", url=str(source), progress=False)
    printed = made.path.read_bytes().decode("utf-8").split("\n")[:-1]
    assert printed == [NBSP14, THIN14, f"{W13} crlf\r", " \t", f"{W13}\x0bvt\x0cff"]
    kept = list(read_lines(made.path, 15, None))
    assert kept == [NBSP14, THIN14, f"{W13} crlf", f"{W13}\x0bvt\x0cff"]  # less the blank line
    assert [len(s.split(" ")) for s in kept] == [14, 14, 14, 13]


# Tricky records (no \n) and whether `awk 'NF<15'` prints them, worked out by hand from POSIX
# awk's default FS; where awk is installed the test checks this list against it as well.
TRICKY: list[tuple[bytes, bool]] = [
    (NBSP14.encode(), True),
    (THIN14.encode(), True),
    (f"{W13} ideographic\u3000space".encode(), True),
    (W13.encode() + b" a b", False),  # 15
    (W13.encode() + b" a\xc2\xa0b c", False),  # 15: the no-break space joins, the space splits
    (W13.encode() + b" crlf\r", True),  # CRLF: NF = 14
    (W13.encode() + b" x \r", False),  # NF = 15: the \r after a blank is a field
    (b"w " * 13 + b"\r", True),  # NF = 14
    (b"\r", True),  # NF = 1, a CRLF blank line: printed, but the corpus stage has no token
    (b"", True),  # NF = 0: printed, not kept by the corpus stage
    (b" \t \t", True),
    (b"\t".join([b"t"] * 14), True),
    (b"\t".join([b"t"] * 15), False),
    (b" \t  ".join([b"m"] * 15) + b"\t", False),
    (b"\x0b".join([b"v"] * 20), True),  # NF = 1: \v is no separator
    (b"\x0c".join([b"f"] * 20), True),
    (W13.encode() + b" a\x0bb\x0cc\rd", True),
    (W13.encode() + b" a \x0bb", False),  # 15: \v is a field of its own after a blank
    (b"\t" + W13.encode() + b" last \t", True),
]


def _awk_prints(records: list[bytes], directory: Path) -> list[bytes]:
    """Return the records `LC_ALL=C awk 'NF<15'` prints: the real awk when installed, else the
    hand-worked answers of `TRICKY`."""
    awk = shutil.which("awk")
    if awk is None:
        return [record for record, printed in TRICKY if printed]
    path = directory / "tricky.txt"
    path.write_bytes(b"\n".join(records) + b"\n")
    out = subprocess.run([awk, "NF<15", str(path)], capture_output=True, check=True,
                         env={**os.environ, "LC_ALL": "C"}).stdout
    return out.split(b"\n")[:-1]


def test_read_lines_keeps_exactly_the_lines_awk_keeps(tmp_path: Path) -> None:
    records = [record for record, _ in TRICKY]
    printed = _awk_prints(records, tmp_path)
    assert printed == [record for record, expected in TRICKY if expected]  # the list is right
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"\n".join(records))  # the last line without a newline, as awk reads it
    expected = [tidy(record.decode()) for record in printed]
    assert list(read_lines(path, 15, None)) == [s for s in expected if s]
    assert [keep(record.decode(), 15) for record in records] == [
        record in printed and bool(tidy(record.decode())) for record in records]


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
