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


def subcommands(group: click.Group) -> dict[str, click.Command]:
    """A group's commands by name, the installed plugins' (`register_commands`) included."""
    with click.Context(group, info_name=group.name) as ctx:
        return {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}


def commands(group: click.Group = main, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    """Every runnable command as ("data senteval", command)."""
    for name, command in sorted(subcommands(group).items()):
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
                  "GeneratedTask", "CombinedColumns", "Availability", "requires",
                  "higher_is_better", "fit_version", "set_vector_statistics", "workdir",
                  "signature", "PositionalEncoder", "is_positional", "BudgetedDefence",
                  "defence_budget", "chance_level")


def test_every_optional_contract_is_in_the_plugin_guide() -> None:
    guide = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    source = "".join(path.read_text(encoding="utf-8")
                     for path in sorted((REPO / "harness" / "protocols").glob("*.py")))
    for part in OPTIONAL_PARTS:
        assert part in source, f"{part} is not declared in harness/protocols/"
        assert f"`{part}" in guide or f"{part}`" in guide, f"docs/plugins.md omits {part}"
    for name in ("VersionedFit", "ResumableFit", "StandardisedInputs", "SignedMetric",
                 "GeneratedTask", "CombinedColumns", "PositionalEncoder", "is_positional",
                 "BudgetedDefence", "defence_budget"):
        assert hasattr(protocols, name)


def test_the_plugin_guides_table_lists_every_first_party_component() -> None:
    """docs/plugins.md's table of first-party plugins names, in each plugin's row, every
    component that plugin registers, and no plugin the registry lacks."""
    import re

    from harness.registry.loader import FIRST_PARTY_PACKAGE, load_registry

    guide = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(0) for m in re.finditer(
        rf"^\| `([a-z-]+)` \| `(?:{FIRST_PARTY_PACKAGE}|harness\.analyses|harness\.executors)"
        r"[^\n]*", guide, flags=re.MULTILINE)}
    registered = [info for info in load_registry() if info.distribution == "v2s-harness"]
    assert {info.plugin for info in registered} == set(rows)
    missing = [f"{info.plugin}: {info.name}" for info in registered
               if f"`{info.name}`" not in rows[info.plugin]]
    assert not missing, f"add to docs/plugins.md's table of first-party plugins: {missing}"


def test_the_plugin_guide_names_every_data_command() -> None:
    data = main.commands["data"]
    assert isinstance(data, click.Group)
    guide = (REPO / "docs" / "plugins.md").read_text(encoding="utf-8")
    for name in subcommands(data):
        assert f"`harness\n  data {name}`" in guide or f"`harness data {name}`" in guide, name


def test_device_choices_agree_between_the_spec_the_help_and_the_readme() -> None:
    from harness.spec.schema import Spec

    with pytest.raises(ValueError, match="expected auto, cpu, cuda, cuda:N or mps"):
        Spec.model_validate({"name": "x", "device": "tpu"})
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "# auto | cpu | cuda | cuda:N | mps" in readme
    for path, command in commands():
        for param in command.params:
            if isinstance(param, click.Option) and "--device" in param.opts:
                assert "auto, cpu, cuda, cuda:N or mps" in (param.help or ""), path


def test_the_readmes_quickstart_time_is_the_measured_one() -> None:
    """The README states the quickstart's time as docs/performance.md measured it."""
    import re

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    performance = (REPO / "docs" / "performance.md").read_text(encoding="utf-8")
    (line,) = [line for line in readme.splitlines()
               if line.startswith("harness run benchmarks/quickstart.yaml")
               and "--reference" not in line]  # the join has its own line and section
    stated = re.search(r"(\d[\d,]*) s measured", line)
    assert stated, f"the README's quickstart line states no measured time: {line}"
    quickstart = performance[performance.index("## The quickstart"):]
    quickstart = quickstart[:quickstart.index("\n## ")]
    assert f"**{stated.group(1)} s**" in quickstart, (
        f"docs/performance.md's quickstart section does not record {stated.group(1)} s")


def test_the_readmes_join_time_is_the_measured_one() -> None:
    """The README states the time of a join of the quickstart bundle as docs/performance.md
    measured it."""
    import re

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    performance = (REPO / "docs" / "performance.md").read_text(encoding="utf-8")
    stated = re.search(r"`max` here: (\d+) s\s+measured", readme)
    assert stated, "the README's join paragraph states no measured time"
    section = performance[performance.index("## Joining the quickstart's reference"):]
    section = section[:section.index("\n## ")]
    assert f"**{stated.group(1)} s**" in section


def test_list_options_prints_types_defaults_and_descriptions() -> None:
    from click.testing import CliRunner

    result = CliRunner().invoke(main, ["list", "--options", "gem"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("encoder 'gem' (harness-encoders ")
    assert lines[1].split() == ["option", "type", "default", "description"]
    window = next(line for line in lines if line.strip().startswith("window"))
    assert window.split()[:5] == ["window", "int", ">=", "1", "7"]
    sigma = next(line for line in lines if line.strip().startswith("sigma_power"))
    assert sigma.split()[:5] == ["sigma_power", "float", ">", "0", "3.0"]
    result = CliRunner().invoke(main, ["list", "--options", "gemm"])
    assert result.exit_code == 2 and "did you mean 'gem'?" in result.output
    far = CliRunner().invoke(main, ["list", "--options", "zzzq"])
    assert far.exit_code == 2 and "unknown component 'zzzq': known: align, " in far.output
    assert " avg, " in far.output and " mos-lstm, " in far.output  # every kind's names
    as_json = CliRunner().invoke(main, ["list", "--options", "mos-lstm", "--json"])
    import json

    (decoder,) = json.loads(as_json.output)
    optimizer = next(o for o in decoder["options"] if o["name"] == "optimizer")
    assert optimizer == {"name": "optimizer", "type": "one of: adam, sgd", "default": "adam",
                         "required": False, "description": "optimiser"}


def _architecture_tree() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Architecture"):]
    return section[section.index("```") + 3:section.index("```", section.index("```") + 3)]


def test_the_readmes_architecture_matches_the_tree() -> None:
    """Every folder and module the README's architecture section names exists where it says,
    and it names every package of the core and every analysis folder."""
    import re

    tree = _architecture_tree()
    named: set[str] = set()
    parents: list[tuple[int, str]] = []
    for line in tree.splitlines():
        if not line.strip() or line.startswith(" " * 25):
            continue  # a continued description
        indent = len(line) - len(line.lstrip())
        first = line.strip().split("  ")[0]
        parents = [(i, p) for i, p in parents if i < indent]
        base = parents[-1][1] if parents else ""
        for name in re.findall(r"[\w.<>/-]+(?:/|\.py)", first):
            path = base + name
            if "<name>" not in path:
                assert (REPO / path).exists(), f"README architecture names {path}, not in the tree"
            named.add(path.rstrip("/"))
        if first.endswith("/") and " " not in first:
            parents.append((indent, base + first))
    packages = {f"harness/{p.name}" for p in (REPO / "harness").iterdir()
                if (p / "__init__.py").is_file()}
    missing = sorted(p for p in packages if p not in named and p.split("/")[-1] not in tree)
    assert missing == [], f"README architecture omits {missing}"
    analyses = sorted(p.name for p in (REPO / "harness" / "analyses").iterdir() if p.is_dir()
                      and (p / "analysis.py").is_file())
    assert [a for a in analyses if a not in tree] == []
