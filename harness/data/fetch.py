"""Resumable HTTP downloads for `harness data ...`, with the standard library only.

`fetch` (`harness data senteval`) and `harness.data.newscrawl` download through here:

- Retries (`retrying`): a transient failure (the host unreachable, a timeout, HTTP 5xx or 429,
  a transfer cut short) is tried again after about 1, 2 and 4 s, `ATTEMPTS` tries in all; a
  permanent one (HTTP 404, 403 and the other 4xx) fails at once.
- Partial files (`Partial`): a download in progress lives in `FOLDER/<key>-NAME.part`, where
  key is the first 16 hex digits of the sha256 of its URL, so two URLs with one file name never
  share a partial file; `<key>-NAME.part.json` records the URL and the validator (ETag, else
  Last-Modified) of the response its bytes came from.
- Resuming: a retry or a rerun continues a partial file with a Range request carrying
  `If-Range: <validator>`, so a server whose file changed answers 200 with the whole new file,
  which replaces the partial one (as does a server that ignores Range). A partial file without
  a recorded validator is not resumed: the download starts over.

`fetch` renames its finished `.part` to the destination, so an existing destination is always a
finished file. Every failure is a one-line `DataError` naming the URL and what to do.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import random
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from harness.errors import DataError

CHUNK = 1 << 16
"""Bytes read per call while streaming a response to disk."""

ATTEMPTS = 4
"""Tries per download before a transient failure is reported."""

BACKOFF = 1.0
"""Seconds before the second try; each further wait doubles (1, 2, 4 s), plus up to 25% jitter."""

sleep: Callable[[float], None] = time.sleep
"""How `retrying` waits between tries; tests replace it, so they never sleep for real."""

_T = TypeVar("_T")
_SENTEVAL_AGENT = "v2s-harness (harness data senteval)"


class TransientError(DataError):
    """A failure worth another try: network, timeout, HTTP 5xx or 429, a transfer cut short."""

    def __init__(self, problem: str, advice: str) -> None:
        super().__init__(f"{problem}; {advice}")
        self.problem, self.advice = problem, advice


def retrying(attempt: Callable[[], _T], *, attempts: int | None = None) -> _T:
    """Return what `attempt()` returns, calling it again while it raises `TransientError`.

    Waits `BACKOFF * 2**i` seconds (jittered by up to 25%) through `sleep` before try i + 2;
    after `attempts` tries (default `ATTEMPTS`) the last failure is raised as a one-line
    `DataError` that says how many tries were made. Other errors (a permanent HTTP error, a bad
    file) pass at once.
    """
    attempts = ATTEMPTS if attempts is None else attempts
    for tried in range(1, attempts + 1):
        try:
            return attempt()
        except TransientError as exc:
            if tried == attempts:
                raise DataError(f"{exc.problem} ({attempts} tries); {exc.advice}") from None
            sleep(BACKOFF * 2 ** (tried - 1) * (1 + random.random() / 4))
    raise ValueError(f"attempts must be at least 1, not {attempts}")


class ProgressLine:
    """Prints a progress line to stderr at most twice a second (and always the final one)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled, self.last = enabled, -1e9

    def __call__(self, text: str, final: bool = False) -> None:
        """Print `text` unless the last line was printed less than half a second ago."""
        now = time.monotonic()
        if not self.enabled or (not final and now - self.last < 0.5):
            return
        self.last = now
        print(f"  {text}{' done' if final else ''}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Partial:
    """A download in progress: `path` holds its bytes so far, and `record` (`path` + `.json`)
    the URL and validator of the response they came from."""

    url: str
    path: Path

    @classmethod
    def in_folder(cls, folder: Path, url: str, name: str) -> Partial:
        """Return the partial download of `url` in `folder`: `<sha256(url)[:16]>-NAME.part`."""
        key = hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]
        return cls(url, folder / f"{key}-{name}.part")

    @property
    def record(self) -> Path:
        """Return the file recording the URL and validator of the partial bytes."""
        return self.path.with_name(self.path.name + ".json")

    def resumable(self) -> tuple[int, str | None]:
        """Return (bytes held, validator) of a partial file that may be resumed, else (0, None).

        A partial file that may not (empty, no validator recorded, or one for another URL) is
        discarded: the download starts over.
        """
        try:
            recorded = json.loads(self.record.read_text(encoding="utf-8"))
            size = self.path.stat().st_size
        except (OSError, ValueError):
            recorded, size = None, 0
        validator = recorded.get("validator") if isinstance(recorded, dict) else None
        if not size or not isinstance(validator, str) or recorded.get("url") != self.url:
            self.discard()
            return 0, None
        return size, validator

    def begin(self, validator: str | None) -> None:
        """Empty the partial file for a body from byte 0 and record its `validator` (with
        None, nothing is recorded and the partial file will not be resumed)."""
        self.record.unlink(missing_ok=True)  # first: a record never vouches for other bytes
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(b"")
        if validator is not None:
            self.record.write_text(json.dumps({"url": self.url, "validator": validator}) + "\n",
                                   encoding="utf-8")

    def discard(self) -> None:
        """Remove the partial file and its record."""
        self.path.unlink(missing_ok=True)
        self.record.unlink(missing_ok=True)


def validator_of(response: http.client.HTTPResponse) -> str | None:
    """Return the response's strong ETag, else its Last-Modified, else None (RFC 9110 13.1.5:
    If-Range takes no weak ETag)."""
    etag = response.headers.get("ETag")
    if etag and not etag.startswith("W/"):
        return etag
    return response.headers.get("Last-Modified")


