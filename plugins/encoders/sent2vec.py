"""Sent2Vec (Pagliardini et al. 2018, NAACL): sentence vectors from unigram and bigram embeddings.

A sentence S is the list R(S) of its word unigrams and bigrams; its vector is the average of their
source embeddings, v_S = (1/|R(S)|) sum_{w in R(S)} v_w (eq. 2). Training predicts each target
word w_t of a sentence from the average over the rest of it, v_{S \\ {w_t}}, with the logistic
loss l(x) = log(1 + e^-x) and negative sampling (the training objective, section 2):

    l(u_{w_t} . v_{S \\ {w_t}}) + sum_{w' in N_{w_t}} l(-u_{w'} . v_{S \\ {w_t}})

Negatives are drawn with probability proportional to sqrt(word frequency); a word is used as a
target with probability min(1, sqrt(t/f_w) + t/f_w) (subsampling); for each sentence K bigrams
are dropped (section 2). Bigrams are hashed into `buckets` rows, as the released code does.

Two departures from the released C++ code, both for batched training in torch: updates come from
Adam on sparse gradients over batches of sentences (the paper: Hogwild SGD, lr 0.2, per target),
with the same linear decay of the learning rate; and the context of a target excludes the
bigrams that contain it (the released code replaces the target by a placeholder word instead).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from tqdm.auto import tqdm

from harness.plugin import DataError, HarnessError

if TYPE_CHECKING:
    from .options import Sent2VecOptions

VERSION = "1"
WEIGHTS_FILE = "sent2vec.safetensors"
VOCAB_FILE = "sent2vec.json"

BIGRAM_HASH = 116049371
"""Multiplier of the released code's word-n-gram hash: h(a, b) = a * 116049371 + b."""


def bigram_rows(ids: np.ndarray, words: int, buckets: int) -> np.ndarray:
    """Return the embedding rows of the bigrams of one sentence's word ids (len(ids) - 1 rows)."""
    ids = np.asarray(ids, dtype=np.int64)
    return words + (ids[:-1] * BIGRAM_HASH + ids[1:]) % buckets


@dataclass
class _Batch:
    """One batch of sentences flattened for the vectorised loss (all arrays are torch tensors)."""

    tokens: torch.Tensor          # (N,) word id of every token
    token_sentence: torch.Tensor  # (N,) sentence of every token
    bigrams: torch.Tensor         # (M,) embedding row of every kept bigram
    bigram_sentence: torch.Tensor  # (M,) its sentence
    bigram_left: torch.Tensor     # (M,) index (into tokens) of its left word
    targets: torch.Tensor         # (P,) index (into tokens) of every target
    negatives: torch.Tensor       # (P, K) word ids of the negatives of every target
    sentences: int


