"""A local HTTP file server for the download tests: Range support that can be turned off,
transfers cut short, and a log of what was asked."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FileServer(ThreadingHTTPServer):
    """Serves `files` (URL path -> bytes) on 127.0.0.1. `log` holds each request's path and
    Range header, `headers` all of each request's headers; with `ranges` False the server
    ignores Range (answers 200 with everything); `cut[path] = n` drops the connection after n
    bytes of the next response for that path; `fail[path]` lists statuses answered, one per
    request, before that path is served again. Each file has a strong ETag made from its bytes
    (none with `etags` False), and a Range request whose If-Range is not the current ETag gets
    the whole file (RFC 9110 13.1.5), unless `if_range` is False (a server, or a proxy, that
    honours Range but ignores If-Range)."""

    def __init__(self, files: dict[str, bytes]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.files = files
        self.ranges = True
        self.etags = True
        self.if_range = True
        self.cut: dict[str, int] = {}
        self.fail: dict[str, list[int]] = {}
        self.log: list[tuple[str, str | None]] = []
        self.headers: list[dict[str, str]] = []

    def url(self, path: str) -> str:
        """The address of `path` on this server."""
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def asked(self) -> list[str | None]:
        """The Range header of each request, in order (None: none)."""
        return [requested for _, requested in self.log]


class _Handler(BaseHTTPRequestHandler):
    server: FileServer

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        requested = self.headers.get("Range")
        self.server.log.append((self.path, requested))
        self.server.headers.append(dict(self.headers.items()))
        if self.server.fail.get(self.path):
            self.send_error(self.server.fail[self.path].pop(0))
            return
        data = self.server.files.get(self.path)
        if data is None:
            self.send_error(404, "Not Found")
            return
        etag = f'"{hashlib.sha256(data).hexdigest()[:16]}"' if self.server.etags else None
        if_range = self.headers.get("If-Range")
        start = 0
        honours = if_range is None or if_range == etag or not self.server.if_range
        if requested and self.server.ranges and honours:
            start = int(re.fullmatch(r"bytes=(\d+)-", requested).group(1))
            if start >= len(data):
                self.send_error(416, "Range Not Satisfiable")
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        if etag is not None:
            self.send_header("ETag", etag)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.path in self.server.cut:  # this response only: the connection drops
            body = body[:self.server.cut.pop(self.path)]
            self.close_connection = True
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading (it had what it needed)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serving(files: dict[str, bytes]) -> Iterator[FileServer]:
    """A `FileServer` for `files`, running in a thread until the block ends."""
    httpd = FileServer(files)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
