"""Greedy and batched beam search against one-sentence references, the NLL of references, ppl."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from benchmarks.perf.released import PaperStyleMoS, ReleasedStepModel
from harness.errors import DataError
from harness.generation.perplexity import reference_nll
from harness.generation.ranking import best_reachable, rank, released_value
from harness.generation.reference import priority_queue_beam_search, released_beam_search
from harness.generation.released import released_search
from harness.generation.search import Hypothesis, beam_search, greedy_search
from harness.protocols import TrainingOptions
from harness.training.batches import sorted_batches
from harness.training.trainer import train_decoder
from harness_plugins.metrics.ppl import PerplexityMetric
from tests.decoder_fakes import BOS, EOS, FakeVocab, make_model, make_vocab

pytestmark = pytest.mark.usefixtures("one_thread")


class MarkovChain(torch.nn.Module):
    """A language model whose next-token distribution depends on the previous token only."""

    def __init__(self, table: list[list[float]], input_dim: int = 2) -> None:
        super().__init__()
        self.register_buffer("log_table", torch.tensor(table, dtype=torch.float32).log())
        self.input_dim = input_dim

    def forward(self, inputs: torch.Tensor, vectors: torch.Tensor) -> torch.Tensor:
        return self.log_table[inputs]

    def initial_state(self, vectors: torch.Tensor) -> torch.Tensor:
        return torch.zeros(vectors.size(0))

    def step(self, tokens: torch.Tensor, vectors: torch.Tensor,
             state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.log_table[tokens], state

    def reorder_state(self, state: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return state.index_select(0, index)


# Tokens: 0 pad, 1 bos, 2 eos, 3 a, 4 b. From bos: a .55, b .45; after a: a .5, eos .3, b .2;
# after b: b .9, eos .1.
CHAIN = [[0.2] * 5, [0, 0, 0, 0.55, 0.45], [0.2] * 5, [0, 0, 0.3, 0.5, 0.2], [0, 0, 0.1, 0, 0.9]]



@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory):
    """A decoder trained to regenerate 32 random subword sequences from one-hot codes, with
    noisy codes that make its search less certain than on the training vectors."""
    vocab = FakeVocab(np.random.default_rng(0).normal(size=(24, 16)).astype(np.float32))
    rng = np.random.default_rng(0)
    ids = [rng.integers(3, 24, size=rng.integers(2, 7)).tolist() for _ in range(32)]
    vectors = np.eye(32, dtype=np.float32)
    model = make_model(vocab, 32, hidden=64, experts=2, dropout=0.0, dropout_input=0.0,
                       dropout_layers=0.0, freeze_embeddings=False)
    work = tmp_path_factory.mktemp("copy")
    train_decoder(model, vocab, vectors, ids,
                  TrainingOptions(epochs=30, batch_size=8, lr=1e-2, clip=1.0, val_fraction=0.0),
                  seed=1, device="cpu", checkpoint_dir=work / "ckpt",
                  log_path=work / "train.jsonl", progress=False)
    noisy = vectors + np.random.default_rng(3).normal(0, 0.5, vectors.shape).astype(np.float32)
    return model.eval(), ids, vectors, noisy


def log_prob_of(model: torch.nn.Module, vector: np.ndarray, ids: tuple[int, ...],
                ended: bool = True) -> float:
    """Sum of the forward pass's log-probabilities of `ids` (+ eos when it ended)."""
    targets = [*ids, EOS] if ended else list(ids)
    with torch.no_grad():
        log_probs = model(torch.tensor([[BOS, *ids]]), torch.from_numpy(vector[None]))[0]
    return float(sum(log_probs[t, token] for t, token in enumerate(targets)))


# --- ranking -------------------------------------------------------------------------------------

