"""The `harness` command: parse arguments, call the library, print. Nothing else lives here.

The core's commands are defined here; plugins add theirs through the `register_commands` hook
(`harness generate` and `harness analogy` come from the probes analysis, `harness data
senteval` from the SentEval tasks' plugin), and `PluginCommands` finds them when they are asked
for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from harness import __version__
from harness.errors import HarnessError
from harness.registry.commands import command

_REGISTERED = "harness.registered_commands"
"""Where a group keeps, in the root context's `meta`, the commands plugins registered."""


class PluginCommands(click.Group):
    """A group of the core's commands and those plugins register for it (`register_commands`
    in `harness.registry.hookspecs`). The plugins load, once per invocation, only when help lists the
    commands or a name is not one of the core's."""

    def __init__(self, *args: Any, plugin_group: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.plugin_group = plugin_group

    def registered(self, ctx: click.Context) -> dict[str, click.Command]:
        """The commands plugins registered in this group, by name."""
        meta = ctx.find_root().meta
        if _REGISTERED not in meta:
            from harness.registry.loader import load_registry

            meta[_REGISTERED] = load_registry().commands
        return {info.name: info.command for info in meta[_REGISTERED].values()
                if info.group == self.plugin_group}

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The core's commands and the plugins', sorted."""
        return sorted({*self.commands, *self.registered(ctx)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """A core command, else a plugin's, else None."""
        return self.commands.get(cmd_name) or self.registered(ctx).get(cmd_name)


@click.group(cls=PluginCommands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="harness")
def main() -> None:
    """Vec2Sent evaluation harness: train a decoder per sentence encoder, regenerate sentences
    from their vectors, score them (Id, PERM, Id/PERM, BLEU, ...) and correlate the scores with
    downstream performance across encoders.

    \b
    Quick start:
      harness list                                   what is registered
      harness validate benchmarks/quickstart.yaml    check a spec
      harness run benchmarks/quickstart.yaml --out runs/quickstart
      harness run SPEC --set vocab.dim=50 --device cpu   override spec values
      harness generate SPEC "a sentence"              decode it with the trained decoders
    """


@main.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the documented schema).")
@click.option("--strict", is_flag=True,
              help="Exit with 2 when a plugin failed to load (for plugin authors' CI).")
@click.option("--options", "options_of", default=None, metavar="NAME",
              help="Print the options of component NAME (type, default, description).")
@command
def list_command(as_json: bool, strict: bool, options_of: str | None) -> None:
    """List registered encoders, decoders, metrics and downstream tasks, and plugins that
    failed to load; with --options NAME, the options one component takes."""
    from harness.registry.listing import component_options, listing, render_listing, render_options
    from harness.registry.loader import load_registry

    registry = load_registry()
    if options_of is not None:
        entries = component_options(registry, options_of)
        click.echo(json.dumps(entries, indent=2, default=str) if as_json
                   else render_options(entries))
        return
    data = listing(registry)
    click.echo(json.dumps(data, indent=2) if as_json else render_listing(data))
    if strict and registry.failures:
        names = ", ".join(failure.name for failure in registry.failures)
        raise HarnessError(f"--strict: {len(registry.failures)} plugin"
                           f"{'s' if len(registry.failures) > 1 else ''} failed to load "
                           f"({names}); see failed plugins above")


REFERENCE = click.option(
    "--reference", default=None, metavar="BUNDLE",
    help="Join a reference bundle (a file from `harness bundle`, or a shipped one by name: "
         "quickstart, reference): train only the spec's encoders it lacks and rank them among "
         "its rows. The same as --set reference.bundle=BUNDLE.")
"""The `--reference` option of `harness run` and `harness validate`."""


def _quoted(key: str, value: str) -> str:
    """An override `key=value` with `value` a quoted YAML string (a name is never read as a
    number)."""
    return f"{key}={json.dumps(value)}"


