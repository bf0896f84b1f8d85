"""`embeddings: own`: a decoder whose embedding table shares nothing with the run's subword
vectors (the ones pooling encoders average), drawn from the seeded generator and trained."""

from __future__ import annotations

import pytest
import torch
from decoder_fakes import make_model, make_vocab
from pydantic import ValidationError

from harness.training.options import keyed_options
from harness_plugins.decoders.options import MosLstmOptions, SimpleLstmOptions


@pytest.mark.parametrize("family", ["mos-lstm", "simple-lstm"])
def test_own_embeddings_are_drawn_in_range_and_train(family: str) -> None:
    from harness.protocols import BuildContext
    from harness_plugins.decoders.simple_lstm import build_simple_lstm

    vocab = make_vocab(size=30, dim=12)
    if family == "mos-lstm":
        model = make_model(vocab, input_dim=5, embeddings="own", freeze_embeddings=False)
        again = make_model(vocab, input_dim=5, embeddings="own", freeze_embeddings=False)
    else:
        options = SimpleLstmOptions(embeddings="own", freeze_embeddings=False)
        torch.manual_seed(0)
        model = build_simple_lstm(options, BuildContext(vocab=vocab, input_dim=5))
        torch.manual_seed(0)
        again = build_simple_lstm(options, BuildContext(vocab=vocab, input_dim=5))
    weight = model.embedding.weight
    assert weight.shape == (30, 12) and weight.requires_grad
    assert float(weight.detach().abs().max()) <= 0.1
    assert not torch.allclose(weight, torch.from_numpy(vocab.vectors))
    assert torch.equal(weight, again.embedding.weight)  # the core's seed decides the table


def test_subword_embeddings_start_from_the_vocabulary() -> None:
    vocab = make_vocab(size=30, dim=12)
    model = make_model(vocab, input_dim=5)
    assert torch.equal(model.embedding.weight, torch.from_numpy(vocab.vectors))


def test_own_embeddings_must_train() -> None:
    with pytest.raises(ValidationError, match="set freeze_embeddings: false"):
        MosLstmOptions(embeddings="own")


def test_the_default_keeps_the_cache_keys_of_earlier_decoders() -> None:
    default = MosLstmOptions().model_dump(mode="json")
    assert "embeddings" not in keyed_options(default)
    own = MosLstmOptions(embeddings="own", freeze_embeddings=False).model_dump(mode="json")
    assert keyed_options(own)["embeddings"] == "own"
