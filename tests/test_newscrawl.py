"""`harness data newscrawl` offline: a News Crawl-like .gz built here, read from a file:// URL and
from a local HTTP server (with and without Range support, cut transfers, corrupt data)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.data import fetch, newscrawl
from harness.data.fetch import Partial
from harness.data.newscrawl import newscrawl_name, newscrawl_url, prepare_newscrawl
from harness.errors import DataError, HarnessError
from tests.range_server import FileServer, serving

HAVE_AWK = all(shutil.which(tool) for tool in ("zcat", "awk", "head", "sh"))
FILE = "news.2007.en.shuffled.gz"
WORDS = ["the", "minister", "said", "on", "Tuesday", "“quoted”", "—", "…", "café", "naïve",
         "non\xa0breaking", "thin\u2009space", "ideographic\u3000space", "€12", "U.S.", "'s",
         ",", ".", "(AP)", "¿qué?"]


def _text(seed: int = 7, count: int = 5000) -> bytes:
    """Return News Crawl-like lines: 0..30 tokens, blank-only lines, odd bytes, no final newline."""
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.04:
            lines.append(b"")
        elif roll < 0.08:
            lines.append(rng.choice([b" ", b"   ", b"\t", b" \t ", b"\t\t"]))
        else:
            tokens = [rng.choice(WORDS) + str(rng.randint(0, 99999)) for _ in range(rng.randint(1, 30))]
            seps = [rng.choice([" ", " ", " ", "  ", "\t", " \t"]) for _ in tokens]
            body = "".join(sep + token for sep, token in zip(seps, tokens))
            line = body[rng.random() < 0.7:] + rng.choice(["", "", " ", "\t "])
            lines.append(line.encode("utf-8"))
    lines[100] = b"latin-1 caf\xe9 \xff bytes"  # not UTF-8: kept byte for byte
    lines.append("the last line has no newline ¶".encode())
    return b"\n".join(lines)


def _gzip(data: bytes, cut: float = 0.3) -> bytes:
    """Return `data` as two gzip members split mid-line, as `cat a.gz b.gz` would make."""
    at = int(len(data) * cut)
    return gzip.compress(data[:at], mtime=0) + gzip.compress(data[at:], mtime=0)


TEXT = _text()
GZ = _gzip(TEXT)


def _python(data: bytes, lines: int, max_tokens: int = 15) -> bytes:
    """Return `awk 'NF<M' | head -n N` computed independently: awk's records and default FS."""
    records = data.split(b"\n")
    if records[-1] == b"":
        records.pop()
    kept = [r for r in records if len([f for f in re.split(rb"[ \t]+", r) if f]) < max_tokens]
    return b"".join(record + b"\n" for record in kept[:lines])


def _awk(path: Path, lines: int, max_tokens: int = 15) -> bytes:
    """Return what `zcat F | awk 'NF<M' | head -n N` prints."""
    command = f"zcat '{path}' | awk 'NF<{max_tokens}' | head -n {lines}"
    return subprocess.run(["sh", "-c", command], capture_output=True, check=True,
                          env={**os.environ, "LC_ALL": "C"}).stdout


def _expected(path: Path, lines: int, max_tokens: int = 15) -> bytes:
    """Return the reference output: the shell pipeline where it exists, else the Python one."""
    return _awk(path, lines, max_tokens) if HAVE_AWK else _python(TEXT, lines, max_tokens)


ALL = _python(TEXT, 10**9).count(b"\n")  # every kept line of the fixture


PATH = f"/{FILE}"


@pytest.fixture()
def server() -> Iterator[FileServer]:
    with serving({PATH: GZ}) as httpd:
        yield httpd


@pytest.fixture()
def gz(tmp_path: Path) -> Path:
    path = tmp_path / "source" / FILE
    path.parent.mkdir()
    path.write_bytes(GZ)
    return path


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    # Many reads per file, so that stopping early and resuming mid-stream are exercised.
    monkeypatch.setattr(newscrawl, "CHUNK", 4096)