@main.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE",
              help="Override a spec value (YAML syntax), e.g. --set vocab.dim=50; "
                   "SECTION=null resets a top-level section to its default "
                   "(downstream=null: no tasks).")
@REFERENCE
@command
def validate(spec: Path, overrides: tuple[str, ...], reference: str | None) -> None:
    """Check a benchmark spec without running anything.

    Exit 0: the spec can run here. Exit 2: it is malformed (one line naming file:line and
    field), or it is well formed but cannot run here yet (every problem listed: components
    unavailable, data files missing, each with what to do), which `harness run` refuses too.
    Warnings (an encoder whose row in the downstream reference table measured another model)
    are printed either way and change neither the exit code nor what `harness run` does.
    """
    from harness.executors.plan import decoders_to_train
    from harness.registry.loader import load_registry
    from harness.spec import TableSpec, load_spec, preflight
    from harness.spec.preflight import preflight_warnings

    extra = [*overrides, *([_quoted("reference.bundle", reference)] if reference else [])]
    parsed = load_spec(spec, extra, load_registry())
    problems = preflight(parsed)
    for warning in preflight_warnings(parsed):
        click.echo(f"warning: {warning}", err=True)
    if problems:
        for problem in problems:
            click.echo(f"problem: {problem}", err=True)
        count = len(problems)
        raise HarnessError(f"{spec}: well formed, but `harness run` refuses it here until "
                           f"{'this problem is' if count == 1 else f'these {count} problems are'} "
                           "fixed")
    if isinstance(parsed, TableSpec):
        click.echo(f"{spec}: ok (correlates {parsed.diagnostics.reference.name} with "
                   f"{parsed.downstream.reference.name if parsed.downstream.reference else '-'})")
        return
    click.echo(f"{spec}: ok ({_count(len(parsed.components('encoder')), 'encoder')}, "
               f"{_count(decoders_to_train(parsed), 'decoder')} to train, "
               f"{_count(len(parsed.components('metric')), 'metric')}, "
               f"{_count(len(parsed.components('task')), 'downstream task')})")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


@main.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Run directory for results (default: runs/<spec name>).")
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE",
              help="Override a spec value (YAML syntax); repeatable. SECTION=null "
                   "resets a top-level section to its default (downstream=null: no tasks).")
@click.option("--device", default=None,
              help="auto, cpu, cuda, cuda:N or mps (overrides the spec).")
@click.option("--cache", "cache_dir", type=click.Path(path_type=Path), default=None,
              help="Artifact cache (default: $HARNESS_CACHE or the user cache directory); "
                   "with --executor ray, a path every node sees.")
@click.option("--executor", default=None, metavar="NAME",
              help="A registered executor to run the encoder jobs (harness list shows them: "
                   "local, the default, one after another in this process; ray, one Ray task "
                   "each, pip install \"v2s-harness[ray]\"); overrides the spec's `executor:`.")
@click.option("--executor-option", "executor_options", multiple=True, metavar="KEY=VALUE",
              help="An option of the executor (YAML syntax; harness list --options NAME lists "
                   "them), e.g. address=auto for ray; repeatable. The same as --set "
                   "executor.KEY=VALUE.")