class Sent2VecEncoder:
    """Unigram + bigram Sent2Vec trained on the run's corpus (a `TrainableEncoder`)."""

    fit_version = VERSION  # part of the fit stage's cache key

    def __init__(self, options: Sent2VecOptions, *, seed: int = 1, device: str = "cpu") -> None:
        self.options = options
        self.seed = options.seed if options.seed is not None else seed
        self.device = device
        self.words: list[str] = []
        self.index: dict[str, int] = {}
        self.input: np.ndarray | None = None
        self.history: list[float] = []
        """Mean training loss of each epoch, in order."""

    # ------------------------------------------------------------------ protocol

    @property
    def dim(self) -> int:
        """The embedding dimension (the `dim` option; the fitted matrix's width once fitted)."""
        return int(self.input.shape[1]) if self.input is not None else self.options.dim

    def fingerprint(self) -> str:
        """Version and options; the fitted state is keyed by the core's fit stage."""
        options = json.dumps(self.options.model_dump(mode="json"), sort_keys=True)
        return f"sent2vec/{VERSION}/seed={self.seed}/{options}"

    def declares(self) -> dict[str, Any]:
        """Not the released Sent2Vec models (e.g. wiki_bigrams.bin): one trained on this run's
        corpus, with every training option (each changes the vectors) and the seed in use, of
        the `dim` option's size."""
        training = self.options.model_dump(mode="json", exclude={"dim", "seed"})
        return {"model": "sent2vec trained on this run's corpus", **training, "seed": self.seed,
                "dim": self.dim}

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """Return (n, dim) averages of each sentence's unigram and bigram vectors (eq. 2).

        Words outside the vocabulary are skipped before bigrams are formed, as in the released
        code; a sentence with no known word maps to zeros.
        """
        matrix = self._fitted()
        out = np.zeros((len(sentences), matrix.shape[1]), dtype=np.float32)
        for row, sentence in enumerate(sentences):
            ids = self._ids(sentence)
            if ids.size == 0:
                continue
            rows = np.concatenate([ids, bigram_rows(ids, len(self.words), self.options.buckets)])
            out[row] = matrix[rows].mean(axis=0)
        return out

    def fit(self, sentences: Sequence[str]) -> None:
        """Learn the vocabulary and the embeddings from `sentences` (section 2: negative sampling)."""
        counts = Counter(word for sentence in sentences for word in sentence.split())
        kept = sorted((w for w, c in counts.items() if c >= self.options.min_count),
                      key=lambda w: (-counts[w], w))
        if not kept:
            raise DataError(f"sent2vec: no word occurs min_count={self.options.min_count} times in "
                            f"the {len(sentences)} training sentences; lower min_count")
        self.words, self.index = kept, {w: i for i, w in enumerate(kept)}
        frequency = np.array([counts[w] for w in kept], dtype=np.float64)
        corpus = [ids for ids in (self._ids(s) for s in sentences) if ids.size >= 2]
        if not corpus:
            raise DataError("sent2vec: no training sentence has two in-vocabulary words")
        self.input = self._train(corpus, frequency)

    def save(self, directory: Path) -> None:
        """Write the source embeddings (safetensors) and the vocabulary (JSON)."""
        from safetensors.numpy import save_file

        directory = Path(directory)
        save_file({"input": np.ascontiguousarray(self._fitted())}, str(directory / WEIGHTS_FILE))
        (directory / VOCAB_FILE).write_text(json.dumps(
            {"version": VERSION, "buckets": self.options.buckets, "words": self.words}),
            encoding="utf-8")

    def load(self, directory: Path) -> None:
        """Restore what `save` wrote."""
        from safetensors.numpy import load_file

        directory = Path(directory)
        meta = json.loads((directory / VOCAB_FILE).read_text(encoding="utf-8"))
        matrix = load_file(str(directory / WEIGHTS_FILE))["input"]
        if meta.get("buckets") != self.options.buckets or \
                matrix.shape[0] != len(meta["words"]) + self.options.buckets:
            raise HarnessError(f"sent2vec: {directory} was saved with other options; delete it")
        self.words = list(meta["words"])
        self.index = {w: i for i, w in enumerate(self.words)}
        self.input = matrix

    # ------------------------------------------------------------------ internals

    def _fitted(self) -> np.ndarray:
        if self.input is None:
            raise HarnessError("sent2vec: encode called before fit/load")
        return self.input

    def _ids(self, sentence: str) -> np.ndarray:
        return np.array([self.index[w] for w in sentence.split() if w in self.index],
                        dtype=np.int64)

    def _train(self, corpus: list[np.ndarray], frequency: np.ndarray) -> np.ndarray:
        """Return the trained source embeddings (words + buckets rows); record epoch losses."""
        options = self.options
        words = len(frequency)
        rng = np.random.default_rng(self.seed)
        generator = torch.Generator().manual_seed(self.seed)
        device = torch.device(self.device)
        source = torch.nn.Embedding(words + options.buckets, options.dim, sparse=True)
        target = torch.nn.Embedding(words, options.dim, sparse=True)
        with torch.no_grad():
            # fastText's initialisation: small uniform source vectors, zero target vectors
            source.weight.uniform_(-1.0 / options.dim, 1.0 / options.dim, generator=generator)
            target.weight.zero_()
        source, target = source.to(device), target.to(device)
        optimiser = torch.optim.SparseAdam([source.weight, target.weight], lr=options.lr)
        steps = options.epochs * math.ceil(len(corpus) / options.batch_size)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimiser, lambda step: max(0.0, 1.0 - step / steps))

        f = frequency / frequency.sum()
        keep = np.ones_like(f) if options.subsample == 0 else \
            np.minimum(1.0, np.sqrt(options.subsample / f) + options.subsample / f)
        keep[frequency < options.min_target_count] = 0.0
        if not keep.any():
            raise DataError(f"sent2vec: no word occurs {options.min_target_count} times in the "
                            f"{len(corpus)} fit sentences, so there is nothing to predict; "
                            "lower `min_target_count` or fit on more text")
        negative_cdf = np.cumsum(np.sqrt(frequency))
        negative_cdf /= negative_cdf[-1]

        self.history = []
        for epoch in range(options.epochs):
            order = rng.permutation(len(corpus))
            total, count = 0.0, 0
            bar = tqdm(range(0, len(order), options.batch_size), desc=f"sent2vec epoch "
                       f"{epoch + 1}/{options.epochs}", unit="batch", leave=False, disable=None)
            for start in bar:
                batch = self._batch([corpus[i] for i in order[start:start + options.batch_size]],
                                    keep, negative_cdf, rng, words)
                if batch.targets.numel() == 0:
                    schedule.step()
                    continue
                loss = self._loss(source, target, batch, device)
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                schedule.step()
                total += float(loss.detach()) * batch.targets.numel()
                count += batch.targets.numel()
                bar.set_postfix(loss=f"{total / max(count, 1):.4f}")
            self.history.append(total / max(count, 1))
        return source.weight.detach().cpu().numpy().astype(np.float32)

    def _batch(self, sentences: list[np.ndarray], keep: np.ndarray, negative_cdf: np.ndarray,
               rng: np.random.Generator, words: int) -> _Batch:
        """Flatten sentences; drop K bigrams per sentence; subsample targets; draw negatives."""
        options = self.options
        lengths = np.array([len(s) for s in sentences])
        tokens = np.concatenate(sentences)
        token_sentence = np.repeat(np.arange(len(sentences)), lengths)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        # bigram j of a sentence joins its tokens j and j + 1
        pair_counts = lengths - 1
        bigram_sentence = np.repeat(np.arange(len(sentences)), pair_counts)
        bigram_left = np.concatenate([start + np.arange(n) for start, n in zip(starts, pair_counts)])
        bigrams = words + (tokens[bigram_left] * BIGRAM_HASH + tokens[bigram_left + 1]) \
            % options.buckets
        # dropout: K bigrams per sentence, at random, always leaving one (section 2)
        drop = np.minimum(options.dropout_k, pair_counts - 1)
        order = np.lexsort((rng.random(len(bigrams)), bigram_sentence))
        rank = np.empty(len(bigrams), dtype=np.int64)
        rank[order] = np.arange(len(bigrams)) - np.repeat(np.cumsum(pair_counts) - pair_counts,
                                                          pair_counts)
        kept = rank >= drop[bigram_sentence]
        targets = np.flatnonzero(rng.random(len(tokens)) < keep[tokens])
        negatives = np.searchsorted(negative_cdf, rng.random((len(targets), options.negatives)),
                                    side="right").clip(max=words - 1)
        as_tensor = torch.from_numpy
        return _Batch(as_tensor(tokens), as_tensor(token_sentence), as_tensor(bigrams[kept]),
                      as_tensor(bigram_sentence[kept]), as_tensor(bigram_left[kept]),
                      as_tensor(targets), as_tensor(negatives), len(sentences))

    @staticmethod
    def _loss(source: torch.nn.Embedding, target: torch.nn.Embedding, batch: _Batch,
              device: torch.device) -> torch.Tensor:
        """Return the mean over targets of the section 2 loss, contexts excluding their target.

        The context sum is the sentence's sum minus the target's unigram and the kept bigrams
        containing it, so each sentence is embedded once, not once per target.
        """
        b = {name: getattr(batch, name).to(device) for name in
             ("tokens", "token_sentence", "bigrams", "bigram_sentence", "bigram_left", "targets",
              "negatives")}
        unigram_vectors = source(b["tokens"])
        bigram_vectors = source(b["bigrams"])
        dim = unigram_vectors.shape[1]
        sentence_sum = unigram_vectors.new_zeros(batch.sentences, dim) \
            .index_add(0, b["token_sentence"], unigram_vectors) \
            .index_add(0, b["bigram_sentence"], bigram_vectors)
        sentence_size = torch.bincount(b["token_sentence"], minlength=batch.sentences) \
            + torch.bincount(b["bigram_sentence"], minlength=batch.sentences)
        n = unigram_vectors.shape[0]
        touching = unigram_vectors.new_zeros(n, dim) \
            .index_add(0, b["bigram_left"], bigram_vectors) \
            .index_add(0, b["bigram_left"] + 1, bigram_vectors)
        touching_count = torch.bincount(b["bigram_left"], minlength=n) \
            + torch.bincount(b["bigram_left"] + 1, minlength=n)
        t = b["targets"]
        owner = b["token_sentence"][t]
        context = (sentence_sum[owner] - unigram_vectors[t] - touching[t]) \
            / (sentence_size[owner] - 1 - touching_count[t]).unsqueeze(1).to(unigram_vectors.dtype)
        target_words = b["tokens"][t]
        positive = (target(target_words) * context).sum(1)
        negative = torch.einsum("pkd,pd->pk", target(b["negatives"]), context)
        # a negative equal to the target is no negative: the released code redraws it
        valid = (b["negatives"] != target_words.unsqueeze(1)).to(negative.dtype)
        logistic = torch.nn.functional.softplus
        return (logistic(-positive) + (logistic(negative) * valid).sum(1)).mean()
