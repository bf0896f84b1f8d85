"""`harness data newscrawl`: WMT News Crawl English, filtered as Vec2Sent's `get_data.sh` does.

The released Vec2Sent code (`data/get_data.sh`) downloads `news.YEAR.en.shuffled.gz` from the
WMT14 monolingual News Crawl directory and keeps `awk 'NF<15' | head -n N`. This module writes
the same bytes as `zcat news.YEAR.en.shuffled.gz | awk 'NF<15' | head -n N` while streaming:
the `.gz` is gunzipped as it arrives and the download stops as soon as N lines are kept, so
only a prefix of the compressed file is read (and checked, as with `zcat | head`). Fields are
counted as awk's default FS splits them (`harness.data.awk.field_count`): on runs of spaces and
tabs only (not on \\r, \\v, \\f or unicode spaces); lines are bytes, never decoded or altered.

Files in `--dir`:

- `newscrawl.en.YEAR.N` - the kept lines, every one newline-terminated (`.ltM` is appended
  to the name when the token bound M is not the paper's 15);
- `newscrawl.en.YEAR.N.sha256.json` - the manifest: url, year, max_tokens, lines, kept, the
  output's sha256 and the compressed bytes read; a run whose manifest matches is reused;
- `.downloads/<key>-news.YEAR.en.shuffled.gz.part` - the compressed bytes fetched so far, only
  while a download is unfinished (key: the first 16 hex digits of the sha256 of the URL, so
  another URL never continues it), and `<key>-news.YEAR.en.shuffled.gz.part.json`, the URL and
  the ETag (else Last-Modified) of the response they came from. A rerun of the same URL replays
  them and resumes with `Range` and `If-Range`; a server whose file changed sends the new file
  whole, and the download starts over (`harness.data.fetch`).

Transient failures (the host unreachable, timeouts, HTTP 5xx and 429, a transfer cut short) are
tried again after about 1, 2 and 4 s before they are reported; HTTP 404 and the other 4xx are
reported at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from harness.data.awk import field_count
from harness.data.fetch import (
    Partial,
    ProgressLine,
    TransientError,
    continues,
    expected_size,
    open_from,
    read_body,
    retrying,
    validator_of,
)
from harness.errors import DataError

# Where Vec2Sent's data/get_data.sh downloads from (`wget -c`), and the years that folder holds.
OFFICIAL_URL = "http://www.statmt.org/wmt14/training-monolingual-news-crawl/news.{year}.en.shuffled.gz"
OFFICIAL_YEARS = range(2007, 2014)
PAPER_MAX_TOKENS = 15  # the paper's `awk 'NF<15'`
CHUNK = 1 << 16  # compressed bytes read at a time
USER_AGENT = "v2s-harness (harness data newscrawl)"
TIMEOUT = 60.0
_GZIP = 16 + zlib.MAX_WBITS  # zlib's window bits for a gzip header and trailer



@dataclass(frozen=True)
class NewsCrawlResult:
    """What `prepare_newscrawl` left: the output file and how it was made."""

    path: Path
    kept: int
    bytes_read: int
    sha256: str
    reused: bool


def newscrawl_url(year: int) -> str:
    """Return the official URL of News Crawl English for `year` (as in Vec2Sent's get_data.sh)."""
    if year not in OFFICIAL_YEARS:
        raise DataError(f"News Crawl {year}: the official WMT14 location has only "
                        f"{OFFICIAL_YEARS[0]}-{OFFICIAL_YEARS[-1]}; pass --url (newer years are at "
                        "https://data.statmt.org/news-crawl/en/)")
    return OFFICIAL_URL.format(year=year)


def newscrawl_name(year: int, lines: int, max_tokens: int = PAPER_MAX_TOKENS) -> str:
    """Return the output file's name: `newscrawl.en.YEAR.N`, plus `.ltM` for a bound M != 15."""
    suffix = "" if max_tokens == PAPER_MAX_TOKENS else f".lt{max_tokens}"
    return f"newscrawl.en.{year}.{lines}{suffix}"


def prepare_newscrawl(year: int, lines: int, directory: Path, *, url: str | None = None,
                      max_tokens: int = PAPER_MAX_TOKENS, progress: bool = True) -> NewsCrawlResult:
    """Return the result of writing the first `lines` lines with fewer than `max_tokens` tokens.

    The output `directory/newscrawl_name(...)` holds exactly what `zcat F | awk 'NF<M' | head -n
    N` prints for the `.gz` at `url` (default `newscrawl_url(year)`; http(s)://, file:// or a
    local path). It is written atomically with its manifest; an existing output whose manifest
    matches (url, year, max_tokens, lines, sha256) is reused without touching the network.

    A download keeps its compressed bytes in `directory/.downloads/<key>-<file>.part` (key:
    from the sha256 of the URL), with the response's validator beside it, until `lines` lines
    are kept; then both are removed, and only the output and manifest remain. A transfer cut
    short is retried (`harness.data.fetch.ATTEMPTS` tries in all); one still cut leaves the
    .part, which the next call replays and continues with a Range request carrying If-Range
    (from byte 0 when the server's file changed or it ignores Range; a .part without a recorded
    validator is not resumed). Raises a one-line `DataError` for HTTP and network errors,
    truncated or corrupt gzip data, a file with too few lines and a directory that cannot be
    written; no output is left then.
    """
    if lines < 1 or max_tokens < 1:
        raise DataError(f"News Crawl: --lines ({lines}) and --max-tokens ({max_tokens}) must be "
                        "at least 1")
    source = url or newscrawl_url(year)
    output = directory / newscrawl_name(year, lines, max_tokens)
    manifest = output.with_name(output.name + ".sha256.json")
    settings = {"url": source, "year": year, "max_tokens": max_tokens, "lines": lines}
    reused = _reuse(output, manifest, settings)
    if reused is not None:
        return reused
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"{directory}: cannot create the directory ({exc.strerror}); pass "
                        "another --dir") from None
    for stale in directory.glob(f".{output.name}.????????.tmp"):  # left by a killed run
        stale.unlink(missing_ok=True)
    name = Path(urllib.parse.urlsplit(source).path).name or "newscrawl.gz"
    report = _Progress(name, lines, progress)
    local = _local_path(source)
    partial = Partial.in_folder(directory / ".downloads", source, name)
    try:
        with _atomic(output) as file:
            kept = _Filter(lines, max_tokens, file)
            if local is None:
                read = _download(source, partial, kept, report)
            else:
                read = _pump(_file_chunks(local, "check --url"), kept, 0, str(local), None, report)
                if not kept.done:
                    _finish(kept, str(local), read, None)
        digest = kept.digest.hexdigest()
        record = {**settings, "kept": lines, "sha256": digest, "bytes_read": read,
                  "file": output.name}
        with _atomic(manifest) as file:
            file.write((json.dumps(record, indent=2, sort_keys=True) + "\n").encode("utf-8"))
        partial.discard()
    finally:
        with contextlib.suppress(OSError):  # kept only while it holds a .part (or another's)
            partial.path.parent.rmdir()
    report(read, lines, final=True)
    return NewsCrawlResult(output, lines, read, digest, reused=False)


