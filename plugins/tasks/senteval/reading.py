"""Reading SentEval's text files with their quirks, with errors that name the file and line.

The quirks: MR/SUBJ/TREC are latin-1 (SentEval opens them so), everything else UTF-8; some copies
start with a UTF-8 byte-order mark; MRPC and SICK's test file have CRLF line ends; some latin-1
files contain byte 0x85 (NEL), which Python's `str.splitlines` would treat as a line break, so
lines are split on "\\n" only (that keeps MR at 10,662 sentences).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from harness.plugin import DataError

BOM = b"\xef\xbb\xbf"
log = logging.getLogger(__name__)


def fetch_hint(root: Path) -> str:
    """Return what to do about missing or broken SentEval files under `root`."""
    return f"run `harness data senteval --dir {root}`"


@dataclass(frozen=True)
class Preparation:
    """A step of SentEval's `get_transfer_data.bash` that a file as its source releases it has
    not been through: `prepare` does it (`harness data senteval`'s own code), `done` tells a
    file that has been through it."""

    name: str
    prepare: Callable[[bytes], bytes]
    done: Callable[[bytes], bool]


def _ptb() -> Preparation:
    from harness.plugin import ptb_file, ptb_prepared

    return Preparation("`cat -v` and the Penn Treebank sed script", ptb_file, ptb_prepared)


def _quotes() -> Preparation:
    from harness.plugin import quotes_stripped, strip_quotes

    return Preparation("backquotes and apostrophes removed", strip_quotes, quotes_stripped)


PREPARATIONS: dict[str, Callable[[], Preparation]] = {"ptb": _ptb, "quotes": _quotes}
"""What SentEval's script does to a file's text before its task reads it: MR, CR, SUBJ and MPQA
through the PTB sed script, TREC's quotes removed (the other files it writes as released, or
through the Moses tokenizer, which the sources' STS, STS-B and SICK files have been)."""


@lru_cache(maxsize=32)
def _prepared(raw: bytes, preparation: str) -> bytes | None:
    """`raw` prepared, or None when it already is (kept: every encoder's job reads the file)."""
    steps = PREPARATIONS[preparation]()
    return None if steps.done(raw) else steps.prepare(raw)


def _read_bytes(path: Path, hint: str) -> bytes:
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
    return raw


_warned: set[Path] = set()


def read_lines(path: Path, *, encoding: str, hint: str, preparation: str | None = None
               ) -> list[str]:
    """Return the lines of `path` decoded with `encoding`, without line ends or a leading BOM.

    Lines are split on "\\n" only; a trailing "\\r" is removed; the empty piece after a final
    newline is not a line. `hint` says what to do when the file is missing or empty.
    `preparation` (a key of `PREPARATIONS`): the file is read as SentEval's script would have
    prepared it, prepared here if it was not (said once per file, in the log); a prepared file
    is read as it is.
    """
    raw = _read_bytes(path, hint)
    if preparation is not None:
        prepared = _prepared(raw, preparation)
        if prepared is not None:
            if path not in _warned:
                _warned.add(path)
                log.warning("%s: as its source releases it, not as SentEval prepares it; read "
                            "with SentEval's preparation (%s), as `harness data senteval` "
                            "writes it", path, PREPARATIONS[preparation]().name)
            raw = prepared
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