def test_length_penalties_by_hand() -> None:
    assert rank(-6.0, 3, "none") == -6.0
    assert rank(-6.0, 3, "mean") == -2.0
    assert best_reachable(-3.0, 10, "none") == -3.0
    assert best_reachable(-3.0, 10, "mean") == -0.3
    with pytest.raises(ValueError, match="length_penalty"):
        rank(-1.0, 1, "avg")
    # paper: the released `BeamSearchNode.eval`, probability sum / (len + 5/6), len = tokens + 1
    assert released_value(1.2, 3) == 1.2 / (4 + 5 / 6)
    tokens = torch.tensor([1, 3, 99], dtype=torch.float64)
    sums = torch.tensor([0.55, 1.2, 37.1], dtype=torch.float64)
    assert released_value(sums, tokens).tolist() == [p / (n + 1 + 5 / 6) for p, n in
                                                     ((0.55, 1), (1.2, 3), (37.1, 99))]
    with pytest.raises(ValueError, match="summed probabilities"):
        rank(-6.0, 3, "paper")


# --- greedy and beam -----------------------------------------------------------------------------

def test_beam_one_equals_greedy(trained) -> None:
    model, _, vectors, noisy = trained
    vocab = FakeVocab(np.random.default_rng(1).normal(size=(24, 16)).astype(np.float32))
    untrained = make_model(vocab, 32, hidden=16, experts=3)
    for decoder, inputs, max_len in ((model, noisy, 10), (untrained, vectors, 5)):
        greedy = greedy_search(decoder, inputs, bos_id=BOS, eos_id=EOS, max_len=max_len,
                               batch_size=32, device="cpu")
        beam = beam_search(decoder, inputs, beam=1, bos_id=BOS, eos_id=EOS, max_len=max_len,
                           batch_size=32, device="cpu")
        assert [h.ids for h in beam] == [h.ids for h in greedy]
        np.testing.assert_allclose([h.score for h in beam], [h.score for h in greedy], atol=1e-5)
    assert any(len(h.ids) == 5 for h in greedy)  # the untrained model hits max_len


# Ties everywhere: from bos a and b .4 each, eos .2; after a or b: a, b and eos a third each.
TIED = [[0.2] * 5, [0, 0, 0.2, 0.4, 0.4], [0.2] * 5, [0, 0, 1 / 3, 1 / 3, 1 / 3],
        [0, 0, 1 / 3, 1 / 3, 1 / 3]]


def test_searches_break_ties_alike() -> None:
    """Greedy and beam 1 pick the same token among equals, and the batched beam and the
    priority-queue reference rank equal candidates alike (first come, first kept)."""
    chain, vectors = MarkovChain(TIED), np.zeros((3, 2), np.float32)
    kwargs = {"bos_id": BOS, "eos_id": EOS, "max_len": 4, "device": "cpu"}
    greedy = greedy_search(chain, vectors, batch_size=3, **kwargs)
    assert greedy == beam_search(chain, vectors, beam=1, batch_size=3, **kwargs)
    for beam in (2, 3):
        batched = beam_search(chain, vectors, beam=beam, batch_size=3, **kwargs)
        reference = [priority_queue_beam_search(chain, v, beam=beam, **kwargs) for v in vectors]
        assert batched == reference


def test_max_len_must_leave_room_for_a_token() -> None:
    chain = MarkovChain(CHAIN)
    for search in (greedy_search, lambda *a, **k: beam_search(*a, beam=2, **k)):
        with pytest.raises(ValueError, match="max_len must be at least 1"):
            search(chain, np.zeros((1, 2), np.float32), bos_id=BOS, eos_id=EOS, max_len=0,
                   batch_size=1, device="cpu")


SEARCHES = [("none", None), ("mean", None), ("paper", None), ("none", 2), ("paper", 2)]


