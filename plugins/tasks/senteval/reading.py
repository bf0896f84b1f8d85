"""Reading SentEval's text files with their quirks, with errors that name the file and line.

The quirks: MR/SUBJ/TREC are latin-1 (SentEval opens them so), everything else UTF-8; some copies
start with a UTF-8 byte-order mark; MRPC and SICK's test file have CRLF line ends; some latin-1
files contain byte 0x85 (NEL), which Python's `str.splitlines` would treat as a line break, so
lines are split on "\\n" only (that keeps MR at 10,662 sentences).
"""

from __future__ import annotations

from pathlib import Path

from harness.plugin import DataError

BOM = b"\xef\xbb\xbf"


def fetch_hint(root: Path) -> str:
    """Return what to do about missing or broken SentEval files under `root`."""
    return f"run `harness data senteval --dir {root}`"


def read_lines(path: Path, *, encoding: str, hint: str) -> list[str]:
    """Return the lines of `path` decoded with `encoding`, without line ends or a leading BOM.

    Lines are split on "\\n" only; a trailing "\\r" is removed; the empty piece after a final
    newline is not a line. `hint` says what to do when the file is missing or empty.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: missing; {hint}") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror}") from None
    if raw.startswith(BOM):
        raw = raw[len(BOM):]
    if not raw.strip():
        raise DataError(f"{path}: empty (a broken download?); {hint}")
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise DataError(f"{path}:{line}: not valid {encoding} ({exc.reason}); SentEval reads this "
                        f"file as {encoding}") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def tokens(text: str) -> str:
    """Return `text` as SentEval's tokens (`str.split()`) joined by single spaces."""
    return " ".join(text.split())


def fields(line: str, path: Path, number: int, count: int, what: str) -> list[str]:
    """Return the tab-separated fields of a line, at least `count` of them, or raise naming it."""
    parts = line.split("\t")
    if len(parts) < count:
        raise DataError(f"{path}:{number}: expected {count} tab-separated fields ({what}), "
                        f"found {len(parts)}")
    return parts


def number(text: str, path: Path, line: int, what: str) -> float:
    """Return `text` as a float, or raise naming the file, line and field."""
    try:
        return float(text)
    except ValueError:
        raise DataError(f"{path}:{line}: {what} {text.strip()!r} is not a number") from None


def integer(text: str, path: Path, line: int, what: str) -> int:
    """Return `text` as an int, or raise naming the file, line and field."""
    try:
        return int(text.strip())
    except ValueError:
        raise DataError(f"{path}:{line}: {what} {text.strip()!r} is not an integer") from None
