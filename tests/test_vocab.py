"""Subword vocabularies loaded from existing files (BPEmb-like sentencepiece model + vectors in
word2vec text, GloVe text, fastText .bin or .npy), their special ids, errors naming file:line,
the spec's vocab section, and the vocab stage's cache key."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from pydantic import ValidationError

from harness.errors import DataError
from harness.spec import VocabSection
from harness.stages.base import RunContext
from harness.stages.vocab import prepare_vocab
from harness.text.subwords import SubwordVocab, import_subword_vocab, read_piece_vectors
from harness.util.cache import Cache

SENTENCES = ["the cat sat on the mat", "the dog ate the bone", "a cat and a dog"] * 20


@pytest.fixture(scope="module")
def bpemb_like_model(tmp_path_factory) -> Path:
    """A small BPE model with BPEmb's special ids: <unk>=0, <s>=1, </s>=2 and no pad piece."""
    import sentencepiece as spm

    directory = tmp_path_factory.mktemp("bpemb")
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(SENTENCES), model_prefix=str(directory / "en.bpe"),
        model_type="bpe", vocab_size=40, hard_vocab_limit=False, character_coverage=1.0,
        pad_id=-1, unk_id=0, bos_id=1, eos_id=2, minloglevel=2)
    return directory / "en.bpe.model"


def pieces_of(model: Path) -> list[str]:
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor(model_file=str(model))
    return [processor.id_to_piece(i) for i in range(processor.get_piece_size())]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_word2vec_text_with_header(bpemb_like_model, tmp_path):
    pieces = pieces_of(bpemb_like_model)
    vectors = write(tmp_path / "en.d2.w2v.txt",
                    "3 2\n▁the 0.5 -1.25\nnot-a-piece 9 9\n<unk> 1 2 \n")
    vocab, read = import_subword_vocab(bpemb_like_model, vectors, tmp_path / "vocab")
    the, unk = pieces.index("▁the"), pieces.index("<unk>")
    np.testing.assert_array_equal(vocab.vectors[the], [0.5, -1.25])
    np.testing.assert_array_equal(vocab.vectors[unk], [1, 2])
    assert read.missing == len(pieces) - 2 and read.format == "text"
    others = np.delete(np.arange(len(pieces)), [the, unk])
    assert not vocab.vectors[others].any()                  # pieces without a line: zeros
    # BPEmb has no pad piece: it is added after the model's pieces, with a zero vector
    assert (vocab.unk_id, vocab.bos_id, vocab.eos_id, vocab.pad_id) == (0, 1, 2, len(pieces))
    assert len(vocab) == len(pieces) + 1 and not vocab.vectors[vocab.pad_id].any()
    ids = vocab.encode(["the cat"])[0]
    assert vocab.decode(ids + [vocab.eos_id, vocab.pad_id]) == "the cat"
    again = SubwordVocab.load(tmp_path / "vocab")
    np.testing.assert_array_equal(again.vectors, vocab.vectors)
    assert again.pad_id == vocab.pad_id


def test_glove_text_without_header_and_repeated_tokens(bpemb_like_model, tmp_path):
    vectors = write(tmp_path / "glove.txt", "▁cat 1 2 3\n▁cat 7 7 7\n\n▁dog -1 0 0.5\n")
    read = read_piece_vectors(vectors, pieces_of(bpemb_like_model))
    pieces = pieces_of(bpemb_like_model)
    np.testing.assert_array_equal(read.vectors[pieces.index("▁cat")], [1, 2, 3])  # first wins
    np.testing.assert_array_equal(read.vectors[pieces.index("▁dog")], [-1, 0, 0.5])
    assert read.vectors.shape == (len(pieces), 3) and read.missing == len(pieces) - 2


def test_npy_rows_follow_piece_ids(bpemb_like_model, tmp_path):
    count = len(pieces_of(bpemb_like_model))
    table = np.arange(count * 4, dtype=np.float32).reshape(count, 4)
    np.save(tmp_path / "vectors.npy", table)
    vocab, read = import_subword_vocab(bpemb_like_model, tmp_path / "vectors.npy",
                                       tmp_path / "vocab")
    np.testing.assert_array_equal(vocab.vectors[:count], table)
    assert read.missing == 0 and vocab.dim == 4
    np.save(tmp_path / "short.npy", table[:-1])
    with pytest.raises(DataError, match=f"expected a \\({count}, dim\\) array"):
        read_piece_vectors(tmp_path / "short.npy", pieces_of(bpemb_like_model))


def test_fasttext_bin(bpemb_like_model, tmp_path):
    import fasttext

    corpus = write(tmp_path / "segmented.txt", "▁the ▁cat ▁sat\n▁the ▁dog\n" * 30)
    model = fasttext.train_unsupervised(str(corpus), model="skipgram", dim=5, epoch=1,
                                        minCount=1, minn=2, maxn=3, thread=1, verbose=0)
    model.save_model(str(tmp_path / "vectors.bin"))
    pieces = pieces_of(bpemb_like_model)
    read = read_piece_vectors(tmp_path / "vectors.bin", pieces)
    np.testing.assert_allclose(read.vectors[pieces.index("▁dog")], model.get_word_vector("▁dog"))
    known = {"▁the", "▁cat", "▁sat", "▁dog", "</s>"}  # fastText counts each line end as </s>
    assert read.missing == len(pieces) - len(known) and read.format == "fasttext-bin"


