"""What every `harness` command shares, the core's and those plugins add (`register_commands`):
the `command` decorator, which gives a command `-v`/`--verbose` and `--debug` and turns its
errors into one line and an exit code.

A plugin's command uses it like the core's:

    @click.command("fetch-my-weights")
    @click.option("--dir", "directory", type=click.Path(path_type=Path), required=True)
    @command
    def fetch(directory: Path) -> None:
        ...

Importing this module imports click and nothing of the harness beyond its errors.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable
from typing import Any

import click

from harness.errors import HarnessError

EXIT_USER_ERROR = 2
"""Exit code of a command that failed with a `HarnessError` (a bad spec, missing data, ...)."""
EXIT_INTERNAL_ERROR = 1
"""Exit code of a command that failed with any other exception."""


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever `sys.stderr` is now (click's test runner swaps it per invocation)."""

    def __init__(self) -> None:
        super().__init__()

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _configure_logging(verbose: int) -> None:
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)
    logging.getLogger("harness").setLevel(logging.DEBUG if verbose else logging.INFO)


def command(function: Callable[..., Any]) -> Callable[..., Any]:
    """Add -v/--debug and turn errors into one line and an exit code (2 user, 1 internal).

    Apply it below `@click.command(...)` and the command's own options: a `HarnessError` prints
    `error: MESSAGE` (exit 2), any other exception `internal error: ...` (exit 1), both with the
    traceback under `--debug`; Ctrl-C says that rerunning resumes (exit 130).
    """

    @click.option("-v", "--verbose", count=True, help="More log output (stage details).")
    @click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
    @functools.wraps(function)
    def wrapper(*args: Any, verbose: int, debug: bool, **kwargs: Any) -> Any:
        _configure_logging(verbose)
        try:
            return function(*args, **kwargs)
        except HarnessError as exc:
            if debug:
                raise
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_USER_ERROR)
        except KeyboardInterrupt:
            click.echo("interrupted: rerun the same command to resume", err=True)
            sys.exit(130)
        except Exception as exc:  # noqa: BLE001 - the CLI boundary
            if debug:
                raise
            click.echo(f"internal error: {type(exc).__name__}: {exc} "
                       "(rerun with --debug for the traceback)", err=True)
            sys.exit(EXIT_INTERNAL_ERROR)

    return wrapper
