"""Imports fine, then raises inside its register hook."""

from harness.registry.hookspecs import Register, hookimpl


def _build(options, context):  # never called: registration fails first
    raise AssertionError("unreachable")


@hookimpl
def register_encoders(register: Register) -> None:
    """Register one encoder, then fail: the encoder must not land either."""
    register("broken-register-encoder", _build, description="lands only if registration succeeds")
    raise RuntimeError("broken-register fails on purpose while registering")
