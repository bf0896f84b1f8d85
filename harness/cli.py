"""The `harness` command: parse arguments, call the library, print. Nothing else lives here."""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from harness import __version__
from harness.errors import HarnessError
from harness.outputs import shown

EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 1


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
    """Add -v/--debug and turn errors into one line and an exit code (2 user, 1 internal)."""

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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
    from harness.listing import component_options, listing, render_listing, render_options
    from harness.loader import load_registry

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


@main.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE",
              help="Override a spec value (YAML syntax), e.g. --set vocab.dim=50; "
                   "SECTION=null resets a top-level section to its default "
                   "(downstream=null: no tasks).")
@command
def validate(spec: Path, overrides: tuple[str, ...]) -> None:
    """Check a benchmark spec without running anything.

    Exit 0: the spec can run here. Exit 2: it is malformed (one line naming file:line and
    field), or it is well formed but cannot run here yet (every problem listed: components
    unavailable, data files missing, each with what to do), which `harness run` refuses too.
    Warnings (an encoder whose row in the downstream reference table measured another model)
    are printed either way and change neither the exit code nor what `harness run` does.
    """
    from harness.loader import load_registry
    from harness.spec import TableSpec, load_spec, preflight
    from harness.spec.preflight import preflight_warnings

    parsed = load_spec(spec, overrides, load_registry())
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
               f"{_count(parsed.decoders_to_train(), 'decoder')} to train, "
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
@command
def run(spec: Path, out: Path | None, overrides: tuple[str, ...], device: str | None,
        cache_dir: Path | None, executor: str | None,
        executor_options: tuple[str, ...]) -> None:
    """Run a benchmark spec; finished stages are reused from the cache, killed ones resume."""
    from harness.cache import Cache, default_root
    from harness.loader import load_registry
    from harness.runner import run_spec, run_tables
    from harness.spec import TableSpec, load_spec

    extra = list(overrides)
    for key, value in (("device", device), ("executor.name", executor)):
        if value is not None:  # a quoted YAML string: a name is never read as a number
            extra.append(f"{key}={json.dumps(value)}")
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


def probe_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """The options `generate` and `analogy` share with `run`, plus which pairs to probe."""
    for decorator in reversed([
        click.option("--encoder", "encoders", multiple=True, metavar="NAME",
                     help="Only this encoder of the spec (repeatable; default: all)."),
        click.option("--decoder", "decoders", multiple=True, metavar="NAME",
                     help="Only this decoder of the spec (repeatable; default: all)."),
        click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE",
                     help="Override a spec value, as for `harness run`."),
        click.option("--device", default=None, help="auto, cpu, cuda, cuda:N or mps."),
        click.option("--cache", "cache_dir", type=click.Path(path_type=Path), default=None,
                     help="Artifact cache (default: $HARNESS_CACHE or the user cache "
                          "directory)."),
        click.option("--json", "as_json", is_flag=True, help="Print JSON."),
    ]):
        function = decorator(function)
    return function


def _probed_spec(spec: Path, overrides: tuple[str, ...], device: str | None) -> Any:
    from harness.loader import load_registry
    from harness.spec import TableSpec, load_spec

    parsed = load_spec(spec, [*overrides, f"device={device}"] if device else list(overrides),
                       load_registry())
    if isinstance(parsed, TableSpec):
        raise HarnessError(f"{spec}: a table spec trains no decoder to probe")
    return parsed


def _print_probe(result: Any, as_json: bool, label: Callable[[str], str]) -> None:
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
        return
    width = max((len(f"{p.encoder} -> {p.decoder}") for p in result.probes), default=0)
    for i, row in enumerate(result.rows):
        click.echo(label(row))
        for probe in result.probes:
            click.echo(f"  {f'{probe.encoder} -> {probe.decoder}':<{width}}  "
                       f"{shown(probe.outputs[i])}")


@main.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.argument("sentences", nargs=-1)
@click.option("--file", "sentence_file", type=click.Path(path_type=Path), default=None,
              help="Read the sentences from a file, one per line.")
@click.option("--interpolate", "steps", type=int, default=None, metavar="STEPS",
              help="Decode STEPS vectors alpha*x + (1-alpha)*y, alpha from 1 to 0, between "
                   "exactly two sentences x and y.")
@probe_options
@command
def generate(spec: Path, sentences: tuple[str, ...], sentence_file: Path | None,
             steps: int | None, encoders: tuple[str, ...], decoders: tuple[str, ...],
             overrides: tuple[str, ...], device: str | None, cache_dir: Path | None,
             as_json: bool) -> None:
    """Regenerate SENTENCES from their vectors with every encoder and decoder of SPEC
    (Kerscher & Eger 2020, Table 2 left), or interpolate between two of them.

    The spec's decoders are taken from the cache when `harness run SPEC` has trained them;
    whatever the cache lacks is built first, as `harness run` would. Sentences are normalised
    like the spec's corpus and decoded with its `generation` settings.
    """
    from harness.analyses.probes import generate as generate_probe
    from harness.analyses.probes import interpolate
    from harness.cache import Cache, default_root
    from harness.errors import DataError

    texts = list(sentences)
    if sentence_file is not None:
        try:
            texts += [line for line in sentence_file.read_text(encoding="utf-8").splitlines()
                      if line.strip()]
        except OSError as exc:
            raise DataError(f"--file {sentence_file}: cannot read it ({exc.strerror})") from None
    if steps is not None and len(texts) != 2:
        raise HarnessError(f"--interpolate needs exactly two sentences, got {len(texts)}")
    parsed = _probed_spec(spec, overrides, device)
    cache = Cache(cache_dir or default_root())
    selection = {"encoders": encoders, "decoders": decoders}
    if steps is not None:
        result = interpolate(parsed, cache, texts[0], texts[1], steps, **selection)
    else:
        result = generate_probe(parsed, cache, texts, **selection)
    _print_probe(result, as_json, lambda row: row)