@pytest.mark.parametrize(("penalty", "stop_after"), SEARCHES)
def test_batched_beam_equals_one_sentence_at_a_time(trained, penalty: str,
                                                    stop_after: int | None) -> None:
    model, _, _, noisy = trained
    kwargs = {"beam": 4, "bos_id": BOS, "eos_id": EOS, "max_len": 8, "device": "cpu",
              "length_penalty": penalty, "stop_after": stop_after}
    batched = beam_search(model, noisy, batch_size=32, **kwargs)
    single = beam_search(model, noisy, batch_size=1, **kwargs)
    assert all(isinstance(h, Hypothesis) for h in batched)
    assert [h.ids for h in batched] == [h.ids for h in single]
    np.testing.assert_allclose([h.score for h in batched], [h.score for h in single], atol=1e-4)
    assert all(len(h.ids) <= 8 and EOS not in h.ids and BOS not in h.ids for h in batched)


@pytest.mark.parametrize(("penalty", "stop_after"), SEARCHES)
def test_batched_beam_equals_priority_queue_reference(trained, penalty: str,
                                                      stop_after: int | None) -> None:
    model, _, _, noisy = trained
    batched = beam_search(model, noisy, beam=5, bos_id=BOS, eos_id=EOS, max_len=8,
                          batch_size=32, device="cpu", length_penalty=penalty,
                          stop_after=stop_after)
    reference = [priority_queue_beam_search(model, v, beam=5, bos_id=BOS, eos_id=EOS, max_len=8,
                                            length_penalty=penalty, stop_after=stop_after)
                 for v in noisy]
    assert [h.ids for h in batched] == [h.ids for h in reference]
    np.testing.assert_allclose([h.score for h in batched], [h.score for h in reference],
                               atol=1e-4)


def test_the_released_forward_pass_finds_the_same_hypotheses(trained) -> None:
    """The generation benchmark's baseline: the released model code on the same weights,
    driven one sentence at a time, returns the batched search's hypotheses."""
    model, _, _, noisy = trained
    released = ReleasedStepModel(model).eval()
    batched = beam_search(model, noisy, beam=5, bos_id=BOS, eos_id=EOS, max_len=8,
                          batch_size=32, device="cpu")
    reference = [priority_queue_beam_search(released, v, beam=5, bos_id=BOS, eos_id=EOS,
                                            max_len=8) for v in noisy]
    assert [h.ids for h in batched] == [h.ids for h in reference]
    np.testing.assert_allclose([h.score for h in batched], [h.score for h in reference],
                               atol=1e-4)


@pytest.mark.parametrize("experts", [1, 3])
def test_the_released_forward_pass_computes_the_harness_model(experts: int) -> None:
    """The benchmarks' paper-style model (packed per-sentence inputs, one nn.LSTM per layer,
    the mixture in probability space) is the same function as `mos-lstm` in eval mode."""
    vocab = make_vocab(size=30, dim=8)
    model = make_model(vocab, 6, layers=2, hidden=20, last_hidden=12, experts=experts,
                       standardise=True).eval()
    model.vector_norm.running_mean.uniform_(-1, 1)
    model.vector_norm.running_var.uniform_(0.5, 2)
    paper = PaperStyleMoS(model).eval()
    sentences = [[BOS, 5, 7, 9, 4], [BOS, 3], [BOS, 8, 8, 29]]
    vectors = torch.randn(3, 6)
    with torch.no_grad():
        prob, _ = paper([torch.tensor(s) for s in sentences], list(vectors), return_prob=True)
        for i, s in enumerate(sentences):
            ours = model(torch.tensor([s]), vectors[i:i + 1])[0].exp()
            torch.testing.assert_close(prob[:len(s), i], ours, atol=1e-6, rtol=1e-5)


def test_unended_hypotheses_are_returned_only_without_ended_ones(trained) -> None:
    model, ids, vectors, _ = trained
    short = beam_search(model, vectors, beam=3, bos_id=BOS, eos_id=EOS, max_len=2, batch_size=32,
                        device="cpu")
    reference = [priority_queue_beam_search(model, v, beam=3, bos_id=BOS, eos_id=EOS, max_len=2)
                 for v in vectors]
    assert [h.ids for h in short] == [h.ids for h in reference]
    for h, vector in zip(short, vectors, strict=True):
        ended = len(h.ids) < 2
        assert h.score == pytest.approx(log_prob_of(model, vector, h.ids, ended), abs=1e-4)
    assert any(len(h.ids) == 2 for h in short)  # sentences longer than 1 subword cannot end


