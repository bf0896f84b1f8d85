"""`harness data senteval`: download SentEval's downstream data, the files this plugin's tasks
read (`download` does the work).

The plugin adds it to the core's `data` group through the `register_commands` hook
(`harness_plugins.tasks.register_commands`). Importing this module imports click and nothing
heavy.
"""

from __future__ import annotations

from pathlib import Path

import click

from harness.plugin import HarnessError, command


@click.command("senteval")
@click.option("--dir", "directory", type=click.Path(path_type=Path), required=True,
              help="Where to put SentEval's data/downstream layout.")
@click.option("--tasks", default=None, metavar="MR,SST2,...",
              help="Only the files these tasks need (default: every task).")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@command
def data_senteval(directory: Path, tasks: str | None, quiet: bool) -> None:
    """Download SentEval's downstream data from the official sources (as SentEval's
    get_transfer_data.bash does), resumably, and verify every file's line count."""
    from .download import download_senteval

    report = download_senteval(directory, tasks=tasks.split(",") if tasks else None,
                               progress=not quiet)
    click.echo(report.summary())
    if not report.ok:
        raise HarnessError("; ".join(report.problems()))
