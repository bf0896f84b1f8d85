"""The control encoders: random-gaussian (no information, the decoder's floor) and random-lstm
(an untrained BiLSTM-Max, Wieting & Kiela 2019)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from harness.errors import HarnessError
from harness.protocols import BuildContext, Options
from harness.synthetic import generate_sentences
from harness.testing import check_encoder, check_registration
from harness.training.trainer import train_decoder
from harness.vectors import open_vectors, write_vectors
from harness.vocab import SubwordVocab, train_subword_vocab
from harness_plugins import encoders
from harness_plugins.decoders.lstm import build_mos_lstm
from harness_plugins.decoders.options import MosLstmOptions
from harness_plugins.encoders.controls import RandomGaussianEncoder, RandomLstmEncoder
from harness_plugins.encoders.options import RandomGaussianOptions, RandomLstmOptions
from harness_plugins.encoders.pooling import AverageEncoder

pytestmark = pytest.mark.usefixtures("one_thread")

INFOS = {info.name: info for info in check_registration(encoders)}


def build(name: str, spec_seed: int = 1, vocab: SubwordVocab | None = None, **options: object):
    """The registered encoder `name`, built as a run with seed `spec_seed` builds it."""
    info = INFOS[name]
    return info.factory(info.options(**options), BuildContext(seed=spec_seed, vocab=vocab))


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    """3,000 lower-cased synthetic sentences (with duplicates, as the quickstart corpus has)."""
    return [sentence.lower() for sentence in generate_sentences("quickstart", 3000, 1)]


@pytest.fixture(scope="module")
def vocab(corpus, tmp_path_factory) -> SubwordVocab:
    return train_subword_vocab(corpus, tmp_path_factory.mktemp("vocab"), bpe_size=300, dim=32,
                               epochs=5)


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity."""
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


# ---------------------------------------------------------------------------- registration


def test_both_controls_are_registered_with_their_options():
    assert isinstance(build("random-gaussian"), RandomGaussianEncoder)
    assert INFOS["random-gaussian"].options is RandomGaussianOptions
    assert INFOS["random-lstm"].options is RandomLstmOptions
    assert not INFOS["random-gaussian"].trainable and not INFOS["random-lstm"].trainable
    assert build("random-gaussian").dim == 300
    assert build("random-gaussian", dim=7).dim == 7


def test_random_lstm_needs_the_run_vocabulary():
    with pytest.raises(HarnessError, match="'random-lstm' needs the run's subword vocabulary"):
        build("random-lstm")


def test_fingerprints_name_the_seed(vocab):
    assert build("random-gaussian", 1).fingerprint() != build("random-gaussian", 2).fingerprint()
    assert build("random-gaussian", 1).fingerprint() == build("random-gaussian", 1).fingerprint()
    assert (build("random-lstm", 1, vocab).fingerprint()
            != build("random-lstm", 2, vocab).fingerprint())
    # The `seed` option wins over the spec's seed.
    assert (build("random-gaussian", 1, seed=5).fingerprint()
            == build("random-gaussian", 2, seed=5).fingerprint())


# ---------------------------------------------------------------------------- random-gaussian


def test_gaussian_is_reproducible_from_the_seed(corpus):
    sentences = corpus[:600]
    first = build("random-gaussian", 1).encode(sentences)
    assert first.shape == (600, 300) and first.dtype == np.float32
    np.testing.assert_array_equal(first, build("random-gaussian", 1).encode(sentences))
    other = build("random-gaussian", 2).encode(sentences)
    assert np.abs(cosines(first, other)).max() < 0.35  # independent: cosines ~ N(0, 1/300)
    np.testing.assert_array_equal(build("random-gaussian", 2, seed=1).encode(sentences), first)


def test_gaussian_vectors_are_standard_normal():
    sentences = [f"sentence {i}" for i in range(2000)]
    vectors = build("random-gaussian", 3).encode(sentences).astype(np.float64)
    # 600,000 draws: the mean's standard error is 0.0013 and the std's 0.0009; bounds ~8x that.
    assert abs(vectors.mean()) < 0.01
    assert abs(vectors.std() - 1.0) < 0.01
    # Dimensions uncorrelated: each sample correlation has standard error 1/sqrt(2000) = 0.022.
    correlation = np.corrcoef(vectors, rowvar=False)
    assert np.abs(correlation[~np.eye(300, dtype=bool)]).max() < 0.15
    # Normal, not merely unit variance: a fourth moment of 3 (uniform: 1.8, Laplace: 6).
    assert abs((vectors ** 4).mean() - 3.0) < 0.1


