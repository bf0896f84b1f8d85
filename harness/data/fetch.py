"""Resumable HTTP downloads for `harness data ...`, with the standard library only.

A download goes to `NAME.part` and is renamed when complete, so an existing `NAME` is always a
finished file. A rerun continues a partial file with an HTTP Range request, and starts over
when the server ignores Range. Every failure is a one-line `DataError` naming the URL and what
to do.
"""

from __future__ import annotations

import http.client
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from harness.errors import DataError

CHUNK = 1 << 16
"""Bytes read per call while streaming a response to disk."""


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


def open_from(url: str, start: int, *, advice: str, user_agent: str,
              timeout: float = 60.0) -> http.client.HTTPResponse | None:
    """The response for `url` from byte `start` (an HTTP Range request when `start` > 0), or
    None when the server answers 416 (it has no byte `start`). Raises a one-line `DataError`
    for other HTTP errors and unreachable hosts, ending with `advice`."""
    headers = {"User-Agent": user_agent}
    if start:
        headers["Range"] = f"bytes={start}-"
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                      timeout=timeout)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 416 and start:
            return None
        raise DataError(f"{url}: HTTP {exc.code} {exc.reason}; the file may have moved, "
                        f"{advice}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DataError(f"{url}: cannot connect ({reason}); check the network or {advice}, "
                        "then run again to resume") from None


def fetch(url: str, destination: Path, *, progress: bool = False, timeout: float = 60.0) -> Path:
    """Download `url` to `destination`, resuming `destination.part`; return `destination`.

    An existing `destination` is a finished download and is kept. A partial one is continued
    with an HTTP Range request; a server that ignores Range sends the whole file, which then
    replaces the partial one. Raises `DataError` for an HTTP error, a truncated transfer (the
    partial file is kept for the next attempt) or an empty file.
    """
    if destination.exists():
        return destination
    destination.parent.mkdir(parents=True, exist_ok=True)
    part = destination.with_name(destination.name + ".part")
    start = part.stat().st_size if part.exists() else 0
    report = ProgressLine(progress)
    response = open_from(url, start, advice="pass another base URL", timeout=timeout,
                         user_agent="v2s-harness (harness data senteval)")
    if response is None:  # the partial file is not a prefix the server knows
        part.unlink()
        return fetch(url, destination, progress=progress, timeout=timeout)
    with response:
        resumed = start and response.status == 206
        length = response.headers.get("Content-Length")
        total = int(length) + (start if resumed else 0) if length is not None else None
        done = start if resumed else 0
        try:
            with open(part, "ab" if resumed else "wb") as out:
                while chunk := response.read(CHUNK):
                    out.write(chunk)
                    done += len(chunk)
                    report(_size(destination.name, done, total))
        except (OSError, http.client.HTTPException) as exc:
            raise DataError(f"{url}: transfer interrupted after {done} bytes "
                            f"({type(exc).__name__}); run again to resume") from None
    if total is not None and done < total:
        raise DataError(f"{url}: transfer interrupted after {done} of {total} bytes; run again "
                        "to resume")
    if done == 0:
        part.unlink()
        raise DataError(f"{url}: the server sent an empty file; the source may be broken")
    report(_size(destination.name, done, total), final=True)
    part.replace(destination)
    return destination


def _size(label: str, done: int, total: int | None) -> str:
    return f"{label}: {done / 1e6:.1f}" + (f"/{total / 1e6:.1f}" if total else "") + " MB"
