"""First-party decoder families, registered through the same hook as third-party ones.

Registration imports no torch: the model module is imported only when a run builds a decoder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.hookspecs import Register, hookimpl

from .options import MosLstmOptions

if TYPE_CHECKING:
    from harness.protocols import BuildContext

    from .lstm import MixtureOfSoftmaxesLSTM


def _build_mos_lstm(options: MosLstmOptions, context: BuildContext) -> MixtureOfSoftmaxesLSTM:
    """A new conditional MoS-LSTM decoder (imports torch on first use)."""
    from .lstm import build_mos_lstm

    return build_mos_lstm(options, context)


@hookimpl
def register_decoders(register: Register) -> None:
    """Register the conditional LSTM decoder of Vec2Sent (Kerscher & Eger 2020, section 3)."""
    register(
        "mos-lstm",
        _build_mos_lstm,
        description="conditional LSTM language model with a mixture-of-softmaxes output "
                    "(Vec2Sent; Yang et al. 2018)",
        options=MosLstmOptions,
    )
