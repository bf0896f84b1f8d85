"""Error classes that carry what the user needs to fix the problem.

Every `HarnessError` is a user error: the CLI prints its one-line message and exits with 2.
Anything else escaping the library is an internal error (exit 1).
"""

from __future__ import annotations

import difflib
import errno
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager


class HarnessError(Exception):
    """A user-facing error whose message is one line saying what is wrong and what to do."""


class SpecError(HarnessError):
    """A benchmark spec is malformed or names something that does not exist."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        self.file, self.line, self.field, self.detail = file, line, field, message
        where = file or "<spec>"
        if line is not None:
            where += f":{line}"
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")


class PluginError(HarnessError):
    """A plugin misbehaved: failed to load, registered something invalid, or returned bad output."""

    def __init__(self, plugin: str, message: str) -> None:
        self.plugin = plugin
        super().__init__(f"plugin {plugin!r}: {message}")


@contextmanager
def plugin_call(plugin: str, what: str) -> Iterator[None]:
    """Run a call into a plugin's code: an exception it raises becomes a PluginError naming the
    plugin and `what` it was doing (harness errors, memory errors and a full disk pass
    through)."""
    try:
        yield
    except (HarnessError, MemoryError):
        raise
    except Exception as exc:
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise  # a full disk is not the plugin's fault: the cache reports it
        first = (str(exc).strip().splitlines() or [""])[0]
        raise PluginError(plugin, f"{what}: {type(exc).__name__}: {first}") from exc


def close_names(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The names of `known` close enough to `name` to suggest ("did you mean ..."), best first."""
    return difflib.get_close_matches(name, list(known), n=n, cutoff=0.6)


class UnknownComponentError(HarnessError):
    """A component name is not registered; the message suggests close names and names the
    plugins that failed to load (`failed`: "plugin 'x' (dist 1.0): why"), which may be the ones
    that would have registered it."""

    def __init__(self, kind: str, name: str, suggestions: list[str], known: list[str],
                 failed: Sequence[str] = ()) -> None:
        self.kind, self.name, self.suggestions = kind, name, suggestions
        if suggestions:
            hint = "did you mean " + " or ".join(repr(s) for s in suggestions) + "?"
        elif known:
            hint = "known: " + ", ".join(known)
        else:
            from harness.protocols import plural

            hint = f"no {plural(kind)} are registered"
        selected = [v for v in ("HARNESS_PLUGINS", "HARNESS_DISABLE_PLUGINS") if v in os.environ]
        where = (f"; {' and '.join(selected)} {'is' if len(selected) == 1 else 'are'} set, "
                 "so its plugin may not be loaded" if selected else "")
        if failed:
            hint += (f"; {len(failed)} plugin{'s' if len(failed) > 1 else ''} failed to load, "
                     f"and may be where it comes from: {'; '.join(failed)}")
        super().__init__(f"unknown {kind} {name!r}: {hint} (see `harness list`{where})")


class UnavailableComponentError(HarnessError):
    """A registered component cannot run here (missing weights or package)."""

    def __init__(self, kind: str, name: str, reason: str) -> None:
        self.kind, self.name, self.reason = kind, name, reason
        super().__init__(f"{kind} {name!r} is unavailable: {reason}")


class DataError(HarnessError):
    """Input data (corpus, table, vectors) is missing or malformed."""


class CacheMiss(HarnessError):
    """An artifact asked of a read-only cache that lacks it: an analysis's `run` asked for
    work its jobs did not do (`harness.util.cache.ReadOnlyCache`)."""