@pytest.fixture(autouse=True)
def naps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The back-off waits asked for; no test sleeps for real."""
    waits: list[float] = []
    monkeypatch.setattr(fetch, "sleep", waits.append)
    return waits


@pytest.fixture()
def one_try(monkeypatch: pytest.MonkeyPatch) -> None:
    """No retries: a cut transfer fails at once and leaves its .part (as all tries failing)."""
    monkeypatch.setattr(fetch, "ATTEMPTS", 1)


def _part(directory: Path, url: str) -> Path:
    """Return where a download of `url` into `directory` keeps its compressed bytes."""
    return Partial.in_folder(directory / ".downloads", url, FILE).path


def _etag(data: bytes) -> str:
    """Return the ETag the test server gives `data`."""
    return f'"{hashlib.sha256(data).hexdigest()[:16]}"'


def _outputs(directory: Path) -> list[str]:
    """Return the names in `directory`, hidden temporary files included, but .downloads."""
    found = directory.iterdir() if directory.is_dir() else ()
    return sorted(p.name for p in found if p.name != ".downloads")


def _one_line_error(call, *args, **kwargs) -> str:  # noqa: ANN001 - any callable
    with pytest.raises(DataError) as caught:
        call(*args, **kwargs)
    message = str(caught.value)  # a HarnessError: the CLI prints this line and exits with 2
    assert isinstance(caught.value, HarnessError) and message and "\n" not in message
    return message


# --- the filter ---------------------------------------------------------------------------------


def test_fixture_covers_what_it_should() -> None:
    assert GZ.count(b"\x1f\x8b\x08") >= 2 and not TEXT.endswith(b"\n")
    counts = {len([f for f in re.split(rb"[ \t]+", r) if f]) for r in TEXT.split(b"\n")}
    assert {0, 1, 14, 15, 30} <= counts
    assert 1000 < ALL < TEXT.count(b"\n")


@pytest.mark.skipif(not HAVE_AWK, reason="zcat, awk, head or sh is not on PATH")
def test_python_reference_agrees_with_the_shell_pipeline(gz: Path) -> None:
    assert _awk(gz, 10**9) == _python(TEXT, 10**9)
    assert _awk(gz, 10**9, 5) == _python(TEXT, 10**9, 5)


@pytest.mark.parametrize("lines", [1, 700, ALL])
def test_file_url_gives_the_pipelines_bytes(gz: Path, tmp_path: Path, lines: int) -> None:
    result = prepare_newscrawl(2007, lines, tmp_path / "out", url=gz.as_uri(), progress=False)
    expected = _expected(gz, lines)
    assert result.path == tmp_path / "out" / f"newscrawl.en.2007.{lines}"
    assert result.path.read_bytes() == expected and expected.count(b"\n") == lines
    assert result.sha256 == hashlib.sha256(expected).hexdigest()
    assert (result.kept, result.reused) == (lines, False)
    manifest = json.loads(result.path.with_name(result.path.name + ".sha256.json").read_text())
    assert manifest == {"url": gz.as_uri(), "year": 2007, "max_tokens": 15, "lines": lines,
                        "kept": lines, "sha256": result.sha256, "bytes_read": result.bytes_read,
                        "file": result.path.name}
    assert _outputs(tmp_path / "out") == sorted([result.path.name, result.path.name +
                                                 ".sha256.json"])


def test_plain_path_and_another_token_bound(gz: Path, tmp_path: Path) -> None:
    result = prepare_newscrawl(2008, 300, tmp_path, url=str(gz), max_tokens=5, progress=False)
    assert result.path.name == newscrawl_name(2008, 300, 5) == "newscrawl.en.2008.300.lt5"
    assert result.path.read_bytes() == _expected(gz, 300, 5)


def test_only_spaces_and_tabs_separate_fields(tmp_path: Path) -> None:
    # awk's default FS: \r, \v, \f and unicode spaces are part of a field; \n ends the record.
    fields = [b"a\rb", b"a\x0bb", b"a\x0cb", "a\xa0b".encode(), "a\u2003b".encode()]
    fourteen = b" \t ".join(fields + [b"w"] * 9)
    fifteen = fourteen + b"\tlast"
    source = tmp_path / "odd.gz"
    source.write_bytes(gzip.compress(b"\n".join([fifteen, b" \t", fourteen, fifteen, b"tail"])))
    result = prepare_newscrawl(2007, 3, tmp_path / "out", url=str(source), progress=False)
    assert result.path.read_bytes() == b" \t\n" + fourteen + b"\ntail\n"


# --- over HTTP ----------------------------------------------------------------------------------


def test_http_gives_the_same_bytes_and_stops_early(server: FileServer, gz: Path,
                                                   tmp_path: Path) -> None:
    result = prepare_newscrawl(2007, 700, tmp_path, url=server.url(PATH), progress=False)
    assert result.path.read_bytes() == _expected(gz, 700)
    assert result.bytes_read < len(GZ) // 2  # the download stopped with its lines
    assert server.asked() == [None]
    assert not (tmp_path / ".downloads").exists()  # the .part is removed once done
    whole = prepare_newscrawl(2007, ALL, tmp_path, url=server.url(PATH), progress=False)
    assert whole.path.read_bytes() == _expected(gz, ALL) and whole.bytes_read == len(GZ)


def test_a_cut_transfer_is_retried_with_range_and_if_range(server: FileServer, gz: Path,
                                                         tmp_path: Path, naps: list[float]) -> None:
    cut, out = len(GZ) // 2, tmp_path / "out"
    server.cut[PATH] = cut
    result = prepare_newscrawl(2007, ALL, out, url=server.url(PATH), progress=False)
    assert server.asked() == [None, f"bytes={cut}-"]
    assert server.headers[1]["If-Range"] == _etag(GZ)  # the validator of the first response
    assert len(naps) == 1 and 1 <= naps[0] <= 1.25  # one back-off, not slept for real
    expected = _expected(gz, ALL)
    assert result.path.read_bytes() == expected and result.bytes_read == len(GZ)
    assert result.sha256 == hashlib.sha256(expected).hexdigest()
    assert not (out / ".downloads").exists()


def test_a_cut_transfer_resumes_on_the_next_run(server: FileServer, gz: Path, tmp_path: Path,
                                                one_try: None) -> None:
    cut, out, url = len(GZ) // 2, tmp_path / "out", server.url(PATH)
    server.cut[PATH] = cut
    message = _one_line_error(prepare_newscrawl, 2007, ALL, out, url=url, progress=False)
    assert url in message and "(1 tries); run again to resume" in message
    assert _outputs(out) == []
    part = _part(out, url)
    assert part.stat().st_size == cut
    record = json.loads(part.with_name(part.name + ".json").read_text())
    assert record == {"url": url, "validator": _etag(GZ)}
    result = prepare_newscrawl(2007, ALL, out, url=url, progress=False)
    assert server.asked() == [None, f"bytes={cut}-"]
    assert server.headers[1]["If-Range"] == _etag(GZ)
    assert result.path.read_bytes() == _expected(gz, ALL) and result.bytes_read == len(GZ)
    assert not (out / ".downloads").exists()


def _cut_then_changed(server: FileServer, tmp_path: Path) -> bytes:
    """Leave half the file as a .part (a download cut there), then change the file on the
    server; return the new file's text."""
    server.cut[PATH] = len(GZ) // 2
    _one_line_error(prepare_newscrawl, 2007, ALL, tmp_path, url=server.url(PATH), progress=False)
    new_text = _text(seed=8)
    server.files[PATH] = _gzip(new_text, cut=0.6)
    return new_text