# --- the filter: gunzip, split into awk records, keep short ones ------------------------------


class _Filter:
    """Keeps the first `wanted` records with fewer than `max_tokens` fields, written to `file`."""

    def __init__(self, wanted: int, max_tokens: int, file: IO[bytes]) -> None:
        self.wanted, self.max_tokens, self.file = wanted, max_tokens, file
        self.reset()

    def reset(self) -> None:
        """Forget everything fed and written so far (a download that restarts from byte 0)."""
        self.decoder, self.started, self.rest, self.kept = zlib.decompressobj(_GZIP), False, b"", 0
        self.digest = hashlib.sha256()
        self.file.seek(0)
        self.file.truncate()

    @property
    def complete(self) -> bool:
        """Return True when the stream so far ends exactly at the end of a gzip member."""
        return self.started and self.decoder.eof

    @property
    def done(self) -> bool:
        """Return True once `wanted` records are kept."""
        return self.kept >= self.wanted

    def feed(self, data: bytes) -> None:
        """Take compressed `data`; raises zlib.error for corrupt data."""
        pieces = []
        while data:  # as zcat does, one gzip member after another
            self.started = True
            pieces.append(self.decoder.decompress(data))
            data = self.decoder.unused_data if self.decoder.eof else b""
            if data:
                self.decoder = zlib.decompressobj(_GZIP)
        text = b"".join(pieces)
        if text and not self.done:
            records = (self.rest + text).split(b"\n")
            self.rest = records.pop()  # the record continues in the next piece
            self._keep(records)

    def end(self) -> bool:
        """Close the stream; return False when it stopped inside a gzip member (truncated)."""
        if not self.complete:
            return False
        if self.rest and not self.done:  # awk reads a last line without a newline too
            self._keep([self.rest])
        self.rest = b""
        return True

    def _keep(self, records: list[bytes]) -> None:
        """Write those of `records` with fewer than `max_tokens` fields, up to `wanted` in all.

        Fields are awk's under the default FS (`harness.data.awk.field_count`), so a record is
        kept exactly when `awk 'NF<max_tokens'` prints it, blank ones (NF = 0) included.
        """
        kept = []
        for record in records:
            if field_count(record, self.max_tokens) < self.max_tokens:  # awk's NF, capped
                kept.append(record)
                if self.kept + len(kept) == self.wanted:
                    break
        if kept:
            self.kept += len(kept)
            data = b"\n".join(kept) + b"\n"
            self.file.write(data)
            self.digest.update(data)