def test_identical_sentences_at_different_positions_get_independent_vectors(corpus):
    encoder = build("random-gaussian")
    repeated = ["the teacher reads a book ."] * 10
    within = encoder.encode(repeated)
    assert np.abs(np.corrcoef(within)[~np.eye(10, dtype=bool)]).max() < 0.35
    # Across splits: a test sentence that also occurs in the training split, at the same index
    # and at another, does not share its training vector (a text hash would give it away).
    train, test = corpus[:256], [corpus[0], corpus[5]] + corpus[1000:1254]
    train_vectors, test_vectors = encoder.encode(train), encoder.encode(test)
    assert abs(cosines(train_vectors[[0]], test_vectors[[0]])[0]) < 0.35
    assert abs(cosines(train_vectors[[5]], test_vectors[[1]])[0]) < 0.35


def test_re_encoding_other_sentences_does_not_reproduce_the_inputs_vectors(corpus):
    """What a `cosine` metric sees at the floor: generated sentences re-encoded, row for row at
    the inputs' positions, are independent of the inputs' vectors."""
    encoder = build("random-gaussian")
    inputs, generated = corpus[:500], corpus[500:1000]
    input_vectors = encoder.encode(inputs)
    similarity = cosines(input_vectors, encoder.encode(generated))
    # 500 cosines of independent 300-d Gaussians: mean ~ N(0, 0.0026^2), each ~ N(0, 0.058^2).
    assert abs(similarity.mean()) < 0.02 and np.abs(similarity).max() < 0.35
    # One generated sentence right changes nothing: its batch differs from the inputs'.
    almost = [inputs[0]] + generated[1:]
    assert abs(cosines(input_vectors[:1], encoder.encode(almost)[:1])[0]) < 0.35
    # The very same batches again: the same vectors (encode is deterministic).
    np.testing.assert_array_equal(encoder.encode(inputs), input_vectors)


def test_gaussian_vectors_survive_a_resumed_encode_stage(corpus, tmp_path):
    """The encode stage writes batch after batch and resumes a killed run at the first
    unwritten batch with a fresh encoder: the vectors are those of one uninterrupted pass,
    and those of `encode` on the whole split with the stage's batch size."""
    sentences, batch_size = corpus[:1000], 128
    path = tmp_path / "train.npy"
    calls = 0

    def dying(batch):
        nonlocal calls
        calls += 1
        if calls == 4:
            raise KeyboardInterrupt  # the process killed during the fourth batch
        return build("random-gaussian").encode(batch, batch_size)

    with pytest.raises(KeyboardInterrupt):
        write_vectors(path, sentences, dying, dim=300, plugin="test", batch_size=batch_size)
    fresh = build("random-gaussian")
    write_vectors(path, sentences, lambda batch: fresh.encode(batch, batch_size), dim=300,
                  plugin="test", batch_size=batch_size)
    np.testing.assert_array_equal(open_vectors(path),
                                  build("random-gaussian").encode(sentences, batch_size))


# ------------------------------------------------------------------------------- random-lstm


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def lstm_direction(weights: dict[str, np.ndarray], suffix: str, inputs: np.ndarray
                   ) -> np.ndarray:
    """Hidden states (T, H) of one LSTM direction over `inputs` (T, E), written out with the
    standard gate equations (PyTorch's gate order: input, forget, cell, output)."""
    w_ih, w_hh = weights[f"weight_ih_l0{suffix}"], weights[f"weight_hh_l0{suffix}"]
    bias = weights[f"bias_ih_l0{suffix}"] + weights[f"bias_hh_l0{suffix}"]
    hidden = w_hh.shape[1]
    h, c, states = np.zeros(hidden), np.zeros(hidden), []
    for x in inputs:
        gates = w_ih @ x + w_hh @ h + bias
        i, f, g, o = (gates[k * hidden:(k + 1) * hidden] for k in range(4))
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        states.append(h)
    return np.array(states)


def bilstm_max_reference(encoder: RandomLstmEncoder, sentence: str) -> np.ndarray:
    """max_t [h_fw(t); h_bw(t)] computed by hand in float64 (Wieting & Kiela 2019, BiLSTM-Max)."""
    weights = {name: p.detach().double().numpy() for name, p in encoder.lstm.named_parameters()}
    inputs = encoder.vocab.vectors[encoder.vocab.encode([sentence])[0]].astype(np.float64)
    forward = lstm_direction(weights, "", inputs)
    backward = lstm_direction(weights, "_reverse", inputs[::-1])
    return np.concatenate([forward.max(axis=0), backward.max(axis=0)])


def test_random_lstm_equals_a_hand_written_bilstm_max(vocab, corpus):
    encoder = build("random-lstm", vocab=vocab, dim=24)
    sentences = corpus[:40:3] + ["a", "the teacher reads a very long book about the sea ."]
    out = encoder.encode(sentences, batch_size=5)
    assert out.shape == (len(sentences), 48) and encoder.dim == 48
    expected = np.stack([bilstm_max_reference(encoder, s) for s in sentences])
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_random_lstm_equals_torch_packed_bidirectional_lstm(vocab, corpus):
    """The two unidirectional runs over right-padded input equal nn.LSTM's own bidirectional
    pass over packed sequences."""
    from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence

    encoder = build("random-lstm", vocab=vocab)
    sentences = corpus[:64]
    sequences = [torch.from_numpy(vocab.vectors[ids]) for ids in vocab.encode(sentences)]
    with torch.no_grad():
        states, _ = encoder.lstm(pack_sequence(sequences, enforce_sorted=False))
        padded, _ = pad_packed_sequence(states, batch_first=True, padding_value=-math.inf)
    np.testing.assert_allclose(encoder.encode(sentences), padded.max(dim=1).values.numpy(),
                               rtol=1e-5, atol=1e-6)


