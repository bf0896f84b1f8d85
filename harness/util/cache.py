"""Content-addressed artifact cache: one directory per (stage, key), written atomically.

An artifact is built in `<key>.partial/` and renamed to `<key>/` when complete, so a finished
artifact is never half-written. The partial directory survives a killed run: builders that can
resume (encoding, decoder training) continue from what it holds. A file lock per artifact lets
two runs share one cache without building the same thing twice.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

from harness.errors import CacheMiss, HarnessError

META_FILE = "meta.json"
log = logging.getLogger(__name__)


def default_root() -> Path:
    """Return `$HARNESS_CACHE`, else the user cache directory for v2s-harness."""
    env = os.environ.get("HARNESS_CACHE")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("v2s-harness"))


def artifact_key(stage: str, parts: Mapping[str, Any]) -> str:
    """Return the hash of everything that determines an artifact (canonical JSON, sha256)."""
    blob = json.dumps({"stage": stage, **parts}, sort_keys=True, default=str,
                      separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to `path` through a temporary file and a rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str), encoding="utf-8")
    os.replace(tmp, path)


STORAGE_ERRORS = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is exhausted",
                  errno.EROFS: "the file system is read-only",
                  errno.EACCES: "permission denied", errno.EPERM: "permission denied",
                  errno.ENOTDIR: "a path in it is a file, not a directory",
                  errno.EEXIST: "a path in it is a file, not a directory"}
"""The errors of the cache's storage, not of the harness: the user fixes them."""


class CacheError(HarnessError):
    """The artifact cache cannot be written: its path, why, and what to do."""

    def __init__(self, root: Path, reason: str) -> None:
        self.root, self.reason = root, reason
        super().__init__(f"cache {root}: {reason}; free space or give another directory with "
                         "--cache DIR or $HARNESS_CACHE (a rerun resumes what was built)")


def storage_error(root: Path, exc: OSError) -> CacheError | None:
    """The `CacheError` an `OSError` of the cache's storage stands for, or None for others."""
    reason = STORAGE_ERRORS.get(exc.errno or 0)
    if reason is None:
        return None
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(root) else ""
    return CacheError(root, reason + where)