# --- sources: a local file, or a resumable download -------------------------------------------


def _local_path(source: str) -> Path | None:
    """Return the file a file:// URL or plain path names, or None for http(s)."""
    parts = urllib.parse.urlsplit(source)
    if parts.scheme in ("http", "https"):
        return None
    if parts.scheme == "file":
        return Path(urllib.request.url2pathname(parts.path))
    if len(parts.scheme) <= 1:  # no scheme, or a Windows drive letter
        return Path(source)
    raise DataError(f"{source}: unsupported URL scheme {parts.scheme!r}; pass an http(s):// or "
                    "file:// URL or a local path")


def _download(url: str, partial: Partial, kept: _Filter, report: _Progress) -> int:
    """Feed `url` until enough lines are kept; return the compressed bytes read.

    A resumable partial download is replayed first (it may hold enough lines, and then the
    network is not used); the transfer then continues from its end, tried again on transient
    failures (`harness.data.fetch.retrying`).
    """
    held, validator = partial.resumable()
    transfer = _Transfer(url, partial, kept, report, validator)
    if held:
        transfer.read = _pump(_file_chunks(partial.path, "delete it"), kept, 0, url, partial,
                              report)
    if not kept.done:
        retrying(transfer.attempt)
    return transfer.read


class _Transfer:
    """The HTTP part of a download: `read` counts the compressed bytes fed to `kept` so far,
    all of them also in `partial`, so that a retry or a rerun continues from there."""

    def __init__(self, url: str, partial: Partial, kept: _Filter, report: _Progress,
                 validator: str | None) -> None:
        self.url, self.partial, self.kept, self.report = url, partial, kept, report
        self.validator, self.read = validator, 0

    def attempt(self) -> None:
        """Continue the download until enough lines are kept or the file ends.

        Raises `TransientError` for a failure worth another try, `DataError` for the others.
        """
        start = self.read if self.validator is not None else 0  # else: nothing to resume
        response = open_from(self.url, start, validator=self.validator, user_agent=USER_AGENT,
                             advice="pass --url with a mirror", timeout=TIMEOUT)
        if response is None:  # 416: the .part already holds the whole file the server has
            self._at_end()
            return
        if response.status == 206 and not continues(response, start, self.validator):
            response.close()  # part of another version of the file: start over from byte 0
            self.kept.reset()
            self.read, self.validator = 0, None
            self.partial.discard()
            self.attempt()
            return
        with response:
            if response.status != 206:  # the whole file from byte 0: new, changed, or no Range
                self.kept.reset()
                self.read, self.validator = 0, validator_of(response)
                self.partial.begin(self.validator)  # an OSError: reported by _atomic, same --dir
            total = expected_size(response, self.read)
            with open(self.partial.path, "ab") as out:
                _pump(self._body(response, out), self.kept, self.read, self.url, self.partial,
                      self.report)
        if not self.kept.done:
            if total is not None and self.read < total:
                raise TransientError(f"{self.url}: transfer interrupted after {self.read} of "
                                     f"{total} bytes", "run again to resume")
            _finish(self.kept, self.url, self.read, self.partial)

    def _body(self, response: http.client.HTTPResponse, out: IO[bytes]) -> Iterator[bytes]:
        """Yield the body of `response` in pieces, each first appended to `out` and counted."""
        for chunk in read_body(response, self.url, self.read, CHUNK):
            out.write(chunk)
            self.read += len(chunk)
            yield chunk

    def _at_end(self) -> None:
        """Finish a stream whose server has no byte past those held (it answered 416)."""
        if not self.kept.complete:
            self.partial.discard()  # resuming cannot help: the server has no more bytes
            raise DataError(f"{self.url}: the server's file ends inside a gzip member after "
                            f"{self.read} bytes: it is truncated there; pass --url with a mirror")
        _finish(self.kept, self.url, self.read, self.partial)