def test_a_file_changed_upstream_is_downloaded_again_not_spliced(server: FileServer,
                                                                 tmp_path: Path,
                                                                 one_try: None) -> None:
    new_text = _cut_then_changed(server, tmp_path)  # a new ETag: If-Range fails
    new_gz = server.files[PATH]
    lines = 2000  # more than the half .part holds, fewer than either file has
    assert _python(TEXT[:len(TEXT) // 2], 10**9).count(b"\n") < lines
    result = prepare_newscrawl(2007, lines, tmp_path, url=server.url(PATH), progress=False)
    assert server.asked() == [None, f"bytes={len(GZ) // 2}-"]
    assert server.headers[1]["If-Range"] == _etag(GZ)  # answered 200 with the new file
    assert result.path.read_bytes() == _python(new_text, lines) != _python(TEXT, lines)
    assert result.bytes_read <= len(new_gz)


def test_a_server_ignoring_if_range_does_not_splice_a_changed_file(server: FileServer,
                                                                  tmp_path: Path,
                                                                  one_try: None) -> None:
    new_text = _cut_then_changed(server, tmp_path)
    server.if_range = False  # it answers 206 with the new file's tail
    result = prepare_newscrawl(2007, 2000, tmp_path, url=server.url(PATH), progress=False)
    # The 206 carried another ETag: refused, and the file fetched again from byte 0.
    assert server.asked() == [None, f"bytes={len(GZ) // 2}-", None]
    assert result.path.read_bytes() == _python(new_text, 2000)


def test_a_part_without_a_validator_is_not_resumed(server: FileServer, gz: Path, tmp_path: Path,
                                                   one_try: None) -> None:
    server.etags, server.cut[PATH] = False, len(GZ) // 2
    _one_line_error(prepare_newscrawl, 2007, ALL, tmp_path, url=server.url(PATH), progress=False)
    part = _part(tmp_path, server.url(PATH))
    assert part.stat().st_size == len(GZ) // 2 and not part.with_name(part.name + ".json").exists()
    result = prepare_newscrawl(2007, ALL, tmp_path, url=server.url(PATH), progress=False)
    assert server.asked() == [None, None]  # started over: nothing proved the bytes were this file's
    assert result.path.read_bytes() == _expected(gz, ALL) and result.bytes_read == len(GZ)


def test_two_urls_with_one_file_name_keep_separate_parts(tmp_path: Path, one_try: None) -> None:
    other_text = _text(seed=9)
    other = _gzip(other_text)
    files = {f"/a/{FILE}": GZ, f"/b/{FILE}": other}
    with serving(files) as httpd:
        for path, data in files.items():
            httpd.cut[path] = len(data) // 2
            _one_line_error(prepare_newscrawl, 2007, ALL, tmp_path, url=httpd.url(path),
                            progress=False)
        parts = [_part(tmp_path, httpd.url(path)) for path in files]
        assert parts[0] != parts[1] and [p.stat().st_size for p in parts] == [
            len(GZ) // 2, len(other) // 2]
        first = prepare_newscrawl(2007, 700, tmp_path, url=httpd.url(f"/a/{FILE}"),
                                  progress=False)
        assert first.path.read_bytes() == _python(TEXT, 700)
        assert not parts[0].exists() and parts[1].exists()  # the other download is left alone
        second = prepare_newscrawl(2007, 700, tmp_path, url=httpd.url(f"/b/{FILE}"),
                                   progress=False)
        assert second.path.read_bytes() == _python(other_text, 700)
        assert len(httpd.log) == 2  # both made from their own .part alone
    assert not (tmp_path / ".downloads").exists()


@pytest.mark.parametrize("status", [503, 500, 429])
def test_a_transient_http_error_is_retried_with_back_off(server: FileServer, gz: Path,
                                                         tmp_path: Path, naps: list[float],
                                                         status: int) -> None:
    server.fail[PATH] = [status, status, status]
    result = prepare_newscrawl(2007, 700, tmp_path, url=server.url(PATH), progress=False)
    assert result.path.read_bytes() == _expected(gz, 700)
    assert len(server.log) == 4 and server.asked() == [None] * 4
    assert len(naps) == 3 and all(base <= n <= base * 1.25  # 1, 2, 4 s, jittered by <= 25%
                                  for base, n in zip([1, 2, 4], naps))


def test_a_transient_error_on_every_try_is_one_line(server: FileServer, tmp_path: Path,
                                                    naps: list[float]) -> None:
    server.fail[PATH] = [503] * 4
    message = _one_line_error(prepare_newscrawl, 2007, 700, tmp_path, url=server.url(PATH),
                              progress=False)
    assert server.url(PATH) in message and "HTTP 503" in message and "(4 tries)" in message
    assert "--url" in message and len(server.log) == 4 and len(naps) == 3


@pytest.mark.parametrize("status", [404, 403, 410])
def test_a_permanent_http_error_is_not_retried(server: FileServer, tmp_path: Path,
                                               naps: list[float], status: int) -> None:
    server.fail[PATH] = [status]
    message = _one_line_error(prepare_newscrawl, 2007, 700, tmp_path, url=server.url(PATH),
                              progress=False)
    assert f"HTTP {status}" in message and "--url" in message
    assert len(server.log) == 1 and naps == []


def test_a_killed_run_leaves_the_part_and_no_output(server: FileServer, gz: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / f".{newscrawl_name(2007, ALL)}.abcd1234.tmp"
    stale.write_bytes(b"from a run killed before it could clean up\n")

    def interrupt(self: object, read: int, kept: int, final: bool = False) -> None:
        if read > len(GZ) // 2:
            raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(newscrawl._Progress, "__call__", interrupt)
        with pytest.raises(KeyboardInterrupt):
            prepare_newscrawl(2007, ALL, tmp_path, url=server.url(PATH), progress=False)
    size = _part(tmp_path, server.url(PATH)).stat().st_size
    assert _outputs(tmp_path) == ["source"] and size > len(GZ) // 2
    result = prepare_newscrawl(2007, ALL, tmp_path, url=server.url(PATH), progress=False)
    assert server.asked() == [None, f"bytes={size}-"]
    assert result.path.read_bytes() == _expected(gz, ALL)
    assert _outputs(tmp_path) == sorted([result.path.name, result.path.name + ".sha256.json",
                                         "source"])


def test_a_server_without_range_support_restarts_from_zero(server: FileServer, gz: Path,
                                                           tmp_path: Path) -> None:
    server.ranges, server.cut[PATH] = False, len(GZ) // 3
    result = prepare_newscrawl(2007, ALL, tmp_path, url=server.url(PATH), progress=False)
    assert server.asked() == [None, f"bytes={len(GZ) // 3}-"]  # asked; got the whole file
    assert result.path.read_bytes() == _expected(gz, ALL) and result.bytes_read == len(GZ)


def test_a_part_with_enough_lines_needs_no_network(server: FileServer, gz: Path,
                                                   tmp_path: Path, one_try: None) -> None:
    server.cut[PATH] = len(GZ) // 2
    _one_line_error(prepare_newscrawl, 2007, ALL, tmp_path, url=server.url(PATH), progress=False)
    result = prepare_newscrawl(2007, 50, tmp_path, url=server.url(PATH), progress=False)
    assert len(server.log) == 1 and result.path.read_bytes() == _expected(gz, 50)


def test_a_matching_manifest_is_reused_without_the_network(server: FileServer,
                                                           tmp_path: Path) -> None:
    first = prepare_newscrawl(2007, 400, tmp_path, url=server.url(PATH), progress=False)
    again = prepare_newscrawl(2007, 400, tmp_path, url=server.url(PATH), progress=False)
    assert len(server.log) == 1
    assert again == newscrawl.NewsCrawlResult(first.path, 400, first.bytes_read, first.sha256,
                                              reused=True)
    first.path.write_bytes(b"edited\n")  # no longer what the manifest says: made again
    remade = prepare_newscrawl(2007, 400, tmp_path, url=server.url(PATH), progress=False)
    assert len(server.log) == 2 and not remade.reused and remade.sha256 == first.sha256


# --- errors -------------------------------------------------------------------------------------


def test_a_truncated_gz_is_one_line_and_leaves_no_output(tmp_path: Path) -> None:
    half = tmp_path / "half.gz"
    half.write_bytes(GZ[:len(GZ) // 2])
    message = _one_line_error(prepare_newscrawl, 2007, ALL, tmp_path / "out", url=str(half),
                              progress=False)
    assert str(half) in message and "truncated" in message and "cut" in message
    assert _outputs(tmp_path / "out") == []
    with serving({PATH: GZ[:len(GZ) // 2]}) as httpd:
        message = _one_line_error(prepare_newscrawl, 2007, ALL, tmp_path / "web",
                                  url=httpd.url(PATH), progress=False)
        assert "the download was cut; run again to resume" in message
        # The server has no more bytes (416): resuming cannot help, and the message says so.
        message = _one_line_error(prepare_newscrawl, 2007, ALL, tmp_path / "web",
                                  url=httpd.url(PATH), progress=False)
        assert httpd.asked()[-1] == f"bytes={len(GZ) // 2}-" and "--url" in message
    assert _outputs(tmp_path / "web") == []


def test_a_corrupt_gz_is_one_line_and_leaves_no_output(tmp_path: Path) -> None:
    middle = len(GZ) // 2
    corrupt = GZ[:middle] + bytes(b ^ 0x5A for b in GZ[middle:middle + 64]) + GZ[middle + 64:]
    path = tmp_path / "corrupt.gz"
    path.write_bytes(corrupt)
    message = _one_line_error(prepare_newscrawl, 2007, 10**6, tmp_path / "out", url=str(path),
                              progress=False)
    assert str(path) in message and "corrupt" in message
    assert _outputs(tmp_path / "out") == []
    with serving({PATH: corrupt}) as httpd:
        message = _one_line_error(prepare_newscrawl, 2007, 10**6, tmp_path / "web",
                                  url=httpd.url(PATH), progress=False)
        assert httpd.url(PATH) in message and "corrupt" in message
    assert _outputs(tmp_path / "web") == [] and not (tmp_path / "web" / ".downloads").exists()


def test_too_few_lines_says_how_many_there_are(server: FileServer, gz: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    message = _one_line_error(prepare_newscrawl, 2007, ALL + 1, out, url=gz.as_uri(),
                              progress=False)
    assert f"has only {ALL} lines" in message
    message = _one_line_error(prepare_newscrawl, 2007, ALL + 1, out, url=server.url(PATH),
                              progress=False)
    assert f"has only {ALL} lines" in message and server.url(PATH) in message
    assert _outputs(out) == [] and not (out / ".downloads").exists()
    whole = Partial.in_folder(out / ".downloads", server.url(PATH), FILE)
    whole.begin(_etag(GZ))
    whole.path.write_bytes(GZ)  # a whole file, already downloaded
    message = _one_line_error(prepare_newscrawl, 2007, ALL + 1, out, url=server.url(PATH),
                              progress=False)
    assert server.asked()[-1] == f"bytes={len(GZ)}-" and f"has only {ALL} lines" in message


def test_http_errors_and_unreachable_hosts(server: FileServer, tmp_path: Path,
                                           naps: list[float]) -> None:
    missing = server.url(PATH).replace(FILE, "news.1999.en.shuffled.gz")
    message = _one_line_error(prepare_newscrawl, 2007, 10, tmp_path, url=missing,
                              progress=False)
    assert missing in message and "404" in message and "--url" in message
    closed = FileServer({})
    port = closed.server_address[1]
    closed.server_close()  # nothing listens there now
    url = f"http://127.0.0.1:{port}/{FILE}"
    message = _one_line_error(prepare_newscrawl, 2007, 10, tmp_path, url=url, progress=False)
    assert url in message and "cannot connect" in message and "--url" in message
    assert "(4 tries)" in message and len(naps) == 3  # retried, without sleeping
    assert _outputs(tmp_path) == []


def test_arguments_and_the_official_url(tmp_path: Path) -> None:
    assert newscrawl_url(2007) == ("http://www.statmt.org/wmt14/training-monolingual-news-crawl/"
                                   "news.2007.en.shuffled.gz")
    assert newscrawl_url(2008).endswith("/news.2008.en.shuffled.gz")
    assert "--url" in _one_line_error(newscrawl_url, 2021)
    _one_line_error(prepare_newscrawl, 2007, 0, tmp_path, progress=False)
    assert "scheme" in _one_line_error(prepare_newscrawl, 2007, 5, tmp_path, url="ftp://x/y.gz",
                                       progress=False)
    blocker = tmp_path / "a-file"  # a directory that cannot be made (whoever runs the tests)
    blocker.write_text("not a directory\n")
    message = _one_line_error(prepare_newscrawl, 2007, 10, blocker / "data", url=str(blocker),
                              progress=False)
    assert str(blocker / "data") in message and "--dir" in message


def test_progress_goes_to_stderr_unless_disabled(gz: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    prepare_newscrawl(2007, 20, tmp_path / "quiet", url=str(gz), progress=False)
    assert capsys.readouterr() == ("", "")
    prepare_newscrawl(2007, 20, tmp_path / "loud", url=str(gz))
    out, err = capsys.readouterr()
    assert out == "" and "MB read, 20/20 lines kept done" in err.splitlines()[-1]
    assert 1 <= len(err.splitlines()) <= 3



def test_the_command_writes_the_file_or_one_error_line_and_exit_2(gz: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from harness.cli import main

    out = tmp_path / "data"
    done = CliRunner().invoke(main, ["data", "newscrawl", "--year", "2007", "--lines", "700",
                                     "--dir", str(out), "--url", gz.as_uri(), "--quiet"])
    assert done.exit_code == 0, done.output
    written = out / newscrawl_name(2007, 700)
    assert written.read_bytes() == _expected(gz, 700)
    assert done.stdout.startswith(f"{written}: 700 lines, sha256 ")
    broken = tmp_path / FILE
    broken.write_bytes(GZ[:len(GZ) // 2])
    failed = CliRunner().invoke(main, ["data", "newscrawl", "--year", "2007", "--lines", "5000",
                                       "--dir", str(tmp_path / "other"), "--url", str(broken),
                                       "--quiet"])
    assert failed.exit_code == 2 and failed.stdout == ""
    assert failed.stderr.count("\n") == 1 and failed.stderr.startswith("error: ")
    assert _outputs(tmp_path / "other") == []
