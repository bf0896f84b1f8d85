"""A plugin implementing `register_encoder` (singular), a hook that does not exist."""

from harness.registry.hookspecs import Register, hookimpl


def build(options, context):
    """Never called."""
    raise AssertionError("unreachable")


@hookimpl
def register_encoder(register: Register) -> None:
    """Misspelt hook name."""
    register("fake-misspelt", build, description="never registered")
