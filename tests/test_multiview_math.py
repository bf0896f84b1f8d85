"""The building blocks of the multi-view encoders against hand-computed values and numpy/SVD."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
import torch

from harness_plugins.encoders.multiview.nice import (
    AdditiveBijection,
    AdditiveCoupling,
    BijectiveDecoder,
)
from harness_plugins.encoders.multiview.objectives import (
    agreement,
    discriminative_loss,
    negative_sampling_loss,
    neighbour_mask,
)
from harness_plugins.encoders.multiview.orthonormal import (
    orthonormal_update_,
    orthonormalise_to_convergence_,
    power_iteration,
    remove_top_component,
)
from harness_plugins.encoders.multiview.training import (
    OrderedCorpus,
    TrainingConfig,
    discriminative_batches,
    epoch_generator,
    generative_batches,
)
from harness_plugins.encoders.multiview.views import RecurrentView, pool_over_time
from harness_plugins.encoders.multiview.word_vectors import (
    WordVectors,
    tokenize,
    train_word_vectors,
)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


# --- orthonormal update, power iteration, component removal -----------------------------------

def test_orthonormal_update_matches_hand_computation() -> None:
    # U U^T = diag(4, 0.25): U' = 1.01 U - 0.01 diag(8, 0.125) on the diagonal.
    wide = torch.tensor([[2.0, 0.0, 0.0], [0.0, 0.5, 0.0]], dtype=torch.float64)
    orthonormal_update_(wide, 0.01)
    expected = torch.tensor([[1.94, 0.0, 0.0], [0.0, 0.50375, 0.0]], dtype=torch.float64)
    assert torch.allclose(wide, expected, atol=1e-12)
    # A tall matrix takes the column form U (U^T U): the same numbers, transposed.
    tall = torch.tensor([[2.0, 0.0], [0.0, 0.5], [0.0, 0.0]], dtype=torch.float64)
    orthonormal_update_(tall, 0.01)
    assert torch.allclose(tall, expected.T, atol=1e-12)


def test_repeated_update_makes_rows_orthonormal() -> None:
    generator = torch.Generator().manual_seed(0)
    u = torch.randn(6, 15, generator=generator, dtype=torch.float64) / 3
    for _ in range(3000):
        orthonormal_update_(u, 0.01)
    assert torch.allclose(u @ u.T, torch.eye(6, dtype=torch.float64), atol=1e-6)


def test_convergence_reaches_the_polar_factor() -> None:
    generator = torch.Generator().manual_seed(1)
    u = torch.randn(8, 20, generator=generator) * 2.5  # singular values well above sqrt(3)
    left, _, right = np.linalg.svd(u.double().numpy(), full_matrices=False)
    iterations = orthonormalise_to_convergence_(u)
    assert iterations < 100
    assert np.allclose(u.numpy(), left @ right, atol=1e-5)  # U Sigma V^T -> U V^T
    assert torch.allclose(torch.linalg.svdvals(u), torch.ones(8), atol=1e-5)


@pytest.mark.parametrize("shape", [(64, 32), (16, 64)])  # N > D, and N < D (paper footnote 2)
def test_power_iteration_agrees_with_svd(shape: tuple[int, int]) -> None:
    generator = torch.Generator().manual_seed(2)
    # Uncentred vectors share a common direction, as sentence vectors do.
    z = torch.randn(*shape, generator=generator, dtype=torch.float64) + 2.0 * torch.linspace(
        1, 2, shape[1], dtype=torch.float64)
    top = torch.from_numpy(np.linalg.svd(z.numpy())[2][0])
    five = power_iteration(z, iterations=5)
    assert abs(float(five @ top)) > 0.999
    converged = power_iteration(z, iterations=1000, tolerance=1e-12)
    assert abs(float(converged @ top)) > 1 - 1e-9


def test_power_iteration_of_centred_data_still_converges() -> None:
    generator = torch.Generator().manual_seed(3)
    z = torch.randn(200, 10, generator=generator, dtype=torch.float64) * torch.linspace(
        1, 3, 10, dtype=torch.float64)
    z = z - z.mean(dim=0)
    top = torch.from_numpy(np.linalg.svd(z.numpy())[2][0])
    assert abs(float(power_iteration(z, 1000, 1e-12) @ top)) > 1 - 1e-6


def test_remove_top_component() -> None:
    assert torch.equal(remove_top_component(torch.tensor([[3.0, 4.0]]), torch.tensor([1.0, 0.0])),
                       torch.tensor([[0.0, 4.0]]))
    generator = torch.Generator().manual_seed(4)
    z = torch.randn(5, 7, generator=generator, dtype=torch.float64)
    u = torch.nn.functional.normalize(torch.randn(7, generator=generator, dtype=torch.float64),
                                      dim=0)
    assert torch.allclose(remove_top_component(z, u) @ u, torch.zeros(5, dtype=torch.float64),
                          atol=1e-12)


# --- NICE bijection --------------------------------------------------------------------------

def test_coupling_matches_hand_computation() -> None:
    coupling = AdditiveCoupling(2, hidden=1)
    with torch.no_grad():  # m(x1) = 3 relu(2 x1) + 1
        coupling.m[0].weight.fill_(2.0)
        coupling.m[0].bias.zero_()
        coupling.m[2].weight.fill_(3.0)
        coupling.m[2].bias.fill_(1.0)
    y = coupling(torch.tensor([[1.0, 5.0]]))
    assert torch.equal(y, torch.tensor([[1.0, 12.0]]))
    assert torch.equal(coupling.inverse(y), torch.tensor([[1.0, 5.0]]))


@pytest.mark.parametrize("layers", [1, 2, 3])
def test_bijection_inverts_exactly(layers: int) -> None:
    torch.manual_seed(5)
    bijection = AdditiveBijection(33, hidden=40, layers=layers)  # odd: unequal halves
    with torch.no_grad():  # shifts of the size of the input, not a near-identity map
        for parameter in bijection.parameters():
            parameter.mul_(1.5).add_(0.05)
        z = torch.randn(50, 33)
        y = bijection(z)
        assert float((y - z).abs().max()) > 1.0
        assert float((bijection.inverse(y) - z).abs().max()) < 1e-5
        assert float((bijection(bijection.inverse(z)) - z).abs().max()) < 1e-5
        # The first layer passes its fixed half through untouched.
        first = bijection.layers[0]
        assert torch.equal(first(z)[:, :first.split], z[:, :first.split])


def test_bijection_inverse_is_exact_up_to_rounding_even_for_huge_shifts() -> None:
    torch.manual_seed(5)
    bijection = AdditiveBijection(33, hidden=40, layers=3).double()
    with torch.no_grad():
        for parameter in bijection.parameters():
            parameter.mul_(3.0).add_(0.1)
        z = torch.randn(50, 33, dtype=torch.float64)
        y = bijection(z)
        assert float(y.abs().max()) > 100.0
        assert float((bijection.inverse(y) - z).abs().max()) < 1e-9


def test_bijective_decoder_inverse_is_a_right_inverse() -> None:
    torch.manual_seed(6)
    decoder = BijectiveDecoder(in_dim=24, out_dim=10, hidden=12)
    x = torch.randn(30, 10)
    with torch.no_grad():
        assert float((decoder(decoder.inverse(x)) - x).abs().max()) < 1e-5


# --- losses -----------------------------------------------------------------------------------

def test_negative_sampling_loss_matches_hand_computation() -> None:
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    targets = torch.tensor([[[2.0, 0.0], [9.0, 9.0]], [[5.0, 5.0], [5.0, 5.0]]])
    mask = torch.tensor([[True, False], [False, False]])  # the second sentence has no target
    noise = torch.tensor([[[[1.0, 0.0], [0.0, 1.0]], [[7.0, 7.0], [7.0, 7.0]]],
                          [[[1.0, 1.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]]]])
    expected = -(math.log(_sigmoid(2.0)) + math.log(_sigmoid(-1.0)) + math.log(_sigmoid(0.0)))
    assert float(negative_sampling_loss(x, targets, mask, noise)) == pytest.approx(expected)


def test_agreement_matches_hand_computation() -> None:
    z_f = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    z_g = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    r = 1 / math.sqrt(2)
    expected = torch.tensor([[2.0, r], [r, 2 * r]])
    assert torch.allclose(agreement(z_f, z_g), expected, atol=1e-6)


def test_neighbour_mask_stays_inside_documents() -> None:
    mask = neighbour_mask(np.array([0, 0, 0, 1, 1]), window=1)
    expected = torch.tensor([[1, 1, 0, 0, 0],
                             [1, 1, 1, 0, 0],
                             [0, 1, 1, 0, 0],
                             [0, 0, 0, 1, 1],
                             [0, 0, 0, 1, 1]], dtype=torch.bool)
    assert torch.equal(mask, expected)


def test_discriminative_loss_matches_hand_computation() -> None:
    a = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    positives = torch.tensor([[False, True], [True, False]])
    assert float(discriminative_loss(a, torch.tensor(0.0), positives)) == pytest.approx(
        math.log(1 + math.exp(-1)))
    # tau = 1/2 doubles the contrast.
    assert float(discriminative_loss(a, torch.tensor(math.log(0.5)), positives)) == \
        pytest.approx(math.log(1 + math.exp(-2)), rel=1e-6)


# --- views and pooling ------------------------------------------------------------------------

def test_pooling_over_valid_steps() -> None:
    states = torch.tensor([[[1.0, 2.0], [3.0, 0.0], [100.0, 100.0]],
                           [[7.0, 7.0], [7.0, 7.0], [7.0, 7.0]]])
    maximum, mean, minimum = pool_over_time(states, torch.tensor([2, 0]))
    assert torch.equal(maximum, torch.tensor([[3.0, 2.0], [0.0, 0.0]]))
    assert torch.equal(mean, torch.tensor([[2.0, 1.0], [0.0, 0.0]]))
    assert torch.equal(minimum, torch.tensor([[1.0, 0.0], [0.0, 0.0]]))


def test_recurrent_view_ignores_padding_and_returns_both_final_states() -> None:
    torch.manual_seed(7)
    view = RecurrentView(input_dim=5, hidden=4)
    words = torch.randn(1, 3, 5)
    alone_states, alone_last = view(words, torch.tensor([3]))
    padded = torch.cat([words, torch.randn(1, 4, 5)], dim=1)
    batch = torch.cat([padded, torch.randn(1, 7, 5)])
    states, last = view(batch, torch.tensor([3, 7]))
    assert torch.allclose(states[0, :3], alone_states[0], atol=1e-6)
    assert torch.equal(states[0, 3:], torch.zeros(4, 8))
    assert torch.allclose(last[0], alone_last[0], atol=1e-6)
    # Forward direction after the last word, backward direction after the first.
    assert torch.allclose(alone_last[0], torch.cat([alone_states[0, 2, :4],
                                                    alone_states[0, 0, 4:]]), atol=1e-6)
    empty_states, empty_last = view(batch, torch.tensor([0, 7]))
    assert torch.equal(empty_last[0], torch.zeros(8))


# --- word vectors and the ordered corpus ------------------------------------------------------

def test_tokenize() -> None:
    assert tokenize("Anna's cat, 2 dogs.") == ["anna", "'", "s", "cat", ",", "2", "dogs", "."]
    assert tokenize("Anna ran", lowercase=False) == ["Anna", "ran"]


def test_word_vectors_lookup_noise_and_round_trip(tmp_path) -> None:
    vectors = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    words = WordVectors(["", "a", "b"], np.array([0, 16, 1]), vectors, lowercase=True)
    assert words.ids("A c b") == [1, 0, 2]
    # Unigram^0.75: 16^0.75 = 8, 1^0.75 = 1.
    assert np.allclose(words.noise_distribution(), [0.0, 8 / 9, 1 / 9])
    words.save(tmp_path)
    loaded = WordVectors.load(tmp_path)
    assert loaded.words == words.words and np.array_equal(loaded.vectors, vectors)
    assert np.array_equal(loaded.counts, words.counts) and loaded.lowercase


def test_trained_word_vectors_keep_frequent_words_only() -> None:
    sentences = ["the cat sat on the mat", "", "the dog sat", "a bird flew"] * 3 + ["rare"]
    words = train_word_vectors(sentences, dim=8, epochs=2, min_count=3)
    counts = Counter(w for s in sentences for w in tokenize(s))
    assert set(words.words[1:]) == {w for w, c in counts.items() if c >= 3}
    assert all(words.counts[words.index[w]] == counts[w] for w in words.words[1:])
    assert np.array_equal(words.vectors[0], np.zeros(8)) and words.ids("rare") == [0]
    assert np.all(np.linalg.norm(words.vectors[1:], axis=1) > 0)


def _toy_words() -> WordVectors:
    vectors = np.array([[0, 0], [1, 0], [0, 1]], dtype=np.float32)
    return WordVectors(["", "a", "b"], np.array([0, 3, 2]), vectors, lowercase=True)


def test_ordered_corpus_documents_and_next_sentence_pairs() -> None:
    lines = ["a b", "b", "", "a", "", "", "b a", "c"]
    corpus = OrderedCorpus.from_sentences(lines, _toy_words())
    assert [r.tolist() for r in corpus.ids] == [[1, 2], [2], [1], [2, 1], [0]]
    assert corpus.documents.tolist() == [0, 0, 1, 2, 2]
    # 1 -> 2 and 2 -> 3 cross blank lines; "c" has no in-vocabulary word to predict.
    assert corpus.next_sentence_pairs().tolist() == [0]


def test_batches_hold_the_next_sentence_and_neighbours() -> None:
    lines = ["a b", "b b a", "a", "", "b", "a a"]
    words = _toy_words()
    corpus = OrderedCorpus.from_sentences(lines, words)
    config = TrainingConfig(kind="generative", epochs=1, batch_size=8, lr=1e-3, clip=1.0,
                            seed=1, negatives=3, window=1)
    noise = torch.as_tensor(words.noise_distribution())
    pairs = corpus.next_sentence_pairs()
    (batch,) = list(generative_batches(corpus, pairs, config, noise, epoch_generator(1, 1)))
    for row in range(len(pairs)):
        source = batch.word_ids[row, :int(batch.lengths[row])].tolist()
        i = next(k for k in pairs if corpus.ids[k].tolist() == source)
        width = len(corpus.ids[i + 1])
        assert batch.target_ids[row, :width].tolist() == corpus.ids[i + 1].tolist()
    assert batch.noise_ids.shape == (*batch.target_ids.shape, 3)
    assert not bool((batch.noise_ids == 0).any())  # absent words are never noise
    (window,) = list(discriminative_batches(corpus, config, epoch_generator(1, 1)))
    assert torch.equal(window.positives, neighbour_mask(corpus.documents, 1))
