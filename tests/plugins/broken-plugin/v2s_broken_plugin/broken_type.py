"""Registers an encoder whose factory is a string, not a callable."""

from harness.registry.hookspecs import Register, hookimpl


@hookimpl
def register_encoders(register: Register) -> None:
    """Pass a string where the factory belongs."""
    register("broken-type-encoder", "not a factory", description="the factory is a str")
