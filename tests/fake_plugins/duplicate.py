"""A plugin registering a new encoder and one named `avg`, which the first-party plugin owns."""

from harness.registry.hookspecs import Register, hookimpl


def build(options, context):
    """Never called."""
    raise AssertionError("unreachable")


@hookimpl
def register_encoders(register: Register) -> None:
    """Register `fake-extra` and a duplicate `avg`: all or nothing means neither lands."""
    register("fake-extra", build, description="lands only with the rest of the plugin")
    register("avg", build, description="duplicate of the first-party avg")
