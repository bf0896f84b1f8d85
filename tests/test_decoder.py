"""The decoder families: the MoS-LSTM with its regularisers and the simple LSTM, on tiny models."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import harness_plugins.decoders as decoders
from harness.errors import DataError
from harness.protocols import BuildContext, ConditionalLanguageModel, TrainingOptions
from harness.testing import check_decoder, check_registration
from harness.training.trainer import load_decoder_state, save_decoder
from harness_plugins.decoders.lstm import MixtureOfSoftmaxesLSTM, build_mos_lstm
from harness_plugins.decoders.options import PAPER_MOS_LSTM, MosLstmOptions, SimpleLstmOptions
from harness_plugins.decoders.regularisation import WeightDropLSTM, embedding_dropout
from harness_plugins.decoders.simple_lstm import SimpleLSTM, build_simple_lstm
from tests.decoder_fakes import FakeVocab, make_model, make_vocab

pytestmark = pytest.mark.usefixtures("one_thread")

# Every regulariser of the paper's configuration, at the paper's rates.
PAPER_DROPOUTS = {k: PAPER_MOS_LSTM[k] for k in ("dropout", "dropout_input", "dropout_layers",
                                                 "dropout_embedding", "dropout_latent",
                                                 "weight_drop")}


def make_mos(vocab: FakeVocab, input_dim: int, seed: int = 0, **options: object):
    torch.manual_seed(seed)
    return build_mos_lstm(MosLstmOptions(**options), BuildContext(vocab=vocab, input_dim=input_dim))


def make_simple(vocab: FakeVocab, input_dim: int, seed: int = 0, **options: object):
    torch.manual_seed(seed)
    return build_simple_lstm(SimpleLstmOptions(**options),
                             BuildContext(vocab=vocab, input_dim=input_dim))



# --- mos-lstm ----------------------------------------------------------------------------------

@pytest.mark.parametrize("experts", [1, 3])
def test_mos_forward_shapes_and_normalised(experts: int) -> None:
    vocab = make_vocab()
    model = make_mos(vocab, 5, layers=2, hidden=12, last_hidden=10, experts=experts).eval()
    assert isinstance(model, ConditionalLanguageModel)
    log_probs = model(torch.randint(0, len(vocab), (3, 7)), torch.randn(3, 5))
    assert log_probs.shape == (3, 7, len(vocab))
    torch.testing.assert_close(torch.logsumexp(log_probs, -1), torch.zeros(3, 7), atol=1e-5, rtol=0)


def test_mos_probabilities_sum_to_one_with_every_dropout_active() -> None:
    vocab = make_vocab()
    model = make_mos(vocab, 5, layers=3, hidden=12, last_hidden=10, experts=4,
                     **PAPER_DROPOUTS).train()
    inputs, vectors = torch.randint(0, len(vocab), (6, 9)), torch.randn(6, 5)
    first, second = model(inputs, vectors), model(inputs, vectors)
    assert not torch.allclose(first, second)  # the masks are drawn: dropout is on
    for log_probs in (first, second):
        total = torch.logsumexp(log_probs.double(), dim=-1)
        torch.testing.assert_close(total, torch.zeros_like(total), atol=1e-6, rtol=0)
        assert (log_probs.exp().sum(-1) - 1).abs().max() < 1e-5


@pytest.mark.parametrize("experts", [1, 3])
def test_mos_conforms_with_paper_regularisers(experts: int) -> None:
    vocab = make_vocab()
    model = make_mos(vocab, 5, layers=3, hidden=12, last_hidden=16, experts=experts,
                     **PAPER_DROPOUTS)
    check_decoder(model, vocab_size=len(vocab), input_dim=5)  # eval: step == forward


def test_mos_uses_the_paper_architecture() -> None:
    vocab = make_vocab(dim=8)
    model = make_mos(vocab, 7, **PAPER_MOS_LSTM)
    assert model.hidden_sizes == (1024, 1024, 650) and model.experts == 5
    assert [r.input_size for r in model.rnns] == [8 + 7, 1024, 1024]
    assert all(r.weight_drop == 0.5 for r in model.rnns)
    assert model.latent.out_features == 5 * 8 and model.prior.out_features == 5
    assert not model.embedding.weight.requires_grad


def test_weight_drop_is_dropconnect_on_hidden_weights_only() -> None:
    torch.manual_seed(0)
    layer = WeightDropLSTM(4, 6, weight_drop=0.5)
    plain = torch.nn.LSTM(4, 6, batch_first=True)
    plain.load_state_dict(layer.state_dict())
    x, state = torch.randn(3, 5, 4), (torch.randn(1, 3, 6), torch.randn(1, 3, 6))

    torch.manual_seed(42)
    out, (h, c) = layer.train()(x, state)
    # The same generator draws the same mask: rebuild the dropped weights by hand.
    torch.manual_seed(42)
    mask = torch.empty_like(layer.weight_hh_l0).bernoulli_(0.5)
    with torch.no_grad():
        plain.weight_hh_l0.copy_(layer.weight_hh_l0 * mask * 2.0)
    expected, (h_ref, c_ref) = plain(x, state)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close((h, c), (h_ref, c_ref))
    assert 0.3 < float((mask == 0).float().mean()) < 0.7

    plain.load_state_dict(layer.state_dict())
    torch.testing.assert_close(layer.eval()(x, state)[0], plain(x, state)[0])  # no drop in eval
    out.sum().backward()
    assert layer.weight_hh_l0.grad is not None and layer.weight_hh_l0.grad.abs().sum() > 0


def test_embedding_dropout_drops_whole_subwords() -> None:
    torch.manual_seed(3)
    weight = torch.randn(10, 4) + 5.0  # no entry is zero by chance
    inputs = torch.tensor([[1, 2, 1, 3], [2, 2, 1, 4]])
    out = embedding_dropout(weight, inputs, 0.5, training=True)
    for row in range(2):
        for col in range(4):
            token = int(inputs[row, col])
            kept = torch.allclose(out[row, col], weight[token] * 2.0)
            assert kept or bool((out[row, col] == 0).all())
            # Every occurrence of a subword shares its fate.
            same = out[inputs == token]
            assert torch.equal(same, same[:1].expand_as(same))
    assert torch.equal(embedding_dropout(weight, inputs, 0.5, training=False), weight[inputs])


def test_weight_drop_model_checkpoint_loads_without_weight_drop(tmp_path: Path) -> None:
    vocab = make_vocab()
    dropped = make_mos(vocab, 5, layers=2, hidden=12, experts=2, weight_drop=0.5)
    save_decoder(dropped, tmp_path)  # safetensors refuses shared tensors: there are none
    plain = make_mos(vocab, 5, seed=9, layers=2, hidden=12, experts=2)
    load_decoder_state(plain, tmp_path)
    inputs, vectors = torch.randint(0, len(vocab), (2, 4)), torch.randn(2, 5)
    torch.testing.assert_close(plain.eval()(inputs, vectors), dropped.eval()(inputs, vectors))


def test_wrong_vector_dimension_names_both_dimensions() -> None:
    model = make_mos(make_vocab(), 5)
    with pytest.raises(DataError, match=r"dimension 5.*dimension 6"):
        model(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 6))


def test_frozen_embeddings_are_tied_and_not_trained() -> None:
    vocab = make_vocab()
    model = make_mos(vocab, 5, hidden=8)  # hidden != E: a projection feeds the tied output
    assert not model.embedding.weight.requires_grad
    assert np.array_equal(model.embedding.weight.numpy(), vocab.vectors)


def test_corrupted_decoder_weights_are_refused(tmp_path: Path) -> None:
    vocab = make_vocab()
    model = make_mos(vocab, 5)
    path = save_decoder(model, tmp_path)
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match="sha256"):
        load_decoder_state(make_mos(vocab, 5), tmp_path)
    with pytest.raises(DataError, match="no trained decoder"):
        load_decoder_state(model, tmp_path / "missing")


# --- simple-lstm -------------------------------------------------------------------------------

@pytest.mark.parametrize("initial_state", ["hidden-cell", "hidden"])
def test_simple_lstm_conforms(initial_state: str) -> None:
    vocab = make_vocab()
    model = make_simple(vocab, 5, layers=2, hidden=12, initial_state=initial_state)
    assert isinstance(model, SimpleLSTM)
    check_decoder(model, vocab_size=len(vocab), input_dim=5)


def test_simple_lstm_maps_the_vector_linearly_into_the_initial_state() -> None:
    vocab = make_vocab()
    model = make_simple(vocab, 5, layers=2, hidden=6).eval()
    vectors = torch.randn(3, 5)
    h0, c0 = model.initial_state(vectors)
    weight, bias = model.initial.weight, model.initial.bias
    mapped = (vectors @ weight.T + bias).view(3, 2, 2, 6)  # (B, h/c, layer, H)
    torch.testing.assert_close(h0, mapped[:, 0].permute(1, 0, 2))
    torch.testing.assert_close(c0, mapped[:, 1].permute(1, 0, 2))
    # The vector is not concatenated to the inputs: the LSTM sees embeddings only.
    assert model.rnn.input_size == vocab.vectors.shape[1]

    hidden_only = make_simple(vocab, 5, layers=2, hidden=6, initial_state="hidden").eval()
    h0, c0 = hidden_only.initial_state(vectors)
    expected = (vectors @ hidden_only.initial.weight.T + hidden_only.initial.bias).view(3, 2, 6)
    torch.testing.assert_close(h0, expected.permute(1, 0, 2))
    assert torch.equal(c0, torch.zeros(2, 3, 6))


def test_simple_lstm_output_depends_on_the_vector() -> None:
    vocab = make_vocab()
    model = make_simple(vocab, 5).eval()
    inputs = torch.randint(0, len(vocab), (1, 4)).expand(2, -1)
    out = model(inputs, torch.randn(2, 5))
    assert not torch.allclose(out[0], out[1])


# --- registration ------------------------------------------------------------------------------

def test_registration_conforms() -> None:
    names = {info.name for info in check_registration(decoders, name="harness-decoders")}
    assert names == {"mos-lstm", "simple-lstm"}


def test_registration_imports_no_torch() -> None:
    code = ("import sys, harness_plugins.decoders as d; "
            "assert 'torch' not in sys.modules, 'torch imported'; "
            "names = []; d.register_decoders(lambda name, factory, **kw: names.append(name)); "
            "assert names == ['mos-lstm', 'simple-lstm'], names")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_model_classes_are_the_plugin_classes() -> None:
    assert isinstance(make_mos(make_vocab(), 3), MixtureOfSoftmaxesLSTM)
    assert isinstance(make_simple(make_vocab(), 3), SimpleLSTM)


def test_mos_latent_dropout_is_locked_over_time() -> None:
    """One mask per sentence on the experts' latent vectors, as the MoS code's LockedDropout."""
    vocab = make_vocab()
    model = make_mos(vocab, 5, hidden=12, experts=2, dropout=0.0, dropout_input=0.0,
                     dropout_layers=0.0, dropout_latent=0.5).train()
    g = torch.randn(1, 6, 12)
    latent = torch.tanh(model.latent(g))
    torch.manual_seed(5)
    out = model._output(g)
    torch.manual_seed(5)
    mask = latent.new_empty(1, 1, latent.size(2)).bernoulli_(0.5) * 2.0
    dropped = (latent * mask).unflatten(-1, (2, vocab.vectors.shape[1]))
    logits = F.linear(dropped, model.embedding.weight, model.output_bias)
    prior = F.log_softmax(model.prior(g), dim=-1)
    expected = torch.logsumexp(prior.unsqueeze(-1) + F.log_softmax(logits, -1), dim=-2)
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("family", ["mos-lstm", "simple-lstm"])
def test_standardisation_uses_the_training_set_statistics(family: str, tmp_path: Path) -> None:
    """The trainer hands the decoder the mean and variance of its training rows (validation
    rows excluded); training and generation then standardise alike, whatever the batch."""
    from harness.training.batches import split_validation
    from harness.training.trainer import train_decoder

    vocab = make_vocab()
    rng = np.random.default_rng(0)
    vectors = rng.normal(3.0, 2.0, size=(20, 6)).astype(np.float32)
    ids = [rng.integers(3, 24, size=rng.integers(1, 5)).tolist() for _ in range(20)]
    if family == "mos-lstm":
        model = make_model(vocab, 6, hidden=8, standardise=True, dropout=0.0,
                           dropout_input=0.0, dropout_layers=0.0)
    else:
        model = SimpleLSTM(vocab.vectors, 6, hidden=8, standardise=True, dropout=0.0,
                           dropout_input=0.0, dropout_layers=0.0)
    train_decoder(model, vocab, vectors, ids,
                  TrainingOptions(epochs=1, batch_size=4, val_fraction=0.25), seed=1,
                  device="cpu", checkpoint_dir=tmp_path / "ckpt", log_path=tmp_path / "log",
                  progress=False)
    train_rows, _ = split_validation(20, 0.25, 1)
    np.testing.assert_allclose(model.vector_norm.running_mean, vectors[train_rows].mean(0),
                               rtol=1e-5)
    np.testing.assert_allclose(model.vector_norm.running_var, vectors[train_rows].var(0),
                               rtol=1e-5)
    inputs = torch.tensor([[1, 5, 6], [1, 7, 8]])
    with torch.no_grad():
        pair = model.train()(inputs, torch.from_numpy(vectors[:2]))
        alone = model(inputs[:1], torch.from_numpy(vectors[:1]))
        torch.testing.assert_close(alone[0], pair[0])  # no batch statistics
        torch.testing.assert_close(model.eval()(inputs, torch.from_numpy(vectors[:2])), pair)


@pytest.mark.parametrize("family", ["mos-lstm", "simple-lstm"])
def test_lstms_stay_in_float32_under_autocast(family: str) -> None:
    """Autocast would run LSTMs in float16; they run in float32 and only the output layer
    follows autocast, in `forward` and `step` alike (CPU autocast stands in for CUDA's)."""
    vocab = make_vocab()
    model = (make_model(vocab, 6, layers=2, hidden=8, experts=2) if family == "mos-lstm"
             else SimpleLSTM(vocab.vectors, 6, layers=2, hidden=8)).eval()
    vectors, inputs = torch.randn(3, 6), torch.tensor([[1, 5, 6, 7]] * 3)
    with torch.no_grad():
        exact = model(inputs, vectors)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            mixed = model(inputs, vectors)
            state = model.initial_state(vectors)
            steps = []
            for t in range(inputs.size(1)):
                log_probs, state = model.step(inputs[:, t], vectors, state)
                steps.append(log_probs)
    layers = state.layers if family == "mos-lstm" else [state]
    assert all(h.dtype == torch.float32 and c.dtype == torch.float32 for h, c in layers)
    torch.testing.assert_close(torch.stack(steps, 1).float(), mixed.float(), atol=2e-2,
                               rtol=0)
    torch.testing.assert_close(mixed.float(), exact, atol=5e-2, rtol=0)  # bf16 output layer
