"""The length-gap analysis's command: `harness length-gap RUN_DIR` prints the length gaps of a
run from its results.json. Imported when the plugin registers its commands, so it imports
click and nothing heavy; the work's modules are imported inside the command."""

from __future__ import annotations

from pathlib import Path

import click

from harness.plugin import command


@click.command("length-gap")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--digits", type=click.IntRange(0, 6), default=2, show_default=True,
              help="Decimals shown.")
@command
def length_gap(run_dir: Path, digits: int) -> None:
    """Print the length gap of every pair of the run in RUN_DIR (results.json `length_gaps`):
    regenerated minus input length in whitespace tokens, and the share of shorter outputs."""
    from .gap_results import gap_header, gap_rows, read_gaps

    gaps = read_gaps(run_dir)
    table = [gap_header(gaps), *gap_rows(gaps, digits)]
    widths = [max(len(row[column]) for row in table) for column in range(len(table[0]))]
    for row in table:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


COMMANDS: tuple[click.Command, ...] = (length_gap,)
"""What the plugin's `register_commands` adds to the `harness` CLI."""