def test_beam_score_is_sum_of_log_probs(trained) -> None:
    model, _, _, noisy = trained
    for penalty in ("none", "paper"):
        out = beam_search(model, noisy[:6], beam=3, bos_id=BOS, eos_id=EOS, max_len=10,
                          batch_size=4, device="cpu", length_penalty=penalty)
        for h, vector in zip(out, noisy[:6], strict=True):
            assert log_prob_of(model, vector, h.ids) == pytest.approx(h.score, abs=1e-4)


def test_beam_regenerates_training_sentences(trained) -> None:
    model, ids, vectors, _ = trained
    out = beam_search(model, vectors, beam=4, bos_id=BOS, eos_id=EOS, max_len=10, batch_size=16,
                      device="cpu")
    assert sum(list(h.ids) == s for h, s in zip(out, ids, strict=True)) >= 0.8 * len(ids)


def test_an_unknown_length_penalty_is_refused(trained) -> None:
    model, _, _, noisy = trained
    kwargs = {"beam": 3, "bos_id": BOS, "eos_id": EOS, "max_len": 8, "batch_size": 32,
              "device": "cpu"}
    with pytest.raises(ValueError, match="length_penalty"):
        beam_search(model, noisy, length_penalty="average", **kwargs)


# --- the released search on hand-computed examples ----------------------------------------------

def test_released_search_on_a_markov_chain() -> None:
    """Worked by hand (see CHAIN), beam 2, max_len 5. A node's value is its probability sum P
    over (tokens + 1 + 5/6); a round pops best first until 2 nodes can be expanded.

    1: root -> a (P .55, value .194), b (.45, .159).
    2: pops a, b -> aa (1.05, .274), a$ (.85, .222), bb (1.35, .352), b$ (.55, .143).
    3: pops bb, aa -> bbb (2.25, .466), bb$ (1.45, .300), aaa (1.55, .321), aa$ (1.35, .279).
    4: pops bbb, aaa -> bbbb (3.15, .540), bbb$ (2.35, .403), aaaa (2.05, .351), aaa$ (1.85, .317).
    5: pops bbbb, bbb$ (ended: 1), aaaa -> bbbbb (4.05, .593), bbbb$ (3.25, .476), aaaaa (2.55,
       .373), aaaa$ (2.35, .344). With n_required = 1 the search stops here: b b b.
    6: pops everything: bbbbb and aaaaa are at max_len (dropped), the 7 others ended: 8 ended
       >= 5, stop. The best ended is bbbb$ (.476): b b b b. Beam search keeps the two b/a
       chains to max_len, greedy follows a-a-a-a-a."""
    chain = MarkovChain(CHAIN)
    vector = np.zeros(2, dtype=np.float32)
    kwargs = {"bos_id": BOS, "eos_id": EOS, "max_len": 5}
    first = released_beam_search(chain, vector, beam=2, finished=1, **kwargs)
    assert first.ids == (4, 4, 4)
    assert first.score == pytest.approx(math.log(0.45) + 2 * math.log(0.9) + math.log(0.1),
                                        abs=1e-5)
    fifth = released_beam_search(chain, vector, beam=2, **kwargs)  # n_required = 5
    assert fifth.ids == (4, 4, 4, 4)
    assert fifth.score == pytest.approx(math.log(0.45) + 3 * math.log(0.9) + math.log(0.1),
                                        abs=1e-5)
    vectors = np.zeros((3, 2), dtype=np.float32)
    for stop_after, expected in ((1, first), (None, fifth), (5, fifth)):
        batched = beam_search(chain, vectors, beam=2, batch_size=2, device="cpu",
                              length_penalty="paper", stop_after=stop_after, **kwargs)
        assert [h.ids for h in batched] == [expected.ids] * 3
        assert [h.score for h in batched] == pytest.approx([expected.score] * 3, abs=1e-6)
    beam = beam_search(chain, vector[None], beam=2, batch_size=1, device="cpu", **kwargs)[0]
    assert beam.ids == (4, 4, 4, 4, 4)
    greedy = greedy_search(chain, vector[None], batch_size=1, device="cpu", **kwargs)[0]
    assert greedy.ids == (3, 3, 3, 3, 3)


