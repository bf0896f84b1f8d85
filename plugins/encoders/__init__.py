"""First-party sentence encoders, registered through the same hook as third-party ones.

Registration imports no model code: each factory imports its module when a run builds it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.hookspecs import Register, hookimpl
from harness.protocols import Options

if TYPE_CHECKING:
    from harness.protocols import BuildContext


def _build_avg(options: Options, context: BuildContext) -> Any:
    from .pooling import AverageEncoder

    return AverageEncoder(context)


@hookimpl
def register_encoders(register: Register) -> None:
    """Register the pooling encoders over the run's subword vectors."""
    register("avg", _build_avg, options=Options,
             description="average of the sentence's subword vectors (BPEmb-like, frozen)")
