"""A plugin registering `harness fake-hello`, which `command.py` registers too, and an encoder:
all or nothing means neither lands when that plugin loaded first."""

from __future__ import annotations

import click

from harness.registry.hookspecs import Register, RegisterCommand, hookimpl


@click.command("fake-hello")
def hello() -> None:
    """Another greeting."""
    click.echo("clash")


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    """A second `harness fake-hello`."""
    register(hello)


@hookimpl
def register_encoders(register: Register) -> None:
    """An encoder that lands only with the rest of the plugin."""
    register("fake-clash-encoder", lambda options, context: None, description="never lands")
