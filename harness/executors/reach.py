"""What a run's jobs read from disk, and whether a machine sees it: checked on every node of a
cluster before any job is dispatched, so a path that only the driver has is one line before
the run, not an internal error hours into it.

Jobs on other nodes read the spec's files by the absolute paths the driver resolved (the
corpus, an imported vocabulary, published tables, a SentEval directory, component options
that are paths), the files named by the forwarded environment variables (pretrained weights),
and the artifact cache, which they also write: a node must see the very files the driver
wrote there, not a folder of its own at the same path.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from harness.spec import Entry, Spec


@dataclass(frozen=True)
class Input:
    """A file or directory a job reads, and where the run names it (a spec field such as
    `corpus.train.path`, or an environment variable)."""

    where: str
    path: str


def job_inputs(spec: Spec, environment: Mapping[str, str]) -> list[Input]:
    """Return the spec's paths and those of `environment`'s values that exist here (the
    driver): each must exist on every node too. Paths the driver lacks are left to the jobs,
    which may create them (a generated task's data directory)."""
    found = [Input(where, str(path)) for where, path in _paths(spec, "")]
    found += [Input(f"environment variable {name}", value)
              for name, value in environment.items() if os.path.isabs(value)]
    return [item for item in found if os.path.exists(item.path)]


def _paths(value: Any, where: str) -> Iterator[tuple[str, Path]]:
    """(dotted location, path) of every `Path` within `value`: a spec, its sections, entries
    (with their validated options) and lists."""
    if isinstance(value, Path):
        yield where, value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from _paths(getattr(value, name), _join(where, name))
        if isinstance(value, Entry) and value._settings is not None:
            yield from _paths(value.settings, where)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            label = item.name if isinstance(item, Entry) else str(index)
            yield from _paths(item, _join(where, label))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, _join(where, str(key)))


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


@dataclass(frozen=True)
class Token:
    """A file the driver wrote into the cache, and its content: a node that reads the same
    content there shares the driver's cache, not merely a folder at the same path."""

    name: str
    content: str

    @classmethod
    def place(cls, cache_root: str) -> Token:
        """Write a new token into `cache_root` and return it."""
        token = cls(f".reach-{uuid.uuid4().hex}", uuid.uuid4().hex)
        (Path(cache_root) / token.name).write_text(token.content, encoding="utf-8")
        return token

    def remove(self, cache_root: str) -> None:
        """Delete the token's file."""
        (Path(cache_root) / self.name).unlink(missing_ok=True)


def unreachable(inputs: list[Input], cache_root: str, token: Token) -> dict[str, Any]:
    """Check, on the machine this runs on, that every input exists, that the cache holds the
    driver's `token` and can be written; return this host's name and what fails (`{"host",
    "missing", "cache"}`)."""
    missing = [item.__dict__ for item in inputs if not os.path.exists(item.path)]
    cache = None
    try:
        if (Path(cache_root) / token.name).read_text(encoding="utf-8") != token.content:
            cache = "it holds another file where the driver wrote one"
        probe = Path(cache_root) / f".reach-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except FileNotFoundError:
        cache = "a file the driver wrote there is missing: a folder of this node, not the shared one?"
    except OSError as exc:
        cache = exc.strerror or type(exc).__name__
    return {"host": socket.gethostname(), "missing": missing, "cache": cache}


def refusal(node: str, report: dict[str, Any], cache_root: str) -> str | None:
    """The one-line error for a node's `unreachable` report, or None when it sees everything."""
    advice = ("every node must see the run's inputs and cache at the same path: a shared "
              "filesystem mounted alike on every node (docs/paper-protocol.md, \"Cluster\")")
    if report["missing"]:
        first = report["missing"][0]
        more = len(report["missing"]) - 1
        others = f" (and {more} other path{'s' if more > 1 else ''})" if more else ""
        return (f"executor ray: node {node} cannot see {first['path']} ({first['where']}), "
                f"which this machine reads{others}; {advice}")
    if report["cache"] is not None:
        return (f"executor ray: node {node} does not share the cache {cache_root} "
                f"({report['cache']}); {advice}")
    return None
