"""`harness generate` and `harness analogy`: the probes' commands, which decode a spec's trained
decoders on sentences given on the command line (`queries`).

The probes analysis adds them to the `harness` CLI through the `register_commands` hook, like
any plugin's commands (`harness.analyses.register_commands`). Importing this module imports
click and nothing heavy: each command imports what it runs when it runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from harness.errors import HarnessError
from harness.registry.commands import command
from harness.text.outputs import shown

if TYPE_CHECKING:
    from harness.spec import Spec


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


def _probed_spec(spec: Path, overrides: tuple[str, ...], device: str | None) -> Spec:
    from harness.registry.loader import load_registry
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


@click.command()
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
    from harness.analyses.probes.queries import generate as generate_probe
    from harness.analyses.probes.queries import interpolate
    from harness.errors import DataError
    from harness.util.cache import Cache, default_root

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


@click.command()
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
    from harness.analyses.probes.expression import parse_lets
    from harness.analyses.probes.queries import analogy as analogy_probe
    from harness.analyses.probes.queries import analogy_set, decode_expression
    from harness.analyses.probes.text import render_analogy_run
    from harness.util.cache import Cache, default_root

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


COMMANDS: tuple[click.Command, ...] = (generate, analogy)
"""What `harness.analyses.register_commands` adds to the `harness` CLI."""
