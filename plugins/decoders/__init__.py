"""First-party decoder families, registered through the same hook as third-party ones.

Registration imports no torch: the model modules are imported only when a run builds a decoder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.plugin import Register, hookimpl

from .options import MosLstmOptions, SimpleLstmOptions

if TYPE_CHECKING:
    from harness.plugin import BuildContext

    from .lstm import MixtureOfSoftmaxesLSTM
    from .simple_lstm import SimpleLSTM


def _build_mos_lstm(options: MosLstmOptions, context: BuildContext) -> MixtureOfSoftmaxesLSTM:
    """A new conditional MoS-LSTM decoder (imports torch on first use)."""
    from .lstm import build_mos_lstm

    return build_mos_lstm(options, context)


def _build_simple_lstm(options: SimpleLstmOptions, context: BuildContext) -> SimpleLSTM:
    """A new simple LSTM decoder (imports torch on first use)."""
    from .simple_lstm import build_simple_lstm

    return build_simple_lstm(options, context)


@hookimpl
def register_decoders(register: Register) -> None:
    """Register the decoders of Vec2Sent (Kerscher & Eger 2020, sections 3 and 3.3)."""
    register(
        "mos-lstm",
        _build_mos_lstm,
        description="conditional LSTM language model with a mixture-of-softmaxes output "
                    "(Vec2Sent; Yang et al. 2018)",
        options=MosLstmOptions,
    )
    register(
        "simple-lstm",
        _build_simple_lstm,
        description="plain LSTM language model whose initial state is a linear map of the "
                    "sentence vector (Vec2Sent section 3.3)",
        options=SimpleLstmOptions,
    )