def continues(response: http.client.HTTPResponse, start: int, validator: str | None) -> bool:
    """Whether `response` to a Range request from byte `start` with `If-Range: validator` is
    the rest of the file the partial bytes came from: a 206 whose Content-Range starts at
    `start` and whose validator is `validator` (a server or proxy that honours Range but not
    If-Range would send the tail of a changed file, which must not be spliced on)."""
    if response.status != 206 or not start:
        return False
    first = response.headers.get("Content-Range", "").removeprefix("bytes ").split("-")[0]
    return first == str(start) and validator_of(response) == validator


def open_from(url: str, start: int, *, advice: str, user_agent: str, timeout: float = 60.0,
              validator: str | None = None) -> http.client.HTTPResponse | None:
    """Return the response for `url` from byte `start`, or None when the server answers 416.

    With `start` > 0 this is a Range request, with `If-Range: validator` when one is given (a
    server whose file changed then answers 200 with all of it). Raises `TransientError` for an
    unreachable host, a timeout, HTTP 5xx and 429, and a one-line `DataError` for other HTTP
    errors; both end with `advice`.
    """
    headers = {"User-Agent": user_agent}
    if start:
        headers["Range"] = f"bytes={start}-"
        if validator is not None:
            headers["If-Range"] = validator
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                      timeout=timeout)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 416 and start:
            return None
        problem = f"{url}: HTTP {exc.code} {exc.reason}"
        if exc.code >= 500 or exc.code == 429:
            raise TransientError(problem, f"the server is busy or failing: run again later, or "
                                 f"{advice}") from None
        raise DataError(f"{problem}; the file may have moved, {advice}") from None
    except ValueError as exc:
        raise DataError(f"{url}: not a valid URL ({exc}); {advice}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise TransientError(f"{url}: cannot connect ({reason})", f"check the network or "
                             f"{advice}, then run again to resume") from None


def read_body(response: http.client.HTTPResponse, url: str, start: int,
              size: int | None = None) -> Iterator[bytes]:
    """Yield the body of `response` in pieces of up to `size` (default `CHUNK`) bytes; a
    connection that fails raises `TransientError` saying how many bytes (counted from `start`)
    had arrived."""
    done = start
    while True:
        try:
            chunk = response.read(size or CHUNK)
        except (OSError, http.client.HTTPException) as exc:
            raise TransientError(f"{url}: transfer interrupted after {done} bytes "
                                 f"({type(exc).__name__})", "run again to resume") from None
        if not chunk:
            return
        done += len(chunk)
        yield chunk


def expected_size(response: http.client.HTTPResponse, start: int) -> int | None:
    """Return the size the whole file will have once `response` (from byte `start`) has been
    read, from its Content-Length; None when the server does not say."""
    length = response.headers.get("Content-Length")
    return int(length) + start if length is not None and length.isdigit() else None


def fetch(url: str, destination: Path, *, progress: bool = False, timeout: float = 60.0) -> Path:
    """Download `url` to `destination`, resuming its partial download; return `destination`.

    An existing `destination` is a finished download and is kept. The bytes go to
    `Partial.in_folder(destination.parent, url, destination.name)`, resumed with Range and
    If-Range and retried on transient failures (see the module docstring), and are renamed to
    `destination` when complete. Raises a one-line `DataError` for an HTTP error, a transfer
    still cut after `ATTEMPTS` tries (the partial file is kept for the next run) or an empty
    file.
    """
    if destination.exists():
        return destination
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = Partial.in_folder(destination.parent, url, destination.name)
    report = ProgressLine(progress)
    done = retrying(lambda: _fetch_once(url, partial, destination.name, report, timeout))
    if done == 0:
        partial.discard()
        raise DataError(f"{url}: the server sent an empty file; the source may be broken")
    report(_size(destination.name, done, done), final=True)
    partial.path.replace(destination)
    partial.discard()
    return destination


def _fetch_once(url: str, partial: Partial, label: str, report: ProgressLine,
                timeout: float) -> int:
    """Return the size of the whole file once one try has brought all of it into `partial`.

    Raises `TransientError` when this try failed in a way worth another.
    """
    start, validator = partial.resumable()
    response = open_from(url, start, validator=validator, advice="pass another base URL",
                         timeout=timeout, user_agent=_SENTEVAL_AGENT)
    if response is None:  # 416: the partial file is not a prefix the server knows
        partial.discard()
        return _fetch_once(url, partial, label, report, timeout)  # from byte 0: no 416 then
    if response.status == 206 and not continues(response, start, validator):
        response.close()  # part of another version of the file: start over from byte 0
        partial.discard()
        return _fetch_once(url, partial, label, report, timeout)
    with response:
        if response.status != 206:  # the whole file: new, changed, or Range not supported
            start = 0
        total, done = expected_size(response, start), start
        try:
            if not start:
                partial.begin(validator_of(response))
            with open(partial.path, "ab") as out:
                for chunk in read_body(response, url, start):
                    out.write(chunk)
                    done += len(chunk)
                    report(_size(label, done, total))
        except OSError as exc:
            raise DataError(f"{partial.path}: cannot write ({exc.strerror}); free some space, "
                            "then run again") from None
    if total is not None and done < total:
        raise TransientError(f"{url}: transfer interrupted after {done} of {total} bytes",
                             "run again to resume")
    return done


def _size(label: str, done: int, total: int | None) -> str:
    return f"{label}: {done / 1e6:.1f}" + (f"/{total / 1e6:.1f}" if total else "") + " MB"
