"""InferSent (Conneau et al. 2017): a BiLSTM with max pooling over pretrained word vectors.

The released encoder (`infersent2.pkl`: fastText crawl-300d-2M vectors; `infersent1.pkl`: GloVe
840B) is a state dict of one bidirectional LSTM (`enc_lstm.*`, 300 -> 2 x 2048). A sentence is
`<bos> words <eos>` (`<p>`/`</p>` for version 2, `<s>`/`</s>` for version 1), words without a
vector dropped; its vector is the element-wise max over time of the LSTM's outputs (Conneau et al.
2017, section 3.2.2, "BiLSTM with max pooling"), 4096 dimensions.

Padding never takes part in the max: the released code masked it in version 2 only, so in
version 1 a short sentence's vector depended on its batch-mates; here it never does.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .checkpoints import load_checkpoint, load_strict
from .common import WeightsError, file_identity
from .text import word_tokenize

VERSION = "1"

MARKERS = {1: ("<s>", "</s>"), 2: ("<p>", "</p>")}
"""Sentence boundary words of each InferSent version (they have word vectors of their own)."""


class BiLSTMMaxEncoder(nn.Module):
    """Bidirectional LSTM whose outputs are max-pooled over time (InferSent's `enc_lstm`)."""

    def __init__(self, word_dim: int = 300, hidden: int = 2048) -> None:
        super().__init__()
        self.enc_lstm = nn.LSTM(word_dim, hidden, num_layers=1, bidirectional=True)

    @property
    def dim(self) -> int:
        """Size of the sentence vector: 2 x hidden."""
        return 2 * self.enc_lstm.hidden_size

    def forward(self, words: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Return (B, 2H) max-pooled outputs for word vectors (T, B, D) of `lengths` (B,)."""
        packed = nn.utils.rnn.pack_padded_sequence(words, lengths.cpu(), enforce_sorted=False)
        outputs, _ = self.enc_lstm(packed)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs, padding_value=float("-inf"),
                                                      total_length=words.shape[0])
        return outputs.max(dim=0).values


def architecture_for(state: dict[str, torch.Tensor]) -> BiLSTMMaxEncoder:
    """Return an encoder sized after the state dict's LSTM weights (4H x D input weights)."""
    weight = state.get("enc_lstm.weight_ih_l0")
    if weight is None or weight.ndim != 2 or weight.shape[0] % 4:
        raise WeightsError("infersent: the weights lack `enc_lstm.weight_ih_l0` of shape "
                           "(4 x hidden, word dim); is this an InferSent state dict?")
    return BiLSTMMaxEncoder(word_dim=weight.shape[1], hidden=weight.shape[0] // 4)


def read_word_vectors(path: Path, limit: int | None, keep: Sequence[str] = ()
                      ) -> tuple[dict[str, int], np.ndarray]:
    """Return word -> row and the vectors of the first `limit` words of a .vec/.txt file.

    Accepts fastText `.vec` (a "count dim" header line) and GloVe `.txt`. As the released
    `build_vocab_k_words` does, the words in `keep` (sentence markers) are read even when they
    come after the first `limit` words.
    """
    index: dict[str, int] = {}
    rows: list[np.ndarray] = []
    wanted = set(keep)
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            word, _, rest = line.rstrip("\n").partition(" ")
            if number == 1 and rest.count(" ") == 0 and word.isdigit():
                continue  # fastText header
            full = limit is not None and len(rows) >= limit
            if full and not (wanted - index.keys()):
                break
            if word in index or (full and word not in wanted):
                continue
            vector = np.array(rest.split(), dtype=np.float32)
            if rows and vector.shape != rows[0].shape:
                raise WeightsError(f"{path}:{number}: {vector.size} values, expected "
                                   f"{rows[0].size}; is this a word-vector text file?")
            index[word] = len(rows)
            rows.append(vector)
    if not rows:
        raise WeightsError(f"{path}: no word vectors found")
    return index, np.stack(rows)


class InferSentEncoder:
    """The released InferSent encoder over its word vectors, loaded on first use."""

    def __init__(self, weights: Path, word_vectors: Path, *, version: int = 2,
                 vocab_size: int | None = 300_000, tokenize: bool = True,
                 allow_pickle: bool = False, device: str = "cpu") -> None:
        self.weights, self.word_vectors = Path(weights), Path(word_vectors)
        self.version, self.vocab_size, self.tokenize = version, vocab_size, tokenize
        self.allow_pickle, self.device = allow_pickle, device
        self._model: BiLSTMMaxEncoder | None = None
        self._words: tuple[dict[str, int], torch.Tensor] | None = None

    @property
    def model(self) -> BiLSTMMaxEncoder:
        """The BiLSTM with the released weights (read on first access)."""
        if self._model is None:
            state = load_checkpoint(self.weights, encoder="infersent",
                                    allow_pickle=self.allow_pickle)
            if not isinstance(state, dict):
                raise WeightsError(f"infersent: {self.weights} holds a {type(state).__name__}, "
                                   "not a state dict")
            model = architecture_for(state)
            load_strict(model, state, encoder="infersent", source=self.weights)
            self._model = model.to(self.device).eval()
        return self._model

    @property
    def dim(self) -> int:
        """4096 for the released models (2 x the LSTM's hidden size)."""
        return self.model.dim

    @cached_property
    def _file_identities(self) -> tuple[str, str]:
        """`file_identity` of the weights and of the word vectors, read once for both
        `fingerprint` and `declares`."""
        return file_identity(self.weights), file_identity(self.word_vectors)

    def fingerprint(self) -> str:
        """Version, tokenisation, vocabulary cut and the identities of both weight files."""
        weights, word_vectors = self._file_identities
        return (f"infersent/{VERSION}/v{self.version}/tok={int(self.tokenize)}/"
                f"k={self.vocab_size}/{weights}/{word_vectors}")

    def words(self, sentence: str) -> list[str]:
        """Return `<bos> tokens <eos>` restricted to words with a vector (<eos> if none)."""
        index, _ = self._vectors()
        bos, eos = MARKERS[self.version]
        tokens = word_tokenize(sentence, moses_negation=self.version == 2) if self.tokenize \
            else sentence.split()
        kept = [w for w in [bos, *tokens, eos] if w in index]
        return kept or [eos]

    def _vectors(self) -> tuple[dict[str, int], torch.Tensor]:
        if self._words is None:
            index, vectors = read_word_vectors(self.word_vectors, self.vocab_size,
                                               keep=MARKERS[self.version])
            if vectors.shape[1] != self.model.enc_lstm.input_size:
                raise WeightsError(f"infersent: {self.word_vectors} has {vectors.shape[1]}-d "
                                   f"vectors; the encoder expects "
                                   f"{self.model.enc_lstm.input_size}")
            if MARKERS[self.version][1] not in index:
                raise WeightsError(f"infersent: {self.word_vectors} has no vector for "
                                   f"{MARKERS[self.version][1]!r}; use the vectors InferSent "
                                   f"version {self.version} was trained with")
            self._words = index, torch.from_numpy(vectors).to(self.device)
        return self._words

    @torch.no_grad()
    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return the (n, 4096) max-pooled BiLSTM states of the sentences."""
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        index, table = self._vectors()
        for start in range(0, len(sentences), batch_size):
            batch = [[index[w] for w in self.words(s)] for s in sentences[start:start + batch_size]]
            lengths = torch.tensor([len(ids) for ids in batch])
            ids = torch.zeros((int(lengths.max()), len(batch)), dtype=torch.long)
            for column, row in enumerate(batch):
                ids[:len(row), column] = torch.tensor(row)
            words = table[ids.to(self.device)]
            out[start:start + len(batch)] = self.model(words, lengths).float().cpu().numpy()
        return out

    def declares(self) -> dict[str, Any]:
        """The released files by name, without their suffix (`infersent2` for infersent2.pkl or
        its .safetensors conversion; `crawl-300d-2M` for the word vectors), and the options that
        change the vectors: the version, the vocabulary cut and the tokenisation; with both
        files' digests. The weights are not read."""
        weights, word_vectors = self._file_identities
        return {"weights": self.weights.stem, "word_vectors": self.word_vectors.stem,
                "version": self.version, "vocab_size": self.vocab_size,
                "tokenize": self.tokenize,
                "files": {self.weights.name: weights, self.word_vectors.name: word_vectors}}
