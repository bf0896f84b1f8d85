"""The docs follow the code: every command option in the README's command table, every optional
plugin contract in the plugin guide (cf. the hook docs test in test_plugins.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from harness import protocols
from harness.cli import main

REPO = Path(__file__).resolve().parent.parent
COMMON = {"--verbose", "--debug", "--help"}
"""Options every command takes, documented once under the command table."""


def commands(group: click.Group = main, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    """Every runnable command as ("data senteval", command)."""
    for name, command in sorted(group.commands.items()):
        path = (*prefix, name)
        if isinstance(command, click.Group):
            yield from commands(command, path)
        else:
            yield " ".join(path), command


def long_options(command: click.Command) -> set[str]:
    return {option for param in command.params if isinstance(param, click.Option)
            for option in param.opts if option.startswith("--")}


def readme_row(path: str) -> str:
    """The README command table's row of `harness <path>`."""
    rows = [line for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines()
            if line.startswith(f"| `harness {path} ") or line.startswith(f"| `harness {path}`")]
    assert len(rows) == 1, f"the README's command table needs one row for `harness {path}`"
    return rows[0]


@pytest.mark.parametrize(("path", "command"), list(commands()), ids=[p for p, _ in commands()])
def test_every_option_of_every_command_is_in_the_readme(path: str, command: click.Command) -> None:
    row = readme_row(path)
    missing = sorted(option for option in long_options(command) - COMMON if option not in row)
    assert not missing, f"add {', '.join(missing)} to the README's row of `harness {path}`"


def test_the_options_every_command_takes_are_documented_once() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for path, command in commands():
        assert COMMON <= long_options(command) | {"--help"}, path
    assert "Every command also takes `-v`/`--verbose`" in readme
    assert all(option in readme for option in COMMON | {"--version"})


def test_every_command_is_in_the_readme() -> None:
    assert len(list(commands())) >= 8
    for path, _ in commands():
        readme_row(path)


OPTIONAL_PARTS = ("VersionedFit", "ResumableFit", "StandardisedInputs", "SignedMetric",
                  "GeneratedTask", "Availability", "requires", "higher_is_better", "fit_version",
                  "set_vector_statistics", "workdir", "signature", "PositionalEncoder",
                  "is_positional")


def test_every_optional_contract_is_in_the_plugin_guide() -> None:
    guide = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    source = (REPO / "harness" / "protocols.py").read_text(encoding="utf-8")
    for part in OPTIONAL_PARTS:
        assert part in source, f"{part} is not declared in harness/protocols.py"
        assert f"`{part}" in guide or f"{part}`" in guide, f"docs/plugins.md omits {part}"
    for name in ("VersionedFit", "ResumableFit", "StandardisedInputs", "SignedMetric",
                 "GeneratedTask", "PositionalEncoder", "is_positional"):
        assert hasattr(protocols, name)