@dataclass
class Cache:
    """The artifact store under `root`; counts hits and builds for the run summary. A hit
    counts an artifact that existed before this object first asked for it (one a stage
    built, or reused, earlier in the same run is not counted again when a later stage, such as
    the probes, walks the pipeline once more)."""

    root: Path = field(default_factory=default_root)
    hits: int = 0
    builds: int = 0
    _seen: set[tuple[str, str]] = field(default_factory=set, repr=False, compare=False)

    def _hit(self, stage: str, key: str) -> None:
        if (stage, key) not in self._seen:
            self._seen.add((stage, key))
            self.hits += 1

    def path(self, stage: str, key: str) -> Path:
        """Return where the finished artifact (stage, key) lives."""
        return self.root / stage / key

    def exists(self, stage: str, key: str) -> bool:
        """True when the artifact is complete."""
        return (self.path(stage, key) / META_FILE).is_file()

    def check_writable(self) -> None:
        """Raise `CacheError` unless the root is (or can be made) a writable directory: found
        before any work, not after an hour of training."""
        probe = self.root / f".write-test.{os.getpid()}"
        try:
            if self.root.exists() and not self.root.is_dir():
                raise CacheError(self.root, "it is a file, not a directory")
            self.root.mkdir(parents=True, exist_ok=True)
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise storage_error(self.root, exc) or CacheError(self.root, str(exc)) from None

    def produce(self, stage: str, parts: Mapping[str, Any], build: Callable[[Path], Any],
                *, label: str = "") -> Path:
        """Return the artifact's directory, building it with `build(partial_dir)` if missing.

        `build` may return a JSON-able summary stored in the artifact's meta.json.
        """
        key = artifact_key(stage, parts)
        final = self.path(stage, key)
        name = f"{stage} {label}".strip()
        if (final / META_FILE).is_file():
            self._hit(stage, key)
            log.info("%s: cached (%s)", name, key[:12])
            return final
        locks = self.root / "locks"
        try:
            locks.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise storage_error(self.root, exc) or exc from None
        with FileLock(str(locks / f"{stage}-{key}.lock")):
            if (final / META_FILE).is_file():  # another run finished it while we waited
                self._hit(stage, key)
                log.info("%s: cached (%s), built by another run", name, key[:12])
                return final
            partial = final.with_name(key + ".partial")
            resuming = partial.is_dir() and any(partial.iterdir())
            partial.mkdir(parents=True, exist_ok=True)
            log.info("%s: %s (%s)", name, "resuming" if resuming else "building", key[:12])
            started = time.perf_counter()
            try:
                summary = build(partial)
                meta = {"stage": stage, "key": key, "parts": parts, "summary": summary,
                        "seconds": round(time.perf_counter() - started, 3),
                        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
                write_json_atomic(partial / META_FILE, meta)
                if final.exists():  # a stale, incomplete directory from an older layout
                    shutil.rmtree(final)
                os.replace(partial, final)
            except OSError as exc:
                # The partial directory stays partial: never taken as finished, resumed later.
                error = storage_error(self.root, exc)
                if error is None:
                    raise
                raise error from exc
            self.builds += 1
            self._seen.add((stage, key))
        return final


    def read_only(self) -> Cache:
        """This cache as an analysis's `run` reads it (`ReadOnlyCache`): what is there is found
        (and counted here), what is not is an error."""
        return ReadOnlyCache(root=self.root, source=self)

    def install(self, stage: str, key: str, write: Callable[[Path], None]) -> bool:
        """Put an artifact built elsewhere (a reference bundle's) into the cache under its
        key: `write(partial_dir)` writes its files, meta.json included, and the directory is
        renamed into place. Return False, writing nothing, when the cache has it already."""
        final = self.path(stage, key)
        if (final / META_FILE).is_file():
            return False
        locks = self.root / "locks"
        locks.mkdir(parents=True, exist_ok=True)
        with FileLock(str(locks / f"{stage}-{key}.lock")):
            if (final / META_FILE).is_file():
                return False
            partial = final.with_name(key + ".installing")
            shutil.rmtree(partial, ignore_errors=True)
            partial.mkdir(parents=True)
            write(partial)
            if not (partial / META_FILE).is_file():
                shutil.rmtree(partial, ignore_errors=True)
                raise HarnessError(f"cache {self.root}: the {stage} artifact {key} to install "
                                   f"has no {META_FILE}")
            if final.exists():  # a stale, incomplete directory
                shutil.rmtree(final)
            os.replace(partial, final)
        return True


@dataclass
class ReadOnlyCache(Cache):
    """A cache that builds nothing: `produce` returns a finished artifact (counted in `source`,
    the run's cache) and raises `CacheMiss` for one that is not there. The analyses' `run`
    reads through it, so work their jobs did not do cannot be done again there, by
    construction (`harness.protocols.PlannedAnalysis`)."""

    source: Cache = field(default_factory=Cache)

    def produce(self, stage: str, parts: Mapping[str, Any], build: Callable[[Path], Any],
                *, label: str = "") -> Path:
        key = artifact_key(stage, parts)
        if not self.exists(stage, key):
            raise CacheMiss(f"cache {self.root}: {f'{stage} {label}'.strip()} ({key[:12]}) "
                            "is not there, and an analysis's run computes nothing: do that work "
                            "in the analysis's jobs (`jobs` and `run_job`) and read their records")
        return self.source.produce(stage, parts, build, label=label)

    def install(self, stage: str, key: str, write: Callable[[Path], None]) -> bool:
        raise CacheMiss(f"cache {self.root}: an analysis's run installs nothing ({stage} {key})")


def read_meta(directory: Path) -> dict[str, Any]:
    """Return the meta.json of the artifact in `directory`."""
    return json.loads((directory / META_FILE).read_text(encoding="utf-8"))


def file_digest(path: Path) -> str:
    """Return the sha256 of a file's content, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