def _file_chunks(path: Path, advice: str) -> Iterator[bytes]:
    """Yield the bytes of `path` in pieces; raise DataError with `advice` when it cannot."""
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                yield chunk
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror}); {advice}") from None


def _pump(chunks: Iterator[bytes], kept: _Filter, read: int, source: str,
          part: Partial | None, report: _Progress) -> int:
    """Feed `chunks` until enough lines are kept or they run out; return the bytes read so far.

    Corrupt gzip data raises DataError naming `source`; a `part` holding it is removed, as it
    cannot serve to resume.
    """
    for chunk in chunks:
        read += len(chunk)
        try:
            kept.feed(chunk)
        except zlib.error as exc:
            if part is None:
                raise DataError(f"{source}: corrupt .gz within its first {read} bytes ({exc}); "
                                "download it again") from None
            part.discard()
            raise DataError(f"{source}: corrupt .gz within its first {read} bytes ({exc}); the "
                            "partial download was removed: run again, or pass --url with a "
                            "mirror") from None
        report(read, kept.kept)
        if kept.done:
            break
    return read


def _finish(kept: _Filter, source: str, read: int, part: Partial | None) -> None:
    """End a stream that ran out before enough lines were kept; raise unless they now are."""
    if not kept.end():
        if read == 0:
            raise DataError(f"{source}: the file is empty; check --url")
        where = (f"{source}: truncated .gz: it ends inside a gzip member after {read} bytes "
                 f"({kept.kept} of {kept.wanted} lines kept)")
        if part is None:
            raise DataError(f"{where}; the download that made it was cut: resume it (wget -c) "
                            "or leave out --url, then run again")
        raise DataError(f"{where}: the download was cut; run again to resume")
    if not kept.done:
        if part is not None:
            part.discard()  # the whole file is read; nothing left to resume
        raise DataError(f"{source}: has only {kept.kept} lines with fewer than "
                        f"{kept.max_tokens} tokens, {kept.wanted} requested; ask for fewer "
                        "--lines")


def _reuse(output: Path, manifest: Path, settings: dict[str, Any]) -> NewsCrawlResult | None:
    """Return the existing output when its manifest matches `settings` and its sha256, else None."""
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (not isinstance(recorded, dict) or not output.is_file()
            or any(recorded.get(key) != value for key, value in settings.items())
            or recorded.get("kept") != settings["lines"]):
        return None
    digest = hashlib.sha256()
    for block in _file_chunks(output, "delete it and run again"):
        digest.update(block)
    if digest.hexdigest() != recorded.get("sha256"):
        return None
    return NewsCrawlResult(output, settings["lines"], int(recorded.get("bytes_read", 0)),
                           digest.hexdigest(), reused=True)


@contextlib.contextmanager
def _atomic(path: Path) -> Iterator[IO[bytes]]:
    """Yield a temporary file that replaces `path` when the block succeeds; else it is removed."""
    try:
        handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise DataError(f"{path.parent}: cannot write there ({exc.strerror}); pass another "
                        "--dir") from None
    try:
        with os.fdopen(handle, "w+b") as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(name, path)
    except OSError as exc:  # reads are reported where they happen: this is a write (or .part)
        raise DataError(f"{path}: cannot write ({exc.strerror}); free some space or pass "
                        "another --dir") from None
    finally:
        # Whatever stopped the run (an error, Ctrl-C), no half-written file stays behind.
        Path(name).unlink(missing_ok=True)


class _Progress:
    """Reports compressed bytes read and lines kept (`harness.data.fetch.ProgressLine`)."""

    def __init__(self, label: str, wanted: int, enabled: bool) -> None:
        self.label, self.wanted, self.line = label, wanted, ProgressLine(enabled)

    def __call__(self, read: int, kept: int, final: bool = False) -> None:
        self.line(f"{self.label}: {read / 1e6:.1f} MB read, {kept}/{self.wanted} lines kept",
                  final)
