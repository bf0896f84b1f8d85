"""Training data at the paper's size: compact ids, vector rows read from the file, statistics in
chunks; each checked against the plain in-memory computation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from harness.protocols import TrainingOptions
from harness.training.batches import padded_batches, vector_statistics
from harness.training.rows import FileRows, file_rows
from harness.training.token_ids import TokenIds, sentence_lengths
from harness.training.trainer import train_decoder
from tests.decoder_fakes import make_model, make_vocab


def random_ids(count: int, seed: int = 0) -> list[list[int]]:
    """Sentences of 0 to 9 random ids below 50,000, empty ones included."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 50_000, size=rng.integers(0, 10)).tolist() for _ in range(count)]


# --- TokenIds ----------------------------------------------------------------------------------

def test_token_ids_read_like_the_list_of_lists_they_were_built_from() -> None:
    lists = random_ids(101)
    ids = TokenIds.from_sequences(lists, chunk=7)  # 15 chunks, the last one short
    assert len(ids) == 101
    assert [s.tolist() for s in ids] == lists
    assert [ids[i].tolist() for i in range(101)] == lists
    assert ids[-1].tolist() == lists[-1] and ids[np.int64(5)].tolist() == lists[5]
    assert ids.lengths.tolist() == [len(s) for s in lists]
    assert ids.values.dtype == np.int32 and ids.offsets.dtype == np.int64
    tokens = sum(map(len, lists))
    assert ids.nbytes == 4 * tokens + 8 * 102
    with pytest.raises(IndexError):
        ids[101]
    with pytest.raises(ValueError):
        ids.values[0] = 1  # read-only: a batch cannot change the corpus


def test_slices_of_token_ids_are_token_ids_of_those_sentences() -> None:
    lists = random_ids(30, seed=1)
    ids = TokenIds.from_sequences(lists)
    for part in (slice(3, 17), slice(None, 5), slice(-4, None), slice(20, 10), slice(1, 29, 3)):
        sliced = ids[part]
        assert isinstance(sliced, TokenIds)
        assert [s.tolist() for s in sliced] == lists[part]
        assert sliced.lengths.tolist() == [len(s) for s in lists[part]]


def test_token_ids_encode_a_chunk_at_a_time_and_read_sentences_lazily() -> None:
    sentences = [f"s{i}" for i in range(10)]
    calls: list[int] = []
    read = 0

    def stream():
        nonlocal read
        for sentence in sentences:
            read += 1
            yield sentence

    def encode(batch: list[str]) -> list[list[int]]:
        calls.append(len(batch))
        assert read <= sum(calls)  # no sentence read before its chunk is encoded
        return [[int(s[1:])] * (int(s[1:]) % 3) for s in batch]

    ids = TokenIds.encode(encode, stream(), chunk=4)
    assert calls == [4, 4, 2]
    assert [s.tolist() for s in ids] == [[i] * (i % 3) for i in range(10)]


def test_token_ids_refuse_what_they_cannot_hold() -> None:
    with pytest.raises(ValueError, match="int32"):
        TokenIds.from_sequences([[1, 2**31]])
    with pytest.raises(ValueError, match="offsets"):
        TokenIds(np.arange(4, dtype=np.int32), np.array([0, 3, 2, 4]))
    with pytest.raises(ValueError, match="offsets"):
        TokenIds(np.arange(4, dtype=np.int32), np.array([0, 3]))


def test_sentence_lengths_of_lists_and_token_ids_agree() -> None:
    lists = random_ids(20, seed=2)
    expected = [len(s) for s in lists]
    assert sentence_lengths(lists).tolist() == expected
    assert sentence_lengths(TokenIds.from_sequences(lists)).tolist() == expected
    assert TokenIds.from_sequences([]).lengths.tolist() == []


def test_padded_batches_are_the_same_from_lists_and_token_ids() -> None:
    lists = [s for s in random_ids(12, seed=3) if s] + [[]]
    vectors = np.arange(len(lists) * 3, dtype=np.float32).reshape(-1, 3)
    vocab = make_vocab()
    order = [np.array([0, 4, 5]), np.array([len(lists) - 1, 2])]
    device = torch.device("cpu")
    plain = list(padded_batches(order, vocab, vectors, lists, device))
    compact = list(padded_batches(order, vocab, vectors, TokenIds.from_sequences(lists), device))
    for a, b in zip(plain, compact, strict=True):
        assert torch.equal(a.inputs, b.inputs) and torch.equal(a.targets, b.targets)
        assert torch.equal(a.vectors, b.vectors) and a.tokens == b.tokens
    # Sentence 0 of the first batch: bos, its ids, padding; targets end in eos.
    first = lists[0]
    assert plain[0].inputs[0, :len(first) + 1].tolist() == [vocab.bos_id, *first]
    assert plain[0].targets[0, :len(first) + 1].tolist() == [*first, vocab.eos_id]
    assert plain[0].tokens == sum(len(lists[i]) + 1 for i in order[0])


# --- rows read from the file ---------------------------------------------------------------------

@pytest.fixture()
def stored(tmp_path: Path) -> tuple[np.ndarray, np.ndarray]:
    """A (50, 7) float16 array and the same array memory-mapped from an .npy file."""
    array = np.random.default_rng(0).normal(size=(50, 7)).astype(np.float16)
    np.save(tmp_path / "v.npy", array)
    return array, np.load(tmp_path / "v.npy", mmap_mode="r")