@main.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.argument("sentences", nargs=-1, metavar="[A B C]")
@click.option("--file", "set_file", type=click.Path(path_type=Path), default=None,
              metavar="SET.tsv", help="Solve and score an analogy set: rows "
              "a<TAB>b<TAB>c[<TAB>expected[<TAB>relation]] (docs/probes.md).")
@click.option("--form", type=click.Choice(["paper", "classic"]), default="paper",
              show_default=True, help="paper: A : B :: z : C, z decoded from A - B + C; "
              "classic: A : B :: C : d, d decoded from B - A + C.")
@click.option("--expr", default=None, metavar="EXPR",
              help='Decode a vector expression over sentences named with --let, e.g. '
                   '"a - b + c" or "0.5*a + 0.5*b" (names, numbers, + - * /, parentheses).')
@click.option("--let", "lets", multiple=True, metavar="NAME=SENTENCE",
              help="Name a sentence for --expr (repeatable).")
@probe_options
@command
def analogy(spec: Path, sentences: tuple[str, ...], set_file: Path | None, form: str,
            expr: str | None, lets: tuple[str, ...], encoders: tuple[str, ...],
            decoders: tuple[str, ...], overrides: tuple[str, ...], device: str | None,
            cache_dir: Path | None, as_json: bool) -> None:
    """Solve the sentence analogy A : B :: z : C by decoding vec(A) - vec(B) + vec(C) with
    every encoder and decoder of SPEC (Kerscher & Eger 2020, section 4 and Table 2 right); or
    solve and score a whole analogy set (--file: per-item rows, then each pair's accuracy with
    its exact 95% interval); or decode any vector expression over named sentences (--expr).

    Decoders come from the cache as for `harness generate`.
    """
    from harness.analyses.probes import analogy as analogy_probe
    from harness.analyses.probes import analogy_set, decode_expression
    from harness.analyses.probes.expression import parse_lets
    from harness.analyses.probes.text import render_analogy_run
    from harness.cache import Cache, default_root

    if sum((bool(sentences), set_file is not None, expr is not None)) != 1:
        raise HarnessError("give three sentences A B C, or --file SET.tsv, or --expr EXPR "
                           "with --let NAME=SENTENCE")
    if lets and expr is None:
        raise HarnessError("--let names sentences for --expr; give --expr too")
    if expr is not None and form != "paper":
        raise HarnessError("--form applies to A B C and --file; --expr says its own form")
    if sentences and len(sentences) != 3:
        raise HarnessError(f"expected three sentences A B C, got {len(sentences)}")
    named = parse_lets(lets)
    parsed = _probed_spec(spec, overrides, device)
    cache = Cache(cache_dir or default_root())
    selection = {"encoders": encoders, "decoders": decoders}
    if set_file is not None:
        run = analogy_set(parsed, cache, set_file, form, **selection)  # type: ignore[arg-type]
        click.echo(json.dumps(run.to_json(), indent=2, ensure_ascii=False) if as_json
                   else render_analogy_run(run), nl=as_json)
    elif expr is not None:
        _print_probe(decode_expression(parsed, cache, expr, named, **selection), as_json,
                     lambda row: row)
    else:
        a, b, c = sentences
        result = analogy_probe(parsed, cache, a, b, c, form=form, **selection)  # type: ignore[arg-type]
        _print_probe(result, as_json, lambda row: f"{row}  " + (
            "(z in a : b :: z : c)" if form == "paper" else "(d in a : b :: c : d)"))


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
    from harness.results import load_results

    write_reports(run_dir, load_results(run_dir), list(formats))
    click.echo(f"reports written in {run_dir}")


@main.command()
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
    from harness.compare import compare_runs, render_comparison
    from harness.results import load_results

    comparison = compare_runs(load_results(run_a), load_results(run_b), method,
                              decoder_a=decoder_a, decoder_b=decoder_b,
                              run_dirs=(str(run_a), str(run_b)))
    click.echo(json.dumps(comparison.model_dump(mode="json"), indent=2) if as_json
               else render_comparison(comparison))


@main.group()
def data() -> None:
    """Download and prepare data sets (the only commands that use the network)."""


@data.command("senteval")
@click.option("--dir", "directory", type=click.Path(path_type=Path), required=True,
              help="Where to put SentEval's data/downstream layout.")
@click.option("--tasks", default=None, metavar="MR,SST2,...",
              help="Only the files these tasks need (default: every task).")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@command
def data_senteval(directory: Path, tasks: str | None, quiet: bool) -> None:
    """Download SentEval's downstream data from the official sources (as SentEval's
    get_transfer_data.bash does), resumably, and verify every file's line count."""
    from harness.data.senteval import download_senteval

    report = download_senteval(directory, tasks=tasks.split(",") if tasks else None,
                               progress=not quiet)
    click.echo(report.summary())
    if not report.ok:
        raise HarnessError("; ".join(report.problems()))


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
