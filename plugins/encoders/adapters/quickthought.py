"""QuickThought (Logeswaran & Lee 2018): sentence vectors from GRU encoders f and g.

A QuickThought model has two encoders, f (`encoder`) and g (`encoder_out`), each a GRU
(bidirectional in the released models: 2 x 600 units) over word embeddings; a sentence's vector
is [f(s)/|f(s)|; g(s)/|g(s)|], each encoder's final state L2-normalised (Logeswaran & Lee 2018,
section 3; the released S2V code's `encode`). The multichannel MC-QT model that Vec2Sent uses
concatenates two such models, one over fixed GloVe vectors and one over learnt embeddings:
2 x 2 x 1,200 = 4,800 dimensions.

The released checkpoints are TensorFlow files. TensorFlow is not a dependency, so the adapter
reads each model from an `.npz` exported once with TensorFlow (docs/encoders.md): the
checkpoint's `encoder*` variables under their TensorFlow names, the embedding table(s)
`word_embedding` (and `word_embedding_out` when g has its own), and their vocabularies `vocab`
(and `vocab_out`) as UTF-8 text, one word per row, stored as uint8 arrays. The GRU is
TensorFlow's `GRUCell`, whose reset gate applies before the recurrent product (torch's
`nn.GRU` applies it after), so it is implemented here.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from torch import nn

from .checkpoints import load_strict
from .common import WeightsError, file_identity
from .text import word_tokenize

VERSION = "1"

UNKNOWN = "<unk>"
ENCODERS = ("encoder", "encoder_out")

_VARIABLE = re.compile(r"^(encoder(?:_out)?)/(?:(fw|bw)/)?(?:rnn/)?gru_cell/(gates|candidate)/"
                       r"(kernel|weights|bias|biases)$")


class TensorFlowGRUCell(nn.Module):
    """TensorFlow's `GRUCell`: r, u = sigmoid([x, h] W_g + b_g); c = tanh([x, r*h] W_c + b_c);
    h' = u * h + (1 - u) * c (Cho et al. 2014, as tf.nn.rnn_cell.GRUCell computes it)."""

    def __init__(self, input_size: int, units: int) -> None:
        super().__init__()
        self.units = units
        self.gates_kernel = nn.Parameter(torch.zeros(input_size + units, 2 * units))
        self.gates_bias = nn.Parameter(torch.ones(2 * units))
        self.candidate_kernel = nn.Parameter(torch.zeros(input_size + units, units))
        self.candidate_bias = nn.Parameter(torch.zeros(units))

    def forward(self, inputs: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        """Return the next state (B, units) for inputs (B, D) and state (B, units)."""
        gates = torch.sigmoid(torch.cat([inputs, state], 1) @ self.gates_kernel + self.gates_bias)
        reset, update = gates.split(self.units, dim=1)
        candidate = torch.tanh(torch.cat([inputs, reset * state], 1) @ self.candidate_kernel
                               + self.candidate_bias)
        return update * state + (1 - update) * candidate


def run_to_length(cell: TensorFlowGRUCell, inputs: torch.Tensor, lengths: torch.Tensor
                  ) -> torch.Tensor:
    """Return each sequence's state after its last real step (tf dynamic_rnn's final state).

    `inputs` is (B, T, D), right-padded; a row's state stops changing once its length is reached.
    """
    state = inputs.new_zeros(inputs.shape[0], cell.units)
    for step in range(inputs.shape[1]):
        running = (lengths > step).unsqueeze(1)
        state = torch.where(running, cell(inputs[:, step], state), state)
    return state


def reverse_within_length(inputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Return (B, T, D) with each row's first `length` steps reversed (tf.reverse_sequence)."""
    steps = torch.arange(inputs.shape[1], device=inputs.device).unsqueeze(0)
    index = torch.where(steps < lengths.unsqueeze(1), lengths.unsqueeze(1) - 1 - steps, steps)
    return inputs.gather(1, index.unsqueeze(2).expand_as(inputs))


class GRUSentenceEncoder(nn.Module):
    """One QuickThought encoder: a (bi)directional TensorFlow GRU's final state(s)."""

    def __init__(self, input_size: int, units: int, bidirectional: bool) -> None:
        super().__init__()
        self.fw = TensorFlowGRUCell(input_size, units)
        self.bw = TensorFlowGRUCell(input_size, units) if bidirectional else None

    @property
    def dim(self) -> int:
        """Units x directions."""
        return self.fw.units * (2 if self.bw is not None else 1)

    def forward(self, inputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Return (B, dim): [forward final state; backward final state]."""
        forward = run_to_length(self.fw, inputs, lengths)
        if self.bw is None:
            return forward
        backward = run_to_length(self.bw, reverse_within_length(inputs, lengths), lengths)
        return torch.cat([forward, backward], 1)


@dataclass(frozen=True)
class Vocabulary:
    """Word -> row of an embedding table; unknown words map to `<unk>` (row 0 if absent)."""

    index: dict[str, int]
    table: str
    """Name of the model buffer holding the embedding table."""

    def ids(self, words: Sequence[str]) -> list[int]:
        """Return the rows of `words`, unknown ones mapped to the `<unk>` row."""
        unknown = self.index.get(UNKNOWN, 0)
        return [self.index.get(w, unknown) for w in words]


def _text_rows(array: np.ndarray, name: str, source: Path) -> list[str]:
    if array.dtype != np.uint8 or array.ndim != 1:
        raise WeightsError(f"quickthought: {source}: `{name}` must be UTF-8 text as a 1-d uint8 "
                           "array (docs/encoders.md)")
    return bytes(array).decode("utf-8").split("\n")


class QuickThoughtModel(nn.Module):
    """One exported QuickThought model: its two encoders and their embedding tables."""

    def __init__(self, arrays: dict[str, np.ndarray], source: Path) -> None:
        super().__init__()
        self.source = source
        variables: dict[tuple[str, str, str, str], np.ndarray] = {}
        for key, value in arrays.items():
            match = _VARIABLE.match(key)
            if match:
                encoder, direction, part, kind = match.groups()
                kind = "kernel" if kind in ("kernel", "weights") else "bias"
                variables[(encoder, direction or "fw", part, kind)] = value
        self.vocabularies = self._vocabularies(arrays, source)
        for vocabulary in self.vocabularies:
            if not hasattr(self, vocabulary.table):
                self.register_buffer(vocabulary.table, torch.from_numpy(
                    np.asarray(arrays[vocabulary.table], dtype=np.float32)))
        self.encoders = nn.ModuleDict()
        for number, name in enumerate(ENCODERS):
            kernel = variables.get((name, "fw", "gates", "kernel"))
            if kernel is None:
                found = sorted(k for k in arrays if k.startswith("encoder"))[:4]
                raise WeightsError(f"quickthought: {source} has no {name}/.../gru_cell/gates/"
                                   f"kernel (found {found}); export every `encoder*` variable "
                                   "of the checkpoint (docs/encoders.md)")
            input_size = arrays[self.vocabularies[number].table].shape[1]
            units = kernel.shape[1] // 2
            bidirectional = (name, "bw", "gates", "kernel") in variables
            encoder = GRUSentenceEncoder(input_size, units, bidirectional)
            state = {f"{direction}.{part}_{kind}": torch.from_numpy(np.asarray(value))
                     for (owner, direction, part, kind), value in variables.items() if owner == name}
            gru = f"{name} ({'bi' if bidirectional else 'uni'}directional GRU)"
            load_strict(encoder, state, encoder="quickthought", source=f"{source}: {gru}")
            self.encoders[name] = encoder

    @staticmethod
    def _vocabularies(arrays: dict[str, np.ndarray], source: Path) -> list[Vocabulary]:
        """Return the vocabularies of f and g (g shares f's unless `word_embedding_out` exists)."""
        out: list[Vocabulary] = []
        for suffix in ("", "_out"):
            table_key = f"word_embedding{suffix}"
            if table_key not in arrays:
                if suffix:
                    out.append(out[0])
                    continue
                raise WeightsError(f"quickthought: {source} has no `word_embedding` table")
            rows = np.shape(arrays[table_key])[0]
            vocab_key = f"vocab{suffix}" if f"vocab{suffix}" in arrays else "vocab"
            if vocab_key not in arrays:
                raise WeightsError(f"quickthought: {source} has no `vocab` (the words of "
                                   "`word_embedding`, one per row)")
            words = _text_rows(arrays[vocab_key], vocab_key, source)
            if len(words) != rows:
                raise WeightsError(f"quickthought: {source}: {len(words)} words in `{vocab_key}` "
                                   f"for {rows} rows of `{table_key}`")
            index: dict[str, int] = {}
            for row, word in enumerate(words):
                index.setdefault(word, row)
            out.append(Vocabulary(index, table_key))
        return out

    @property
    def dim(self) -> int:
        """f's plus g's dimension (2,400 for a released model)."""
        # nn.ModuleDict types its values as Module; they are the GRUSentenceEncoders built above
        return sum(cast(GRUSentenceEncoder, encoder).dim for encoder in self.encoders.values())

    def forward(self, sentences: Sequence[list[str]]) -> torch.Tensor:
        """Return (B, dim) [f/|f|; g/|g|] for tokenised, non-empty sentences."""
        lengths = torch.tensor([len(words) for words in sentences])
        parts = []
        for vocabulary, encoder in zip(self.vocabularies, self.encoders.values()):
            ids = torch.zeros((len(sentences), int(lengths.max())), dtype=torch.long)
            for row, words in enumerate(sentences):
                ids[row, :len(words)] = torch.tensor(vocabulary.ids(words))
            table = getattr(self, vocabulary.table)
            vectors = encoder(table[ids.to(table.device)], lengths.to(table.device))
            parts.append(nn.functional.normalize(vectors, dim=1))
        return torch.cat(parts, 1)


def model_files(weights: Path) -> list[Path]:
    """Return the exported model files: `weights` itself, or the `.npz` files in it by name."""
    weights = Path(weights)
    if weights.is_dir():
        files = sorted(weights.glob("*.npz"))
        if not files:
            raise WeightsError(f"quickthought: no .npz models in {weights}; export them as "
                               "docs/encoders.md shows")
        return files
    return [weights]


def declared_dim(path: Path) -> int:
    """Return the dimension of the model exported to `path` from array headers, reading no data.

    The fixed GloVe table of MC-QT is 2.6 GB: a cached run needs the dimension, not the table.
    """
    shapes: dict[str, tuple[int, ...]] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            for member in archive.namelist():
                if not member.endswith(".npy") or not _VARIABLE.match(member[:-4]):
                    continue
                with archive.open(member) as handle:
                    version = np.lib.format.read_magic(handle)
                    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) \
                        else np.lib.format.read_array_header_2_0
                    shape, _, _ = read_header(handle)
                shapes[member[:-4]] = shape
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise WeightsError(f"quickthought: cannot read {path} as .npz ({exc})") from None
    dim = 0
    for name in ENCODERS:
        kernel = next((shape for key, shape in shapes.items()
                       if key.startswith(f"{name}/") and "/gates/" in key and len(shape) == 2
                       and "/bw/" not in key), None)
        if kernel is None:
            raise WeightsError(f"quickthought: {path} has no {name}/.../gru_cell/gates/kernel; "
                               "export every `encoder*` variable (docs/encoders.md)")
        bidirectional = any(key.startswith(f"{name}/bw/") for key in shapes)
        dim += kernel[1] // 2 * (2 if bidirectional else 1)
    return dim


def load_model(path: Path) -> QuickThoughtModel:
    """Return the QuickThought model exported to `path` (.npz, read without pickle)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except (OSError, ValueError) as exc:
        raise WeightsError(f"quickthought: cannot read {path} as .npz ({exc})") from None
    return QuickThoughtModel(arrays, path)


class QuickThoughtEncoder:
    """MC-QT: the concatenated vectors of one or more exported QuickThought models."""

    def __init__(self, weights: Path, *, tokenize: bool = True, device: str = "cpu") -> None:
        self.files = model_files(weights)
        self.tokenize, self.device = tokenize, device
        self._models: list[QuickThoughtModel] | None = None

    @property
    def models(self) -> list[QuickThoughtModel]:
        """The exported models in file-name order (read on first access)."""
        if self._models is None:
            self._models = [load_model(path).to(self.device).eval() for path in self.files]
        return self._models

    @property
    def dim(self) -> int:
        """The sum of the models' dimensions (4,800 for MC-QT), read without loading them."""
        if self._models is not None:
            return sum(model.dim for model in self._models)
        return sum(declared_dim(path) for path in self.files)

    @cached_property
    def _file_identities(self) -> list[str]:
        """`file_identity` of every model file, in order, read once for both `fingerprint` and
        `declares`."""
        return [file_identity(path) for path in self.files]

    def fingerprint(self) -> str:
        """Version, tokenisation and the identity of every model file, in order."""
        files = "+".join(self._file_identities)
        return f"quickthought/{VERSION}/tok={int(self.tokenize)}/{files}"

    def words(self, sentence: str) -> list[str]:
        """Return the tokens the encoders read (`<unk>` for an empty sentence)."""
        tokens = word_tokenize(sentence) if self.tokenize else sentence.split()
        return tokens or [UNKNOWN]

    @torch.no_grad()
    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return the (n, dim) concatenation of every model's [f/|f|; g/|g|]."""
        out = np.zeros((len(sentences), self.dim), dtype=np.float32)
        for start in range(0, len(sentences), batch_size):
            batch = [self.words(s) for s in sentences[start:start + batch_size]]
            vectors = torch.cat([model(batch) for model in self.models], 1)
            out[start:start + len(batch)] = vectors.float().cpu().numpy()
        return out

    def declares(self) -> dict[str, Any]:
        """The exported models by name, without `.npz`, in file-name order (name the exports
        after their checkpoints, e.g. BS400-W300-S1200-UMBC-bidir, for them to say which
        release they are), the tokenisation (an option that changes the vectors), the
        dimension from the arrays' headers, and the files' digests."""
        return {"weights": [path.stem for path in self.files], "tokenize": self.tokenize,
                "dim": self.dim,
                "files": {path.name: digest
                          for path, digest in zip(self.files, self._file_identities, strict=True)}}
