"""A plugin adding commands to the `harness` CLI: `harness fake-hello` and `harness data
fake-fetch`, with an encoder beside them."""

from __future__ import annotations

import click

from harness.errors import DataError
from harness.registry.commands import command
from harness.registry.hookspecs import Register, RegisterCommand, hookimpl


@click.command("fake-hello")
@click.argument("who")
@click.option("--shout", is_flag=True, help="Upper case.")
@command
def hello(who: str, shout: bool) -> None:
    """Greet WHO (a fake plugin's command)."""
    if who == "nobody":
        raise DataError("nobody to greet")
    text = f"hello {who}"
    click.echo(text.upper() if shout else text)


@click.command("fake-fetch")
@click.option("--dir", "directory", required=True, help="Where to put nothing.")
@command
def fetch(directory: str) -> None:
    """Fetch nothing into DIR (a fake downloader)."""
    click.echo(f"fetched into {directory}")


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    """`harness fake-hello` and `harness data fake-fetch`."""
    register(hello)
    register(fetch, group="data")


@hookimpl
def register_encoders(register: Register) -> None:
    """An encoder beside the commands (never built here)."""
    register("fake-command-encoder", lambda options, context: None,
             description="lands with the plugin's commands")
