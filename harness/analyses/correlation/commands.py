"""The correlation analysis's command: `harness compare RUN_A RUN_B`, the stability of the
diagnostics between two runs (Kerscher & Eger 2020, Table 3; `stability`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from harness.registry.commands import command


@click.command()
@click.argument("run_a", type=click.Path(path_type=Path))
@click.argument("run_b", type=click.Path(path_type=Path))
@click.option("--method", type=click.Choice(["spearman", "pearson", "kendall"]),
              default="spearman", show_default=True, help="Rank correlation across encoders.")
@click.option("--decoder-a", default=None, help="Decoder of RUN_A to compare (default: first).")
@click.option("--decoder-b", default=None, help="Decoder of RUN_B to compare (default: first).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@command
def compare(run_a: Path, run_b: Path, method: str, decoder_a: str | None,
            decoder_b: str | None, as_json: bool) -> None:
    """Stability of the diagnostics between two runs (paper Table 3): for each diagnostic, the
    rank correlation of its values across the encoders both runs share (e.g. another decoder
    family, training size or seed)."""
    from harness.analyses.correlation.stability import compare_runs, render_comparison
    from harness.results.model import load_results

    comparison = compare_runs(load_results(run_a), load_results(run_b), method,
                              decoder_a=decoder_a, decoder_b=decoder_b,
                              run_dirs=(str(run_a), str(run_b)))
    click.echo(json.dumps(comparison.model_dump(mode="json"), indent=2) if as_json
               else render_comparison(comparison))


COMMANDS: tuple[click.Command, ...] = (compare,)
"""What `harness.analyses.register_commands` adds to the `harness` CLI."""