def test_random_lstm_weights_follow_pytorch_default_init(vocab):
    before = torch.get_rng_state()
    encoder = build("random-lstm", vocab=vocab, dim=64)
    assert torch.equal(torch.get_rng_state(), before)  # the global RNG is left alone
    bound = 1 / math.sqrt(64)
    weights = torch.cat([p.flatten() for p in encoder.lstm.parameters()])
    assert weights.abs().max() <= bound and weights.abs().max() > 0.99 * bound
    # Uniform on [-b, b]: mean 0, standard deviation b / sqrt(3) (~84,000 draws).
    assert abs(float(weights.mean())) < 0.01 * bound
    assert abs(float(weights.std()) - bound / math.sqrt(3)) < 0.01 * bound


def test_random_lstm_is_deterministic_and_seeded(vocab, corpus):
    sentences = corpus[:50]
    first = build("random-lstm", 1, vocab).encode(sentences)
    np.testing.assert_array_equal(first, build("random-lstm", 1, vocab).encode(sentences))
    np.testing.assert_array_equal(first, build("random-lstm", 1, vocab).encode(sentences))
    assert not np.allclose(first, build("random-lstm", 2, vocab).encode(sentences), atol=1e-3)


def test_random_lstm_passes_the_conformance_kit(vocab):
    encoder = build("random-lstm", vocab=vocab, dim=16)
    check_encoder(encoder)
    empty = encoder.encode(["", "the teacher reads ."])
    np.testing.assert_array_equal(empty[0], np.zeros(32, dtype=np.float32))
    assert np.abs(empty[1]).max() > 0


# -------------------------------------------------------------------- the floor: no information


def train_val_loss(vocab: SubwordVocab, vectors: np.ndarray, ids: list[list[int]],
                   work: Path) -> float:
    """Validation loss (nats per subword) of a tiny mos-lstm trained to regenerate the sentences
    from `vectors`; the same initial weights, validation split and batch order for any vectors."""
    options = MosLstmOptions(
        layers=1, hidden=32, experts=1, dropout=0.0, dropout_layers=0.0, dropout_input=0.2,
        freeze_embeddings=False, standardise=True, epochs=12, batch_size=32, lr=0.02,
        schedule="plateau", val_fraction=0.2, checkpoint_every=0, log_every=0)
    torch.manual_seed(0)
    model = build_mos_lstm(options, BuildContext(vocab=vocab, input_dim=vectors.shape[1]))
    summary = train_decoder(model, vocab, vectors, ids, options, seed=0, device="cpu",
                            checkpoint_dir=work / "ckpt", log_path=work / "train.jsonl",
                            progress=False)
    assert summary.val_loss is not None
    return summary.val_loss


@pytest.mark.slow
def test_gaussian_vectors_carry_no_information(vocab, corpus, tmp_path):
    """A decoder trained on random-gaussian vectors reaches the validation loss of one trained
    on an informative encoder's vectors shuffled across sentences (both: no information about
    their sentence, so both learn the unconditional language model), while the same vectors
    unshuffled give a clearly lower loss.

    Tolerance, measured over 8 decoder seeds of this set-up (each seed: the same initial
    weights, validation split and batch order for the three runs): (gaussian - shuffled) /
    shuffled had mean -0.2%, standard deviation 1.9%, extremes -2.5% and +3.6%; the informative
    vectors' loss was 10% to 13% below the lower of the two. Hence a 5% band (about 2.6 standard
    deviations) for "the same loss within noise", and "clearly lower" as at least 6% lower.
    With a larger decoder (hidden 64) the Gaussian's loss was systematically ~5% higher: 32
    independent dimensions are easier to memorise training sentences by than shuffled
    (correlated) average vectors, and the overfitting shows in the validation loss. The small
    decoder and input dropout keep that effect below the noise.
    """
    ids = vocab.encode(corpus)
    informative = AverageEncoder(vocab, Options()).encode(corpus)
    shuffled = informative[np.random.default_rng(0).permutation(len(corpus))]
    gaussian = build("random-gaussian", dim=vocab.dim).encode(corpus)
    loss = {name: train_val_loss(vocab, vectors, ids, tmp_path / name)
            for name, vectors in (("gaussian", gaussian), ("shuffled", shuffled),
                                  ("informative", informative))}
    assert abs(loss["gaussian"] - loss["shuffled"]) <= 0.05 * loss["shuffled"], loss
    assert loss["informative"] < 0.94 * min(loss["gaussian"], loss["shuffled"]), loss