def test_file_rows_return_the_rows_numpy_indexing_returns(stored) -> None:
    array, mapped = stored
    rows = file_rows(mapped)
    assert isinstance(rows, FileRows)
    assert rows.shape == (50, 7) and rows.dtype == np.float16 and len(rows) == 50
    index = np.array([3, 4, 5, 9, 2, 2, 49, 0, -1])  # runs, a step back, a repeat, the ends
    got = rows[index]
    assert got.dtype == np.float16 and np.array_equal(got, array[index])
    assert np.array_equal(rows[10:20], array[10:20])
    assert np.array_equal(rows[7], array[7])
    assert rows[np.array([], dtype=np.int64)].shape == (0, 7)
    with pytest.raises(IndexError):
        rows[np.array([50])]


def test_a_contiguous_view_of_a_memory_map_is_read_from_its_own_rows(stored) -> None:
    array, mapped = stored
    view = mapped[13:40]
    rows = file_rows(view)
    assert isinstance(rows, FileRows) and rows.shape == (27, 7)
    assert np.array_equal(rows[np.arange(27)], array[13:40])


def test_a_memory_map_at_an_offset_is_read_from_that_offset(tmp_path: Path) -> None:
    array = np.arange(30, dtype=np.float32).reshape(10, 3)
    (tmp_path / "raw").write_bytes(b"x" * 100 + array.tobytes())
    mapped = np.memmap(tmp_path / "raw", dtype=np.float32, mode="r", offset=100, shape=(10, 3))
    rows = file_rows(mapped)
    assert isinstance(rows, FileRows)
    assert np.array_equal(rows[np.array([9, 0, 4, 5])], array[[9, 0, 4, 5]])


def test_what_is_not_a_file_region_is_read_as_it_is(stored, tmp_path: Path) -> None:
    array, mapped = stored
    assert file_rows(array) is array
    strided = mapped[::2]
    assert file_rows(strided) is strided
    copy_on_write = np.load(tmp_path / "v.npy", mmap_mode="c")
    assert file_rows(copy_on_write) is copy_on_write


# --- statistics ----------------------------------------------------------------------------------

def whole_chunk_statistics(vectors: np.ndarray, rows: np.ndarray,
                           chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """The statistics as computed before column slicing: each chunk widened whole."""
    rows = np.sort(rows)
    total, squares = np.zeros(vectors.shape[1]), np.zeros(vectors.shape[1])
    for start in range(0, len(rows), chunk):
        block = np.asarray(vectors[rows[start:start + chunk]], dtype=np.float64)
        total += block.sum(axis=0)
        squares += np.square(block).sum(axis=0)
    mean = total / len(rows)
    return mean, np.maximum(squares / len(rows) - np.square(mean), 0.0)


@pytest.mark.parametrize("dim", [1, 2, 9, 13])
def test_chunked_statistics_match_numpy_over_the_whole_array(dim: int, tmp_path: Path) -> None:
    rng = np.random.default_rng(dim)
    array = (rng.normal(size=(300, dim)) * rng.exponential(5.0, size=dim)
             + rng.normal(size=dim) * 10).astype(np.float32)
    np.save(tmp_path / "v.npy", array)
    vectors = file_rows(np.load(tmp_path / "v.npy", mmap_mode="r"))
    rows = rng.permutation(300)[:250]  # unsorted, some rows left out
    # Chunks of 64 rows, slices of 4 columns: 13 columns end in a slice of one, merged.
    mean, var = vector_statistics(vectors, rows, chunk=64, columns=4 * 64)
    subset = array[np.sort(rows)].astype(np.float64)
    np.testing.assert_allclose(mean, subset.mean(axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(var, subset.var(axis=0), rtol=1e-9)
    # Bit for bit the values of widening each chunk whole: the trained weights stay the same.
    whole_mean, whole_var = whole_chunk_statistics(array, rows, chunk=64)
    assert np.array_equal(mean, whole_mean) and np.array_equal(var, whole_var)


def test_statistics_of_a_constant_dimension_have_zero_variance() -> None:
    vectors = np.column_stack([np.full(10, 0.1), np.arange(10.0)])
    mean, var = vector_statistics(vectors, np.arange(10), chunk=3, columns=2)
    assert mean[0] == pytest.approx(0.1) and var[0] >= 0.0 and var[0] < 1e-15
    assert mean[1] == 4.5 and var[1] == pytest.approx(8.25)  # the variance of 0..9


# --- the trainer -------------------------------------------------------------------------------

def test_training_on_token_ids_and_on_lists_gives_the_same_weights(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    lists = [rng.integers(3, 24, size=rng.integers(1, 7)).tolist() for _ in range(40)]
    np.save(tmp_path / "v.npy", rng.normal(size=(40, 16)).astype(np.float16))
    vectors = np.load(tmp_path / "v.npy", mmap_mode="r")
    vocab = make_vocab()
    options = TrainingOptions(epochs=2, batch_size=8, val_fraction=0.2, checkpoint_every=3)
    models = []
    for name, ids in (("lists", lists), ("compact", TokenIds.from_sequences(lists, chunk=9))):
        model = make_model(vocab, 16, seed=1, standardise=True, dropout=0.3)
        train_decoder(model, vocab, vectors, ids, options, seed=2, device="cpu",
                      checkpoint_dir=tmp_path / name, log_path=tmp_path / name / "log.jsonl",
                      progress=False)
        models.append(model.state_dict())
    assert models[0].keys() == models[1].keys()
    assert all(torch.equal(models[0][k], models[1][k]) for k in models[0])
