"""A plugin whose hook registers one encoder and then raises."""

from harness.registry.hookspecs import Register, hookimpl


def build(options, context):
    """Never called."""
    raise AssertionError("unreachable")


@hookimpl
def register_encoders(register: Register) -> None:
    """Register `fake-partial`, then fail: neither may land."""
    register("fake-partial", build, description="must not land")
    raise RuntimeError("fake plugin exploded while registering")