class PrefixTree(torch.nn.Module):
    """A language model whose next-token distribution depends on the whole prefix: those in
    DISTRIBUTIONS, else FLAT. The state is a prefix number (B,)."""

    def __init__(self, distributions: dict[tuple[int, ...], dict[int, float]],
                 flat: dict[int, float], vocab: int = 10) -> None:
        super().__init__()
        self.distributions, self.flat, self.vocab = distributions, flat, vocab
        self.prefixes: list[tuple[int, ...]] = [()]
        self.numbers: dict[tuple[int, ...], int] = {(): 0}

    def initial_state(self, vectors: torch.Tensor) -> torch.Tensor:
        return torch.zeros(vectors.size(0), dtype=torch.long)

    def reorder_state(self, state: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return state.index_select(0, index)

    def step(self, tokens: torch.Tensor, vectors: torch.Tensor,
             state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        log_probs = torch.full((len(tokens), self.vocab), float("-inf"))
        numbers = []
        for row, (token, number) in enumerate(zip(tokens.tolist(), state.tolist())):
            prefix = self.prefixes[number] + (token,)
            if prefix not in self.numbers:
                self.numbers[prefix] = len(self.prefixes)
                self.prefixes.append(prefix)
            numbers.append(self.numbers[prefix])
            for word, p in self.distributions.get(prefix[1:], self.flat).items():
                log_probs[row, word] = math.log(p)
        return log_probs, torch.tensor(numbers)


A, B, C, D, E, F, G = 3, 4, 5, 6, 7, 8, 9
FLAT = {C: .15, D: .14, E: .13, F: .13, G: .12, A: .12, B: .11, EOS: .10}
TREE = {(): {A: .6, B: .4}, (A,): {A: .5, B: .45, EOS: .05}, (B,): {A: .6, B: .35, EOS: .05},
        (B, A): {EOS: .9, A: .1}}


def test_released_search_expands_nodes_left_in_its_queue() -> None:
    """Worked by hand, beam 2, stop at the first ended hypothesis (values: P / (tokens + 11/6)).

    1: root -> a (.6, .212), b (.4, .141).
    2: pops a, b -> aa (1.1, .287), ab (1.05, .274), ba (1.0, .261), bb (.75, .196).
    3: pops aa, ab; their best continuations (FLAT: c .15, d .14) are worth less than the
       queued ba: aac (1.25, .259), aad (1.24, .257), abc (1.2, .248), abd (1.19, .246).
    4: pops ba, queued in round 2, and aac -> ba$ (1.9, .393), baa (1.1, .228), ...
    5: pops ba$ first: 1 ended, so the search stops: b a. A beam of 2 would have dropped ba in
       round 3 (log-probabilities: aa -.69 and ab -.80 beat ba -1.43)."""
    tree = PrefixTree(TREE, FLAT)
    kwargs = {"beam": 2, "bos_id": BOS, "eos_id": EOS, "max_len": 6}
    vectors = np.zeros((2, 2), dtype=np.float32)
    released = released_beam_search(tree, vectors[0], finished=1, **kwargs)
    assert released.ids == (B, A)
    assert released.score == pytest.approx(math.log(0.4 * 0.6 * 0.9), abs=1e-6)
    batched = released_search(tree, vectors, batch_size=2, device="cpu", stop_after=1, **kwargs)
    assert batched == [released, released]
    beam = beam_search(tree, vectors, batch_size=2, device="cpu", **kwargs)
    assert all(h.ids[:1] == (A,) for h in beam)


@pytest.mark.parametrize(("beam", "stop_after"), [(3, None), (5, 1), (10, 3)])
def test_batched_released_search_equals_the_released_algorithm(trained, beam: int,
                                                               stop_after: int | None) -> None:
    """`paper` in a run: the batched search returns, sentence by sentence, what the released
    algorithm (one priority queue per sentence, as maruker/vec2sent's `beam_decode`) returns."""
    model, _, vectors, noisy = trained
    inputs = np.concatenate([vectors[:8], noisy])
    batched = beam_search(model, inputs, beam=beam, bos_id=BOS, eos_id=EOS, max_len=9,
                          batch_size=16, device="cpu", length_penalty="paper",
                          stop_after=stop_after)
    finished = 5 if stop_after is None else stop_after
    reference = [released_beam_search(model, v, beam=beam, bos_id=BOS, eos_id=EOS, max_len=9,
                                      finished=finished) for v in inputs]
    assert [h.ids for h in batched] == [h.ids for h in reference]
    np.testing.assert_allclose([h.score for h in batched], [h.score for h in reference],
                               atol=1e-5)


class SentenceTables(torch.nn.Module):
    """A Markov chain of its own for every sentence (the vector's argmax picks it): next-token
    log-probabilities are looked up, so a row's output is exactly the same in any batch and
    the batched search must agree with the one-sentence one bit for bit."""

    def __init__(self, sentences: int, vocab: int = 12, seed: int = 0) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(seed)
        logits = 2 * torch.randn(sentences, vocab, vocab, generator=generator)
        logits[..., [0, BOS]] = float("-inf")  # never pad or bos
        self.register_buffer("table", logits.log_softmax(-1))

    def initial_state(self, vectors: torch.Tensor) -> torch.Tensor:
        return torch.zeros(vectors.size(0))

    def reorder_state(self, state: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return state.index_select(0, index)

    def step(self, tokens: torch.Tensor, vectors: torch.Tensor,
             state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.table[vectors.argmax(-1), tokens], state


@pytest.mark.parametrize(("beam", "max_len", "stop_after"),
                         [(2, 4, 1), (3, 6, None), (5, 9, 2), (10, 12, None)])
def test_batched_released_search_equals_it_on_exact_tables(beam: int, max_len: int,
                                                           stop_after: int | None) -> None:
    tables, vectors = SentenceTables(40), np.eye(40, dtype=np.float32)
    finished = 5 if stop_after is None else stop_after
    reference = [released_beam_search(tables, v, beam=beam, bos_id=BOS, eos_id=EOS,
                                      max_len=max_len, finished=finished) for v in vectors]
    for batch_size in (1, 7, 40):
        batched = released_search(tables, vectors, beam=beam, bos_id=BOS, eos_id=EOS,
                                  max_len=max_len, batch_size=batch_size, device="cpu",
                                  stop_after=stop_after)
        assert batched == reference
    assert len({h.ids for h in reference}) > 20  # the tables make the sentences differ


@pytest.mark.parametrize("max_rounds", [1, 2, 4])
def test_the_released_search_gives_up_after_max_rounds(max_rounds: int, caplog) -> None:
    """The harness's guard against searches that never end: both searches stop alike, with the
    best ended hypothesis or else the best queued one, and the stop is logged."""
    tables, vectors = SentenceTables(24, seed=3), np.eye(24, dtype=np.float32)
    kwargs = {"beam": 3, "bos_id": BOS, "eos_id": EOS, "max_len": 10, "max_rounds": max_rounds}
    reference = [released_beam_search(tables, v, finished=5, **kwargs) for v in vectors]
    with caplog.at_level("WARNING", logger="harness.generation.released"):
        batched = released_search(tables, vectors, batch_size=5, device="cpu", **kwargs)
    assert batched == reference
    assert "sentences stopped after" in caplog.text
    if max_rounds == 1:  # one round expands the start node: its best child, never ended
        chain = tables.table.exp()
        for h, vector in zip(batched, vectors, strict=True):
            best = int(chain[int(vector.argmax()), BOS].argmax())
            assert h.ids == (() if best == EOS else (best,))


def test_released_search_with_beam_one_is_greedy(trained) -> None:
    """One node a round, one child each: greedy; a sentence that does not end by max_len gets
    the node dropped there, greedy's unended output (the release would raise instead)."""
    model, _, vectors, _ = trained
    vocab = FakeVocab(np.random.default_rng(1).normal(size=(24, 16)).astype(np.float32))
    untrained = make_model(vocab, 32, hidden=16, experts=3)
    for decoder, max_len in ((model, 10), (untrained, 5)):
        greedy = greedy_search(decoder, vectors, bos_id=BOS, eos_id=EOS, max_len=max_len,
                               batch_size=32, device="cpu")
        released = beam_search(decoder, vectors, beam=1, bos_id=BOS, eos_id=EOS,
                               max_len=max_len, batch_size=32, device="cpu",
                               length_penalty="paper")
        assert [h.ids for h in released] == [h.ids for h in greedy]
        np.testing.assert_allclose([h.score for h in released], [h.score for h in greedy],
                                   atol=1e-5)
        for h, vector in list(zip(greedy, vectors, strict=True))[:6]:
            one = released_beam_search(decoder, vector, beam=1, bos_id=BOS, eos_id=EOS,
                                       max_len=max_len)
            assert one.ids == h.ids and one.score == pytest.approx(h.score, abs=1e-5)
    assert any(len(h.ids) == 5 for h in greedy)  # the untrained model hits max_len


def test_the_released_search_refuses_bad_settings(trained) -> None:
    model, _, vectors, _ = trained
    kwargs = {"bos_id": BOS, "eos_id": EOS, "batch_size": 4, "device": "cpu"}
    with pytest.raises(ValueError, match="stop_after must be at least 1"):
        released_search(model, vectors, beam=2, max_len=5, stop_after=0, **kwargs)
    with pytest.raises(ValueError, match="beam must be at least 1"):
        released_search(model, vectors, beam=0, max_len=5, **kwargs)
    with pytest.raises(ValueError, match="max_len must be at least 1"):
        released_search(model, vectors, beam=2, max_len=0, **kwargs)


# --- reference NLL and ppl -----------------------------------------------------------------------

@pytest.mark.parametrize("batch_size", [1, 5])
def test_reference_nll_is_the_sum_of_forward_log_probs(trained, batch_size: int) -> None:
    model, ids, _, noisy = trained
    got = reference_nll(model, noisy, ids, bos_id=BOS, eos_id=EOS, batch_size=batch_size,
                        device="cpu")
    assert [count for _, count in got] == [len(s) + 1 for s in ids]
    for (nll, _), sentence, vector in zip(got, ids, noisy, strict=True):
        assert nll == pytest.approx(-log_prob_of(model, vector, tuple(sentence)), abs=1e-4)
    assert model.training is False


def test_reference_nll_ignores_what_the_model_says_after_eos() -> None:
    """Padded positions are not scored, even where the model gives them probability 0."""
    # After eos, token 0 (the target id of padded positions) has probability 0: log 0 = -inf.
    chain = MarkovChain([[0.2] * 5, [0, 0, 0.2, 0.4, 0.4], [0, 0.25, 0.25, 0.25, 0.25],
                         [0, 0, 0.5, 0.25, 0.25], [0, 0, 0.5, 0.25, 0.25]])
    got = reference_nll(chain, np.zeros((2, 2), np.float32), [[3, 4, 3], [4]], bos_id=BOS,
                        eos_id=EOS, batch_size=2, device="cpu")
    assert got[0] == (pytest.approx(-math.log(0.4 * 0.25 * 0.25 * 0.5)), 4)
    assert got[1] == (pytest.approx(-math.log(0.4 * 0.5)), 2)


def test_reference_nll_batches_by_padded_positions() -> None:
    lengths = np.array([1, 9, 2, 3, 9, 1])
    batches = sorted_batches(np.arange(6), lengths, batch_size=4, max_tokens=8)
    # Sentence x (longest + 1) <= 8: 0 and 5 (2 x 2; adding 2 would make 3 x 3), 2 and 3
    # (2 x 4), then 1 and 4 alone (10 each).
    assert [b.tolist() for b in batches] == [[0, 5], [2, 3], [1], [4]]
    assert [b.tolist() for b in sorted_batches(np.arange(6), lengths, 4)] == [[0, 2, 3, 5],
                                                                              [1, 4]]


def test_ppl_is_exp_of_mean_nll_per_token() -> None:
    metric = PerplexityMetric()
    refs = ["a b", "c d e", "f"]
    stats = metric.sentence_statistics(refs, ["x", "y", "z"], nll=[2.0, 3.0, 1.0],
                                       tokens=[2, 3, 5])
    np.testing.assert_array_equal(stats, [[2.0, 2.0], [3.0, 3.0], [1.0, 5.0]])
    assert float(metric.corpus_score(stats.sum(axis=0), 3)) == pytest.approx(math.exp(6 / 10))
    np.testing.assert_allclose(metric.corpus_score(stats, 1), [math.e, math.e, math.exp(0.2)])
    np.testing.assert_allclose(metric.corpus_score(np.stack([stats.sum(0), stats[0]]), 3),
                               [math.exp(0.6), math.e])
    assert metric.requires == ("nll", "tokens")


def test_ppl_of_a_model_equals_exp_of_its_mean_nll_by_hand(trained) -> None:
    model, ids, vectors, _ = trained
    nll = reference_nll(model, vectors, ids, bos_id=BOS, eos_id=EOS, batch_size=8, device="cpu")
    stats = PerplexityMetric().sentence_statistics(
        ["r"] * len(ids), ["h"] * len(ids), nll=[v for v, _ in nll], tokens=[n for _, n in nll])
    by_hand = math.exp(sum(-log_prob_of(model, v, tuple(s)) for v, s in zip(vectors, ids))
                       / sum(len(s) + 1 for s in ids))
    assert float(PerplexityMetric().corpus_score(stats.sum(0), len(ids))) == pytest.approx(
        by_hand, rel=1e-4)


def test_ppl_needs_its_sample_fields() -> None:
    metric = PerplexityMetric()
    with pytest.raises(DataError, match="'nll' and 'tokens'"):
        metric.sentence_statistics(["a"], ["b"])
    with pytest.raises(DataError, match="sample 1"):
        metric.sentence_statistics(["a", "b"], ["a", "b"], nll=[1.0, -2.0], tokens=[1, 2])
    with pytest.raises(DataError, match="2 nll/tokens values for 1"):
        metric.sentence_statistics(["a"], ["b"], nll=[1.0, 2.0], tokens=[1, 2])
    # A near-certain sentence may come out a rounding error below 0 (a mixture's logsumexp).
    assert metric.sentence_statistics(["a"], ["a"], nll=[-2e-7], tokens=[3])[0, 0] == -2e-7


def test_generation_restores_training_mode(trained) -> None:
    model, _, vectors, _ = trained
    model.train()
    try:
        greedy_search(model, vectors[:2], bos_id=BOS, eos_id=EOS, max_len=3, batch_size=2,
                      device="cpu")
        beam_search(model, vectors[:2], beam=2, bos_id=BOS, eos_id=EOS, max_len=3, batch_size=2,
                    device="cpu")
        assert model.training
    finally:
        model.eval()