@REFERENCE
@command
def run(spec: Path, out: Path | None, overrides: tuple[str, ...], device: str | None,
        cache_dir: Path | None, executor: str | None,
        executor_options: tuple[str, ...], reference: str | None) -> None:
    """Run a benchmark spec; finished stages are reused from the cache, killed ones resume.

    \b
    Join a reference instead of training every encoder again:
      harness run benchmarks/quickstart.yaml --set "encoders=[max]" --reference quickstart
    """
    from harness.registry.loader import load_registry
    from harness.runner import run_spec, run_tables
    from harness.spec import TableSpec, load_spec
    from harness.util.cache import Cache, default_root

    extra = list(overrides)
    for key, value in (("device", device), ("executor.name", executor),
                       ("reference.bundle", reference)):
        if value is not None:
            extra.append(_quoted(key, value))
    for option in executor_options:
        if "=" not in option:
            raise HarnessError(f"--executor-option {option}: expected KEY=VALUE, e.g. "
                               "address=auto")
        extra.append(f"executor.{option}")
    parsed = load_spec(spec, extra, load_registry())
    out = out or Path("runs") / parsed.name
    if out.exists() and not out.is_dir():
        raise HarnessError(f"--out {out}: exists and is not a directory; give a directory for "
                           "the run's results")
    if isinstance(parsed, TableSpec):
        run_tables(parsed, out)
    else:
        run_spec(parsed, out, cache=Cache(cache_dir or default_root()))
    click.echo(f"results: {out / 'results.json'}")


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--format", "formats", multiple=True, type=click.Choice(["md", "html", "csv"]),
              default=("md", "html"), show_default=True,
              help="Reports to write; repeatable. csv: the diagnostics, ranks, downstream "
                   "scores and correlations as tables/*.csv.")
@command
def report(run_dir: Path, formats: tuple[str, ...]) -> None:
    """Rebuild report.md / report.html (and with --format csv, tables/*.csv) of a run
    directory from its results.json."""
    from harness.report.write import write_reports
    from harness.results.model import load_results

    write_reports(run_dir, load_results(run_dir), list(formats))
    click.echo(f"reports written in {run_dir}")


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="The bundle file to write (a zip; docs/results.md, \"Bundles\").")
@command
def bundle(run_dir: Path, out: Path) -> None:
    """Write a run's reference bundle: per encoder x decoder x seed the per-sentence
    statistics every metric's tests need, the downstream scores with their seeds, the
    provenance and the protocol signature, and the vocabulary and unconditional NLLs a joining
    run shares. Another run joins it with `reference: FILE` (or `--reference FILE`)."""
    from harness.reference.bundle import make_bundle

    manifest = make_bundle(run_dir, out)
    size = out.stat().st_size
    click.echo(f"{out}: {len(manifest.encoders)} encoders of run {manifest.name}, "
               f"{size / 1e6:.1f} MB, signature {manifest.signature.text}")


@main.group(cls=PluginCommands, plugin_group="data")
def data() -> None:
    """Download and prepare data sets (the only commands that use the network)."""


@data.command("newscrawl")
@click.option("--year", type=int, required=True,
              help="News Crawl year (the paper: 2007 for training, 2008 for test).")
@click.option("--lines", type=click.IntRange(min=1), required=True,
              help="Keep the first N lines short enough (the paper: 1400000 and 10000).")
@click.option("--dir", "directory", type=click.Path(path_type=Path), required=True,
              help="Where to write newscrawl.en.YEAR.N and its sha256 manifest.")
@click.option("--url", default=None,
              help="Another source of news.YEAR.en.shuffled.gz: a mirror, a file:// URL or a "
                   "local path (default: the official WMT location).")
@click.option("--max-tokens", type=click.IntRange(min=1), default=15, show_default=True,
              help="Keep lines with fewer whitespace tokens, as awk 'NF<15' does.")
@click.option("--quiet", is_flag=True, help="No progress lines.")
@command
def data_newscrawl(year: int, lines: int, directory: Path, url: str | None, max_tokens: int,
                   quiet: bool) -> None:
    """Stream WMT News Crawl English for YEAR, gunzip on the fly, keep the first N lines with
    fewer than --max-tokens tokens (zcat | awk 'NF<15' | head -n N), and write them atomically
    with a sha256 manifest; an interrupted download resumes."""
    from harness.data.newscrawl import prepare_newscrawl

    result = prepare_newscrawl(year, lines, directory, url=url, max_tokens=max_tokens,
                               progress=not quiet)
    state = "already there" if result.reused else f"{result.bytes_read / 1e6:.1f} MB read"
    click.echo(f"{result.path}: {result.kept} lines, sha256 {result.sha256[:16]}... ({state})")


if __name__ == "__main__":
    main()
