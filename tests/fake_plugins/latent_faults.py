"""A plugin that registers cleanly yet cannot build its components: one encoder's option has a
default its own type refuses, another's factory imports a module that does not exist."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from harness.protocols import BuildContext, Options
from harness.registry.hookspecs import Register, hookimpl


class BadDefaultOptions(Options):
    """`dim` is declared a positive int, but defaults to a string."""

    dim: int = Field("big", ge=1, description="vector size")  # type: ignore[assignment]
    scale: float = Field(1.0, gt=0, description="a fine option")


def build_bad_default(options: BadDefaultOptions, context: BuildContext) -> Any:
    """Never reached by the checks: the default is wrong before any build."""
    raise AssertionError("not built")


def build_missing_module(options: Options, context: BuildContext) -> Any:
    """Imports its implementation when built, as plugins should; the module is missing."""
    from .no_such_implementation import Encoder  # type: ignore[import-not-found]

    return Encoder()


@hookimpl
def register_encoders(register: Register) -> None:
    """Register `bad-default` and `missing-module`."""
    register("bad-default", build_bad_default, options=BadDefaultOptions,
             description="fake plugin: an option default of the wrong type")
    register("missing-module", build_missing_module,
             description="fake plugin: a factory whose module cannot be imported")
