"""`harness.text.lines.LineFile`: a file's lines as a read-only sequence (length, streaming,
random access through the sparse index, slices as views, pickling as a path)."""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import numpy as np
import pytest

from harness.text.lines import BLOCK, LineFile, scan_lines


def lines_of(count: int) -> list[str]:
    """Lines with non-ASCII characters, empty lines and lengths that vary."""
    return [("é" * (i % 3)) + (f"line {i} ü€ 漢" if i % 11 else "") for i in range(count)]


def write(path: Path, lines: list[str], *, newline_at_end: bool = True) -> Path:
    text = "\n".join(lines) + ("\n" if newline_at_end and lines else "")
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.mark.parametrize("count", [0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 17])
@pytest.mark.parametrize("newline_at_end", [True, False])
def test_length_iteration_and_lookup_match_the_list(tmp_path, count, newline_at_end):
    lines = lines_of(count)
    if lines and not newline_at_end:
        lines[-1] = "last, without a newline"  # an empty last line needs its newline
    lines_file = LineFile(write(tmp_path / "c.txt", lines, newline_at_end=newline_at_end))
    assert len(lines_file) == count
    assert list(lines_file) == lines == (tmp_path / "c.txt").read_text("utf-8").splitlines()
    assert [lines_file[i] for i in range(count)] == lines
    if count:
        assert lines_file[-1] == lines[-1] and lines_file[-count] == lines[0]
        assert lines_file[np.int64(count // 2)] == lines[count // 2]  # any integer type
    with pytest.raises(IndexError):
        lines_file[count]


def test_the_index_holds_one_offset_per_block(tmp_path):
    lines = lines_of(5 * BLOCK + 3)
    count, offsets = scan_lines(write(tmp_path / "c.txt", lines))
    assert count == len(lines)
    assert offsets.dtype == np.int64 and len(offsets) == 6
    data = (tmp_path / "c.txt").read_bytes()
    for block, offset in enumerate(offsets):
        assert data[offset:].split(b"\n", 1)[0].decode("utf-8") == lines[block * BLOCK]
    # A newline at the very end starts no line: exactly BLOCK lines make one block.
    assert len(scan_lines(write(tmp_path / "d.txt", lines_of(BLOCK)))[1]) == 1
    assert scan_lines(write(tmp_path / "e.txt", ["", ""]))[0] == 2  # "\n\n": two empty lines


def test_slices_are_views_and_views_of_views_slice_again(tmp_path):
    lines = lines_of(4 * BLOCK + 100)
    lines_file = LineFile(write(tmp_path / "c.txt", lines))
    rng = random.Random(0)
    for _ in range(200):
        a, b = sorted(rng.randrange(-5, len(lines) + 5) for _ in range(2))
        view = lines_file[a:b]
        assert isinstance(view, LineFile) and len(view) == len(lines[a:b])
        assert list(view) == lines[a:b]
        c, d = sorted(rng.randrange(-3, len(view) + 3) for _ in range(2))
        assert list(view[c:d]) == lines[a:b][c:d]
        if len(view):
            i = rng.randrange(len(view))
            assert view[i] == lines[a:b][i] and view[-1] == lines[a:b][-1]
    assert lines_file[::7] == lines[::7] and lines_file[10:2:-1] == lines[10:2:-1]
    assert list(lines_file[len(lines) - 3:]) == lines[-3:]
    assert list(lines_file[5:5]) == [] and len(lines_file[9:3]) == 0


def test_a_prefix_streams_without_building_the_index(tmp_path, monkeypatch):
    lines = lines_of(3 * BLOCK)
    lines_file = LineFile(write(tmp_path / "c.txt", lines), count=len(lines))

    def no_scan(path: Path) -> None:
        raise AssertionError("the index was built")

    monkeypatch.setattr("harness.text.lines.scan_lines", no_scan)
    assert len(lines_file) == len(lines)  # the count given, not counted
    assert list(lines_file[:2500]) == lines[:2500]  # train[:n]: read from the start


def test_pickles_as_its_path_and_range_not_its_lines(tmp_path):
    lines = lines_of(2 * BLOCK)
    lines_file = LineFile(write(tmp_path / "c.txt", lines))
    view = lines_file[100:1500]
    for value, expected in ((lines_file, lines), (view, lines[100:1500])):
        data = pickle.dumps(value)
        assert len(data) < 300 and b"line 1" not in data
        again = pickle.loads(data)
        assert again == value and list(again) == expected and again.path == value.path


def test_equality_compares_lines_and_the_type_is_read_only(tmp_path):
    lines = lines_of(50)
    first = LineFile(write(tmp_path / "a.txt", lines))
    copy = LineFile(write(tmp_path / "b.txt", lines))
    assert first == copy and first == lines and lines == first and first == tuple(lines)
    assert first != lines[:-1] and first[1:] != first and first != "line"
    with pytest.raises(TypeError):
        first[0] = "x"  # type: ignore[index]
    with pytest.raises(TypeError):
        hash(first)
    assert lines[7] in first and first.index(lines[7]) == 7
