"""Pooling encoders (avg, hier, avg-max-hier) against hand-computed vectors, their window edge
cases, the conformance kit on a real tiny vocabulary, and their registration."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import harness_plugins.encoders as encoders
from harness.errors import HarnessError
from harness.protocols import BuildContext, Options
from harness.synthetic import generate_sentences
from harness.testing import check_encoder, check_registration
from harness.text.subwords import SubwordVocab, train_subword_vocab
from harness_plugins.encoders.options import WindowOptions
from harness_plugins.encoders.pooling import (
    AverageEncoder,
    AvgMaxHierEncoder,
    HierarchicalEncoder,
    SubwordBatch,
    hierarchical_pool,
)


class WordVocab:
    """A fake `SubwordVocab`: one piece per whitespace token, with chosen 2-D vectors."""

    pieces = ["<pad>", "a", "b", "c", "d"]
    vectors = np.array([[0, 0], [1, 2], [3, -1], [0, 4], [-2, 0]], dtype=np.float32)

    def encode(self, sentences):
        return [[self.pieces.index(token) for token in s.split()] for s in sentences]


VOCAB = WordVocab()


def encode(encoder_class, sentences, **options):
    return encoder_class(VOCAB, WindowOptions(**options) if options else WindowOptions()
                         ).encode(sentences)


def test_average_by_hand():
    # a=(1,2) b=(3,-1) c=(0,4) d=(-2,0)
    out = AverageEncoder(VOCAB, Options()).encode(["a b c d", "b", "a a c", ""])
    expected = [[(1 + 3 + 0 - 2) / 4, (2 - 1 + 4 + 0) / 4], [3, -1],
                [(1 + 1 + 0) / 3, (2 + 2 + 4) / 3], [0, 0]]
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert out.dtype == np.float32


def test_hier_by_hand():
    # windows of 3 in "a b c d": (a,b,c) -> (4/3, 5/3); (b,c,d) -> (1/3, 1); max -> (4/3, 5/3)
    # "a d b c": (a,d,b) -> (2/3, 1/3); (d,b,c) -> (1/3, 1); max -> (2/3, 1): per dimension
    out = encode(HierarchicalEncoder, ["a b c d", "a d b c", "a b c"])
    np.testing.assert_allclose(out, [[4 / 3, 5 / 3], [2 / 3, 1], [4 / 3, 5 / 3]], rtol=1e-6)


def test_hier_window_edge_cases():
    # shorter than the window: max over the subword vectors, as the Vec2Sent code does
    np.testing.assert_allclose(encode(HierarchicalEncoder, ["a b", "c"]), [[3, 2], [0, 4]])
    # empty: zeros
    np.testing.assert_allclose(encode(HierarchicalEncoder, [""]), [[0, 0]])
    # window 2 on "a b c d": (2, .5), (1.5, 1.5), (-1, 2) -> (2, 2)
    np.testing.assert_allclose(encode(HierarchicalEncoder, ["a b c d"], window=2), [[2, 2]])
    # window 1 is max pooling; a window as long as the sentence is its average
    np.testing.assert_allclose(encode(HierarchicalEncoder, ["a b c d"], window=1), [[3, 4]])
    np.testing.assert_allclose(encode(HierarchicalEncoder, ["a b c d"], window=4), [[0.5, 1.25]])
    with pytest.raises(ValueError, match="window"):
        hierarchical_pool(SubwordBatch.of([[1]], VOCAB.vectors), window=0)


def test_avg_max_hier_is_the_concatenation():
    out = encode(AvgMaxHierEncoder, ["a b c d", "a b", ""])
    expected = [[0.5, 1.25, 3, 4, 4 / 3, 5 / 3],
                [2, 0.5, 3, 2, 3, 2],
                [0, 0, 0, 0, 0, 0]]
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert AvgMaxHierEncoder(VOCAB, WindowOptions()).dim == 6


def test_batches_mixing_lengths_match_one_by_one():
    sentences = ["a b c d", "", "c", "a b", "d d d d d", "b a c", "", "a"]
    for cls in (AverageEncoder, HierarchicalEncoder, AvgMaxHierEncoder):
        encoder = cls(VOCAB, WindowOptions())
        together = encoder.encode(sentences, batch_size=3)
        alone = np.concatenate([encoder.encode([s]) for s in sentences])
        np.testing.assert_array_equal(together, alone)


def test_fingerprint_names_options_and_version():
    assert (HierarchicalEncoder(VOCAB, WindowOptions(window=2)).fingerprint()
            != HierarchicalEncoder(VOCAB, WindowOptions()).fingerprint())
    assert AverageEncoder(VOCAB, Options()).fingerprint().startswith("avg/")


@pytest.fixture(scope="module")
def tiny_vocab(tmp_path_factory) -> SubwordVocab:
    sentences = generate_sentences("quickstart", 300, 1)
    return train_subword_vocab(sentences, tmp_path_factory.mktemp("vocab"), bpe_size=200, dim=16,
                               epochs=1)


@pytest.mark.parametrize("name", ["avg", "hier", "avg-max-hier"])
def test_conformance_through_the_registered_factory(tiny_vocab, name):
    infos = {info.name: info for info in check_registration(encoders)}
    info = infos[name]
    encoder = info.factory(info.options(), BuildContext(vocab=tiny_vocab))
    check_encoder(encoder)
    width = 3 if name == "avg-max-hier" else 1
    assert encoder.dim == width * tiny_vocab.dim


def test_average_matches_the_subword_vectors(tiny_vocab):
    sentence = "the teacher reads a book ."
    ids = tiny_vocab.encode([sentence])[0]
    out = AverageEncoder(tiny_vocab, Options()).encode([sentence])
    np.testing.assert_allclose(out[0], tiny_vocab.vectors[ids].mean(axis=0), rtol=1e-5, atol=1e-6)


def test_factory_without_vocabulary_names_the_encoder():
    info = {i.name: i for i in check_registration(encoders)}["hier"]
    with pytest.raises(HarnessError, match="'hier' needs the run's subword vocabulary"):
        info.factory(WindowOptions(), BuildContext())


def test_registration_imports_no_encoder_code():
    code = ("import sys, harness_plugins.encoders as e; "
            "heavy = [m for m in ('harness_plugins.encoders.pooling', 'harness_plugins.encoders.gem',"
            " 'torch', 'sklearn', 'sentencepiece', 'fasttext') if m in sys.modules]; print(heavy)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=Path(__file__).parent)
    assert result.stdout.strip() == "[]"
