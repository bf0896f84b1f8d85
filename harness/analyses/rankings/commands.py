"""`harness leaderboard`: the rankings analysis's command, which ranks the encoders of runs and
bundles made under one protocol in one table (`harness.analyses.rankings.leaderboard`).

Added to the `harness` CLI through the `register_commands` hook, like any plugin's commands
(`harness.analyses.register_commands`). Importing this module imports click and nothing heavy.
"""

from __future__ import annotations

from pathlib import Path

import click

from harness.registry.commands import command


@click.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path),
                metavar="RUN_OR_BUNDLE...")
@click.option("--format", "form", type=click.Choice(["md", "html", "csv"]), default="md",
              show_default=True, help="md: a Markdown table; html: a page that sorts by any "
                                      "column; csv: one row per encoder.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Write to this file (default: print).")
@click.option("--decoder", default=None,
              help="The decoder whose diagnostics rank the encoders (default: the first).")
@command
def leaderboard(sources: tuple[Path, ...], form: str, out: Path | None,
                decoder: str | None) -> None:
    """One table of the encoders of runs and bundles made under one protocol: each
    diagnostic with its interval, rank and rank interval, tie groups from Holm-corrected
    paired tests on the same test sentences, and the downstream scores; joined encoders are
    marked. Sources of different protocol signatures are refused, the difference named."""
    from harness.analyses.rankings.board_render import render
    from harness.analyses.rankings.leaderboard import build_leaderboard

    board = build_leaderboard(list(sources), decoder=decoder)
    text = render(board, form)
    if out is None:
        click.echo(text, nl=False)
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    click.echo(f"leaderboard: {out}")


COMMANDS = [leaderboard]
