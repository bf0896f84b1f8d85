"""Commands plugins add to the `harness` CLI (`register_commands`): name clashes refused with one
line naming both plugins, invalid registrations refused, the core's commands kept to the core,
and the first-party commands coming through the hook like any plugin's.

The hook's own test, a fake third-party plugin's command run through click's CliRunner, is
`test_hook_register_commands` in tests/test_plugins.py.
"""

from __future__ import annotations

import ast
import types
from pathlib import Path
from typing import Any

import click
import pluggy
import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.registry import hookspecs
from harness.registry.components import Registry
from harness.registry.hookspecs import hookimpl
from harness.registry.loader import DISABLE_ENV, load_registry, register_plugin
from harness.testing import check_registration
from tests.test_plugins import fake, plugin_environment  # noqa: F401  (autouse fixture)

REPO = Path(__file__).resolve().parents[1]


def registering(*calls: tuple[tuple[Any, ...], dict[str, Any]]) -> types.ModuleType:
    """A plugin module whose `register_commands` makes these `register(*args, **kwargs)` calls."""
    module = types.ModuleType("fake_inline_commands")

    @hookimpl
    def register_commands(register: hookspecs.RegisterCommand) -> None:
        for args, kwargs in calls:
            register(*args, **kwargs)

    module.register_commands = register_commands  # type: ignore[attr-defined]
    return module


def refusal(module: types.ModuleType) -> str | None:
    """What the loader says registering `module` as plugin 'fake-inline' (None: it landed)."""
    manager = pluggy.PluginManager("harness")
    manager.add_hookspecs(hookspecs)
    return register_plugin(manager, Registry(), module, "fake-inline")


def test_a_command_another_plugin_registered_is_refused_in_one_line_naming_both() -> None:
    registry = load_registry(entry_points=[fake("fake-command", "command"),
                                           fake("fake-command-clash", "command_clash")])
    (refused,) = registry.failures
    assert refused.name == "fake-command-clash"
    assert refused.error == ("command `harness fake-hello` is already registered by plugin "
                             "'fake-command'; plugin 'fake-command-clash' cannot register it "
                             "again (disable one with HARNESS_DISABLE_PLUGINS)")
    # all or nothing: the refused plugin's encoder did not land either
    assert registry.commands["fake-hello"].plugin == "fake-command"
    assert [info.name for info in registry] == ["fake-command-encoder"]


def test_harness_list_shows_the_refused_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.registry.loader

    registry = load_registry(entry_points=[fake("fake-command", "command"),
                                           fake("fake-command-clash", "command_clash")])
    monkeypatch.setattr(harness.registry.loader, "load_registry", lambda: registry)
    listed = CliRunner().invoke(main, ["list", "--strict"])
    assert listed.exit_code == 2 and "fake-command-clash" in listed.stdout
    assert CliRunner().invoke(main, ["fake-hello", "you"]).stdout == "hello you\n"


COMMAND = click.Command("fake-ok", callback=lambda: None)

INVALID = [
    ("not-a-command", [((lambda: None,), {})], "expected a click.Command or click.Group, got "
                                              "function"),
    ("core-name", [((click.Command("run"),), {})],
     "command `harness run` is the core's own; plugin 'fake-inline' cannot register it"),
    ("core-data-name", [((click.Command("newscrawl"),), {"group": "data"})],
     "command `harness data newscrawl` is the core's own"),
    ("unknown-group", [((COMMAND,), {"group": "results"})],
     "group must be None or one of the core's groups (data), got 'results'"),
    ("bad-name", [((click.Command("Fetch_It"),), {})], "invalid command name 'Fetch_It'"),
    ("twice", [((COMMAND,), {}), ((COMMAND,), {})], "registers the same command twice"),
    ("positional-group", [((COMMAND, "data"), {})], "register_commands raised TypeError"),
]


@pytest.mark.parametrize(("calls", "message"), [case[1:] for case in INVALID],
                         ids=[case[0] for case in INVALID])
def test_invalid_command_registrations_are_refused(calls: list[Any], message: str) -> None:
    error = refusal(registering(*calls))
    assert error is not None and message in error and "\n" not in error


def test_a_valid_command_lands_and_a_commands_only_plugin_passes_the_kit() -> None:
    assert refusal(registering(((COMMAND,), {}), ((COMMAND,), {"group": "data"}))) is None
    assert check_registration(registering(((COMMAND,), {})), name="fake-inline") == []


def test_the_core_commands_are_the_ones_no_plugin_can_take() -> None:
    core = set(main.commands) | {f"{name} {sub}" for name, group in main.commands.items()
                                 if isinstance(group, click.Group) for sub in group.commands}
    assert core == hookspecs.CORE_COMMANDS
    assert {name for name, group in main.commands.items()
            if isinstance(group, click.Group)} == set(hookspecs.COMMAND_GROUPS)


def test_first_party_commands_come_through_the_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    """The core CLI imports no analysis and no first-party plugin: `generate` and `analogy` are
    the probes analysis's, `data senteval` the SentEval tasks' plugin's, and they go with them."""
    tree = ast.parse((REPO / "harness" / "cli.py").read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names}
    assert not [name for name in imported if name and name.startswith(
        ("harness.analyses", "harness_plugins"))]
    runner = CliRunner()
    assert runner.invoke(main, ["generate", "--help"]).exit_code == 0
    assert runner.invoke(main, ["data", "senteval", "--help"]).exit_code == 0
    monkeypatch.setenv(DISABLE_ENV, "harness-analyses,harness-tasks")
    for args in (["generate", "--help"], ["analogy", "--help"], ["data", "senteval", "--help"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 2 and "No such command" in result.stderr, args
    assert "newscrawl" in runner.invoke(main, ["data", "--help"]).stdout
