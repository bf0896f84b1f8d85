"""Implements a misspelt hook (`register_encoder`, singular): pluggy's check_pending refuses it."""

from harness.registry.hookspecs import Register, hookimpl


def _build(options, context):  # never called
    raise AssertionError("unreachable")


@hookimpl
def register_encoder(register: Register) -> None:
    """Misspelt: the hook is `register_encoders`."""
    register("broken-hookname-encoder", _build, description="never registered")
