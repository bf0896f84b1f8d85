"""LASER (Artetxe & Schwenk 2019): a 5-layer BiLSTM over BPE pieces, max-pooled over time.

The released `bilstm.93langs.2018-12-26.pt` holds `params` (vocabulary size 73,640, padding
index, 320-d embeddings, 5 layers of 512 units per direction), `model` (the state dict:
`embed_tokens.weight`, `lstm.*_l0..l4[_reverse]`) and `dictionary` (piece -> id). A sentence is
Moses-tokenised, lowercased, segmented with the 93-language BPE codes (`93langs.fcodes`,
restricted to `93langs.fvocab`) and closed with `</s>`; its vector is the element-wise max over
time of the top layer's outputs, padding excluded (Artetxe & Schwenk 2019, section 3): 1,024
dimensions.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .bpe import BytePairEncoder, read_codes, read_vocabulary
from .checkpoints import load_checkpoint, load_strict
from .common import WeightsError, file_identity
from .text import word_tokenize

VERSION = "1"

MODEL_FILE = "bilstm.93langs.2018-12-26.pt"
CODES_FILE = "93langs.fcodes"
VOCAB_FILE = "93langs.fvocab"


class MultilayerBiLSTMMaxEncoder(nn.Module):
    """Embeddings, a stacked bidirectional LSTM and max pooling over time (LASER's `Encoder`)."""

    def __init__(self, num_embeddings: int, padding_idx: int, embed_dim: int = 320,
                 hidden_size: int = 512, num_layers: int = 5, bidirectional: bool = True,
                 **_ignored: Any) -> None:
        super().__init__()
        self.padding_idx = padding_idx
        self.embed_tokens = nn.Embedding(num_embeddings, embed_dim, padding_idx=padding_idx)
        self.lstm = nn.LSTM(embed_dim, hidden_size, num_layers=num_layers,
                            bidirectional=bidirectional)

    @property
    def dim(self) -> int:
        """Size of the sentence vector: hidden size x directions."""
        return self.lstm.hidden_size * (2 if self.lstm.bidirectional else 1)

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Return (B, dim) max-pooled top-layer outputs for right-padded ids (B, T)."""
        embedded = self.embed_tokens(tokens).transpose(0, 1)
        packed = nn.utils.rnn.pack_padded_sequence(embedded, lengths.cpu(), enforce_sorted=False)
        outputs, _ = self.lstm(packed)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs, padding_value=float("-inf"),
                                                      total_length=tokens.shape[1])
        return outputs.max(dim=0).values


def _split_checkpoint(checkpoint: Any, source: Path) -> tuple[dict, dict, dict[str, int]]:
    """Return (params, state dict, dictionary) of a LASER checkpoint, or raise saying why not."""
    if not isinstance(checkpoint, dict) or not {"params", "model", "dictionary"} <= checkpoint.keys():
        keys = sorted(checkpoint)[:5] if isinstance(checkpoint, dict) else type(checkpoint).__name__
        raise WeightsError(f"laser: {source} lacks params/model/dictionary (found {keys}); "
                           f"expected {MODEL_FILE} or its .safetensors + .json conversion")
    return dict(checkpoint["params"]), checkpoint["model"], dict(checkpoint["dictionary"])


class LaserEncoder:
    """The released LASER encoder with its BPE model, loaded on first use."""

    def __init__(self, weights: Path, bpe_codes: Path, bpe_vocab: Path | None, *,
                 allow_pickle: bool = False, device: str = "cpu") -> None:
        self.weights, self.bpe_codes, self.bpe_vocab = Path(weights), Path(bpe_codes), bpe_vocab
        self.allow_pickle, self.device = allow_pickle, device
        self._loaded: tuple[MultilayerBiLSTMMaxEncoder, dict[str, int]] | None = None
        self._bpe: BytePairEncoder | None = None

    def _load(self) -> tuple[MultilayerBiLSTMMaxEncoder, dict[str, int]]:
        if self._loaded is None:
            checkpoint = load_checkpoint(self.weights, encoder="laser",
                                         allow_pickle=self.allow_pickle)
            params, state, dictionary = _split_checkpoint(checkpoint, self.weights)
            for word in ("<pad>", "</s>", "<unk>"):
                if word not in dictionary:
                    raise WeightsError(f"laser: the dictionary in {self.weights} lacks {word!r}")
            model = MultilayerBiLSTMMaxEncoder(**params)
            load_strict(model, state, encoder="laser", source=self.weights)
            self._loaded = model.to(self.device).eval(), dictionary
        return self._loaded

    @property
    def bpe(self) -> BytePairEncoder:
        """The BPE segmenter of the released codes and vocabulary."""
        if self._bpe is None:
            vocabulary = read_vocabulary(self.bpe_vocab) if self.bpe_vocab is not None else None
            self._bpe = BytePairEncoder(read_codes(self.bpe_codes), vocabulary)
        return self._bpe

    @property
    def dim(self) -> int:
        """1024 for the released model (2 x 512)."""
        return self._load()[0].dim

    @cached_property
    def _file_identities(self) -> list[tuple[Path, str]]:
        """(file, `file_identity`) of the model, the codes and the vocabulary when given, in
        that order: read once for both `fingerprint` and `declares`."""
        vocab = [Path(self.bpe_vocab)] if self.bpe_vocab is not None else []
        return [(path, file_identity(path)) for path in (self.weights, self.bpe_codes, *vocab)]

    def fingerprint(self) -> str:
        """Version and the identities of the model, codes and vocabulary files."""
        weights, codes, *vocab = (digest for _, digest in self._file_identities)
        return f"laser/{VERSION}/{weights}/{codes}/{vocab[0] if vocab else 'none'}"

    def pieces(self, sentence: str) -> list[str]:
        """Return the BPE pieces LASER reads for `sentence` (without the closing `</s>`)."""
        return self.bpe.apply(word_tokenize(sentence.lower(), moses_negation=True))

    @torch.no_grad()
    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return the (n, 1024) max-pooled BiLSTM outputs of the sentences."""
        model, dictionary = self._load()
        unk, eos, pad = dictionary["<unk>"], dictionary["</s>"], dictionary["<pad>"]
        out = np.zeros((len(sentences), model.dim), dtype=np.float32)
        for start in range(0, len(sentences), batch_size):
            batch = [[dictionary.get(p, unk) for p in self.pieces(s)] + [eos]
                     for s in sentences[start:start + batch_size]]
            lengths = torch.tensor([len(ids) for ids in batch])
            tokens = torch.full((len(batch), int(lengths.max())), pad, dtype=torch.long)
            for row, ids in enumerate(batch):
                tokens[row, :len(ids)] = torch.tensor(ids)
            out[start:start + len(batch)] = model(tokens.to(self.device), lengths).float().cpu().numpy()
        return out

    def declares(self) -> dict[str, Any]:
        """The released model by name, without its suffix (`bilstm.93langs.2018-12-26` for the
        .pt or its .safetensors conversion), the BPE codes' and vocabulary's names, and the
        files' digests; the model is not read."""
        return {"weights": self.weights.stem, "bpe_codes": self.bpe_codes.name,
                "bpe_vocab": Path(self.bpe_vocab).name if self.bpe_vocab else None,
                "files": {path.name: digest for path, digest in self._file_identities}}
