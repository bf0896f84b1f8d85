"""Options of the decoder families (no torch import: `harness list` reads these)."""

from __future__ import annotations

from pydantic import Field

from harness.protocols import DecoderOptions


class MosLstmOptions(DecoderOptions):
    """Architecture and training options of the conditional Mixture-of-Softmaxes LSTM.

    The paper's setup (Kerscher & Eger 2020, section 3; released code) is
    `layers=3, hidden=1024, last_hidden=650, experts=5`. The training fields inherited from
    `DecoderOptions` (epochs, batch_size, lr, clip) are read by the core's trainer.
    """

    layers: int = Field(1, ge=1, description="number of stacked LSTM layers")
    hidden: int = Field(256, ge=1, description="hidden units of every layer but the last")
    last_hidden: int | None = Field(
        None, ge=1, description="hidden units of the last layer (default: hidden; paper: 650)")
    experts: int = Field(
        1, ge=1, description="softmax experts of the mixture (Yang et al. 2018); 1 = plain softmax")
    dropout: float = Field(0.2, ge=0.0, lt=1.0, description="dropout on the last LSTM output")
    dropout_input: float = Field(
        0.1, ge=0.0, lt=1.0, description="dropout on [embedding; sentence vector] inputs")
    dropout_layers: float = Field(0.1, ge=0.0, lt=1.0, description="dropout between LSTM layers")
    freeze_embeddings: bool = Field(True, description="keep the tied subword embeddings fixed")
    standardise: bool = Field(
        False, description="standardise sentence vectors per dimension (running statistics)")