def test_malformed_files_name_file_and_line(bpemb_like_model, tmp_path):
    pieces = pieces_of(bpemb_like_model)
    bad = write(tmp_path / "bad.vec", "2 3\n▁the 1 2 3\n▁cat 1 2\n")
    with pytest.raises(DataError, match=r"bad\.vec:3: expected a token and 3 numbers, found 2"):
        read_piece_vectors(bad, pieces)
    word = write(tmp_path / "word.vec", "▁the 1 x\n")
    with pytest.raises(DataError, match=r"word\.vec:1: the vector of '▁the' has a field"):
        read_piece_vectors(word, pieces)
    binary = tmp_path / "latin1.vec"
    binary.write_bytes("▁the 1 2\n".encode() + b"caf\xe9 1 2\n")
    with pytest.raises(DataError, match=r"latin1\.vec:2: not UTF-8"):
        read_piece_vectors(binary, pieces)
    unrelated = write(tmp_path / "other.vec", "bonjour 1 2\n")
    with pytest.raises(DataError, match="none of the model's .* pieces has a vector"):
        read_piece_vectors(unrelated, pieces)
    nan = write(tmp_path / "nan.vec", "▁the nan 1\n")
    with pytest.raises(DataError, match="'▁the' is not finite"):
        read_piece_vectors(nan, pieces)
    with pytest.raises(DataError, match="vectors file not found"):
        read_piece_vectors(tmp_path / "absent.vec", pieces)
    with pytest.raises(DataError, match="not a readable sentencepiece model"):
        import_subword_vocab(bad, bad, tmp_path / "vocab")


def test_spec_section_loads_both_files_or_trains():
    assert VocabSection(model="m.model", vectors="v.txt").model == Path("m.model")
    with pytest.raises(ValidationError, match="give both `model:` and `vectors:`"):
        VocabSection(model="m.model")
    with pytest.raises(ValidationError, match="bpe_size, dim only apply to training"):
        VocabSection(model="m.model", vectors="v.txt", dim=50, bpe_size=100)
    assert VocabSection(dim=50).model is None


def run_context(tmp_path: Path, section: VocabSection) -> RunContext:
    return RunContext(spec=SimpleNamespace(vocab=section),  # type: ignore[arg-type]
                      cache=Cache(root=tmp_path / "cache"))


def test_stage_keys_imported_files_by_content(bpemb_like_model, tmp_path, caplog):
    corpus = SimpleNamespace(key="corpus-key", train=SENTENCES)
    vectors = write(tmp_path / "a.vec", "▁the 1 2\n▁cat 3 4\n")
    with caplog.at_level(logging.WARNING, logger="harness.run"):
        first = prepare_vocab(run_context(tmp_path, VocabSection(model=bpemb_like_model,
                                                                 vectors=vectors)), corpus)
    count = len(pieces_of(bpemb_like_model))
    assert first.summary.missing_vectors == count - 2
    assert first.summary.source == "imported"
    assert f"{count - 2} of {count} pieces" in caplog.text

    # The same content under another name hits the cache; different content misses it.
    copy = write(tmp_path / "b.vec", vectors.read_text(encoding="utf-8"))
    ctx = run_context(tmp_path, VocabSection(model=bpemb_like_model, vectors=copy))
    assert prepare_vocab(ctx, corpus).key == first.key and ctx.cache.hits == 1
    changed = write(tmp_path / "c.vec", "▁the 1 2\n▁cat 3 5\n")
    other = prepare_vocab(run_context(tmp_path, VocabSection(model=bpemb_like_model,
                                                             vectors=changed)), corpus)
    assert other.key != first.key
    assert other.vocab.vectors[pieces_of(bpemb_like_model).index("▁cat")].tolist() == [3, 5]


def test_a_trained_vocabulary_gives_back_every_character_and_zeroes_unknown_pieces(tmp_path):
    """No NFKC normalisation (a perfect decoder can reproduce "…"), and the unknown piece adds
    nothing to pooled sentence vectors."""
    from harness.synthetic import generate_sentences
    from harness.text.subwords import PAD_ID, UNK_ID, train_subword_vocab

    odd = "the ﬁnal… word ＄5"
    vocab = train_subword_vocab(generate_sentences("quickstart", 300, 1) + [odd] * 3, tmp_path,
                                bpe_size=200, dim=8, epochs=1)
    assert vocab.decode(vocab.encode([odd])[0]) == odd
    assert not vocab.vectors[UNK_ID].any() and not vocab.vectors[PAD_ID].any()
