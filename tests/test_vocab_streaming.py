"""The vocabulary trained from the corpus file (BPE reading the file, the segmented corpus
written a chunk at a time) is the one trained from the sentences in memory before: the same
pieces, scores and vectors; a corpus above the sample bound is sampled reproducibly."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from harness.errors import DataError
from harness.spec import VocabSection
from harness.stages.base import RunContext
from harness.stages.vocab import VERSION, prepare_vocab
from harness.synthetic import generate_sentences
from harness.text.lines import LineFile
from harness.text.skipgram import train_skipgram
from harness.text.subwords import BOS_ID, EOS_ID, PAD_ID, UNK_ID, SubwordVocab, train_subword_vocab
from harness.util.cache import Cache, artifact_key

BPE, DIM, EPOCHS = 600, 8, 1


def in_memory_vocab(sentences: list[str], directory: Path) -> tuple[list[str], np.ndarray]:
    """The pieces and vectors as `train_subword_vocab` trained them from a list: sentencepiece
    over an iterator of the sentences, every sentence segmented at once."""
    import sentencepiece as spm

    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_prefix=str(directory / "bpe"),
        model_type="bpe", vocab_size=BPE, hard_vocab_limit=False, character_coverage=1.0,
        pad_id=PAD_ID, unk_id=UNK_ID, bos_id=BOS_ID, eos_id=EOS_ID,
        normalization_rule_name="identity", num_threads=1, minloglevel=2)
    processor = spm.SentencePieceProcessor(model_file=str(directory / "bpe.model"))
    segmented = [" ".join(pieces) for pieces in processor.encode(list(sentences), out_type=str)]
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    _, _, vectors = train_skipgram(segmented, dim=DIM, epochs=EPOCHS, min_count=1, minn=2,
                                   maxn=5, bucket=100_000, threads=1, words=pieces)
    vectors[PAD_ID] = vectors[UNK_ID] = 0.0
    return pieces, vectors


def pieces_and_scores(vocab: SubwordVocab) -> list[tuple[str, float]]:
    processor = vocab.processor
    return [(processor.id_to_piece(i), processor.get_score(i))
            for i in range(processor.get_piece_size())]


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory) -> tuple[list[str], Path]:
    sentences = [s.lower() for s in generate_sentences("quickstart", 1500, 1)]
    sentences += ["the ﬁnal… word ＄5", "über café"]
    path = tmp_path_factory.mktemp("corpus") / "train.txt"
    path.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    return sentences, path


def test_the_file_gives_the_pieces_and_vectors_of_the_sentences_in_memory(corpus_file,
                                                                          tmp_path):
    sentences, path = corpus_file
    pieces, vectors = in_memory_vocab(sentences, tmp_path)
    for given in (LineFile(path), path, sentences):  # the stage's LineFile, a path, a list
        directory = tmp_path / f"new-{type(given).__name__}"
        vocab = train_subword_vocab(given, directory, bpe_size=BPE, dim=DIM, epochs=EPOCHS)
        reference = SubwordVocab(tmp_path / "bpe.model", vectors)
        assert pieces_and_scores(vocab) == pieces_and_scores(reference)
        assert [p for p, _ in pieces_and_scores(vocab)] == pieces
        assert np.array_equal(vocab.vectors, vectors)
        assert sorted(p.name for p in directory.iterdir()) == ["bpe.model", "vectors.npy"]


def test_a_corpus_above_the_bound_is_sampled_the_same_way_every_time(corpus_file, tmp_path):
    _, path = corpus_file
    first = train_subword_vocab(path, tmp_path / "a", bpe_size=BPE, dim=DIM, epochs=EPOCHS,
                                sample=500)
    again = train_subword_vocab(path, tmp_path / "b", bpe_size=BPE, dim=DIM, epochs=EPOCHS,
                                sample=500)
    whole = train_subword_vocab(path, tmp_path / "c", bpe_size=BPE, dim=DIM, epochs=EPOCHS)
    assert pieces_and_scores(first) == pieces_and_scores(again)
    assert np.array_equal(first.vectors, again.vectors)
    assert pieces_and_scores(first) != pieces_and_scores(whole)  # merges from fewer sentences


def test_a_sentence_holding_a_newline_is_refused(tmp_path):
    with pytest.raises(DataError, match="sentence 2 holds a newline"):
        train_subword_vocab(["one two", "three\nfour"], tmp_path, bpe_size=BPE, dim=DIM,
                            epochs=EPOCHS)


def test_skipgram_reads_a_prepared_file_as_it_is(tmp_path):
    lines = ["a b c a b", "b c d", "  ", "a d"] * 30
    path = tmp_path / "corpus.txt"
    path.write_text("".join(line.strip() + "\n" for line in lines if line.strip()), "utf-8")
    from_file = train_skipgram(path, dim=4, epochs=1)
    from_lines = train_skipgram(lines, dim=4, epochs=1)
    assert from_file[0] == from_lines[0] and np.array_equal(from_file[2], from_lines[2])
    (tmp_path / "empty.txt").write_text("", "utf-8")
    with pytest.raises(DataError, match="no words"):
        train_skipgram(tmp_path / "empty.txt", dim=4, epochs=1)


def test_the_stage_key_is_unchanged_up_to_the_sample_bound(corpus_file, tmp_path, monkeypatch):
    """Vocabularies cached before the corpus streamed stay valid: same key, same content; above
    the bound the sample is part of the key."""
    _, path = corpus_file
    section = VocabSection(bpe_size=BPE, dim=DIM, epochs=EPOCHS)
    corpus = SimpleNamespace(train_key="train-key", train=LineFile(path))
    ctx = RunContext(spec=SimpleNamespace(vocab=section),  # type: ignore[arg-type]
                     cache=Cache(root=tmp_path / "cache"))
    vocab = prepare_vocab(ctx, corpus)  # type: ignore[arg-type]
    assert vocab.key == artifact_key("vocab", {"version": VERSION, "corpus": "train-key",
                                               "bpe_size": BPE, "dim": DIM, "epochs": EPOCHS})
    monkeypatch.setattr("harness.stages.vocab.SAMPLE_SENTENCES", 1000)
    assert prepare_vocab(ctx, corpus).key != vocab.key  # type: ignore[arg-type]
