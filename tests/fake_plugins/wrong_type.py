"""A plugin registering an encoder whose factory is not callable."""

from harness.registry.hookspecs import Register, hookimpl


@hookimpl
def register_encoders(register: Register) -> None:
    """Pass a string as the factory."""
    register("fake-wrong-type", "a string, not a factory", description="bad factory")
