"""Options of the decoder families (no torch import: `harness list` reads these)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from harness.plugin import DecoderOptions

PAPER_MOS_LSTM: dict[str, Any] = {
    "layers": 3, "hidden": 1024, "last_hidden": 650, "experts": 5,
    "dropout": 0.4, "dropout_layers": 0.2, "dropout_input": 0.55, "dropout_embedding": 0.1,
    "dropout_latent": 0.29, "weight_drop": 0.5, "freeze_embeddings": True, "standardise": False,
}
"""The released Vec2Sent configuration of `mos-lstm` (maruker/vec2sent, lstm/model_utils.py:
`get_model`; paper section 3: "3 hidden layers with 1024 hidden units"). The defaults of
`MosLstmOptions` are a small CPU preset instead; see docs/decoders.md."""


class EmbeddingOptions(DecoderOptions):
    """Where a decoder's subword embeddings (input and tied output layer) start from."""

    embeddings: Literal["subword", "own"] = Field(
        "subword", description="subword: the run's fastText subword vectors (the paper's: the "
                               "vectors the pooling encoders average); own: drawn uniformly in "
                               "[-0.1, 0.1] (as the MoS code) and trained, so the decoder shares "
                               "nothing with the encoder under test (needs freeze_embeddings: "
                               "false)")

    @model_validator(mode="after")
    def _own_embeddings_train(self) -> EmbeddingOptions:
        if self.embeddings == "own" and self.freeze_embeddings:  # type: ignore[attr-defined]
            raise ValueError("embeddings: own draws the embeddings at random, so they must "
                             "train: set freeze_embeddings: false")
        return self


class MosLstmOptions(EmbeddingOptions):
    """Architecture and training options of the conditional Mixture-of-Softmaxes LSTM.

    Defaults are a small preset that trains on a CPU in minutes; the paper's configuration is
    `PAPER_MOS_LSTM`. The training fields inherited from `DecoderOptions` are read by the
    core's trainer.
    """

    layers: int = Field(1, ge=1, description="number of stacked LSTM layers (paper: 3)")
    hidden: int = Field(256, ge=1, description="hidden units of every layer but the last "
                                               "(paper: 1024)")
    last_hidden: int | None = Field(
        None, ge=1, description="hidden units of the last layer (default: hidden; paper: 650)")
    experts: int = Field(
        1, ge=1, description="softmax experts of the mixture (Yang et al. 2018); 1 = plain "
                             "softmax (paper: 5)")
    dropout: float = Field(0.2, ge=0.0, lt=1.0,
                           description="locked dropout on the last LSTM output (paper: 0.4)")
    dropout_input: float = Field(
        0.1, ge=0.0, lt=1.0,
        description="locked dropout on the [embedding; sentence vector] inputs (paper: 0.55)")
    dropout_layers: float = Field(
        0.1, ge=0.0, lt=1.0, description="locked dropout between LSTM layers (paper: 0.2)")
    dropout_embedding: float = Field(
        0.0, ge=0.0, lt=1.0,
        description="drop whole subwords from the input embedding per batch (paper: 0.1)")
    dropout_latent: float = Field(
        0.0, ge=0.0, lt=1.0,
        description="locked dropout on the experts' latent vectors (paper: 0.29)")
    weight_drop: float = Field(
        0.0, ge=0.0, lt=1.0,
        description="DropConnect on the hidden-to-hidden LSTM weights (paper: 0.5)")
    freeze_embeddings: bool = Field(True, description="keep the tied subword embeddings fixed")
    standardise: bool = Field(
        False, description="standardise sentence vectors per dimension (training-set statistics)")


class SimpleLstmOptions(EmbeddingOptions):
    """Options of the simple LSTM language model of Vec2Sent section 3.3.

    The sentence vector sets the initial state through a linear map instead of being
    concatenated to every input.
    """

    layers: int = Field(1, ge=1, description="number of stacked LSTM layers")
    hidden: int = Field(256, ge=1, description="hidden units of every layer")
    initial_state: Literal["hidden-cell", "hidden"] = Field(
        "hidden-cell", description="what the linear map of the sentence vector initialises: "
                                   "h0 and c0 of every layer, or h0 only (c0 = 0)")
    dropout: float = Field(0.2, ge=0.0, lt=1.0, description="dropout on the last LSTM output")
    dropout_input: float = Field(0.1, ge=0.0, lt=1.0,
                                 description="dropout on the input embeddings")
    dropout_layers: float = Field(0.1, ge=0.0, lt=1.0,
                                  description="dropout between LSTM layers")
    freeze_embeddings: bool = Field(True, description="keep the tied subword embeddings fixed")
    standardise: bool = Field(
        False, description="standardise sentence vectors per dimension (training-set statistics)")
