"""Stages 3-4: fit trainable encoders, then encode train and test sentences to vector files."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import PluginError, plugin_call
from harness.protocols import Encoder, TrainableEncoder, fit_version, fits_resumably, is_positional
from harness.spec import ENCODE_BATCH_SIZE, Component, encode_batch_size
from harness.stages.base import RunContext, ShardWork
from harness.stages.corpus import Corpus
from harness.stages.vocab import Vocab
from harness.util.vectors import (
    Shard,
    check_vectors,
    claim_shard,
    create_vector_file,
    finish_vector_file,
    open_vectors,
    shard_done,
    write_shard,
)

VERSION = 2


@dataclass(frozen=True)
class Encoded:
    """One encoder's sentence vectors, one artifact per split (`keys`, `directories`), each a
    memory-mapped `<split>.npy`: a decoder trained on the train split does not depend on the
    test split, and a finished split is never encoded again."""

    encoder: str
    keys: dict[str, str]
    dim: int
    directories: dict[str, Path]
    # What downstream evaluation needs to encode other sentences with the same encoder.
    identity: dict[str, Any] = field(default_factory=dict)
    model: Encoder | None = field(default=None, compare=False, repr=False)
    plugin: str = ""
    # A pretrained encoder reads other text (downstream tasks') as given, not normalised.
    pretrained: bool = False
    redraw: Callable[[int], np.ndarray] | None = field(default=None, compare=False, repr=False)
    """For vectors under a randomised defence (`harness.analyses.privacy.defend.redraws`): the training
    split drawn afresh, `redraw(draw)`; None where the vectors are the same at every draw."""

    def vectors(self, split: str) -> np.ndarray:
        """Return the vectors of `split` ("train" or "test"), memory-mapped."""
        return open_vectors(self.directories[split] / f"{split}.npy")

    def encode(self, sentences: Sequence[str], batch_size: int = ENCODE_BATCH_SIZE
               ) -> np.ndarray:
        """Return vectors of any sentences, batched and checked like the corpus' vectors.

        A positional encoder (`harness.protocols.PositionalEncoder`) is called without a split
        here: these are not the corpus' rows, and it answers from a stream of its own."""
        if self.model is None:
            raise RuntimeError(f"encoder {self.encoder!r} was not kept with its vectors")
        out = np.empty((len(sentences), self.dim), dtype=np.float32)
        for start in range(0, len(sentences), batch_size):
            batch = sentences[start:start + batch_size]
            vectors = encode_batch(self.model, batch, batch_size, self.plugin, self.encoder)
            out[start:start + len(batch)] = check_vectors(vectors, len(batch), self.dim,
                                                          self.plugin)
        return out


def encode_batch(encoder: Encoder, batch: Sequence[str], batch_size: int, plugin: str,
                 name: str, *, split: str | None = None, start: int = 0) -> Any:
    """The encoder's raw output for `batch`; an exception it raises names its plugin.

    With `split`, `batch` is rows `start`, `start + 1`, ... of that corpus split, which only a
    positional encoder is told (the caller checks `is_positional`)."""
    with plugin_call(plugin, f"encoder {name!r}: encode"):
        if split is None:
            return encoder.encode(batch, batch_size=batch_size)
        return encoder.encode(batch, batch_size=batch_size, split=split, start=start)


@dataclass
class Remembering:
    """An encoder that keeps the vector of every sentence it has encoded, in memory, and asks
    its `inner` encoder only for those it has not: an encoder's vectors of the same text asked
    for under several defences (the privacy analysis's levels: the tasks' sentences, an
    attack's public corpus) cost one encoding. Not for a positional encoder, whose vectors do
    not follow the text."""

    inner: Encoder
    plugin: str = ""
    name: str = ""
    known: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def fingerprint(self) -> str:
        return self.inner.fingerprint()

    def encode(self, sentences: Sequence[str], batch_size: int = ENCODE_BATCH_SIZE
               ) -> np.ndarray:
        missing = list(dict.fromkeys(s for s in sentences if s not in self.known))
        if missing:
            found = check_vectors(encode_batch(self.inner, missing, batch_size, self.plugin,
                                               self.name), len(missing), self.dim, self.plugin)
            self.known.update(zip(missing, np.asarray(found, dtype=np.float32), strict=True))
        if not sentences:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.known[s] for s in sentences])


def remembering(encoded: Encoded) -> Encoded:
    """`encoded` whose model remembers what it encoded (`Remembering`); as it is without a
    model or with a positional one."""
    if encoded.model is None or is_positional(encoded.model):
        return encoded
    return replace(encoded, model=Remembering(encoded.model, encoded.plugin, encoded.encoder))


def _dim(encoder: Encoder, plugin: str) -> int:
    try:
        dim = int(encoder.dim)
    except Exception as exc:
        raise PluginError(plugin, f"encoder has no usable `dim`: {exc}") from exc
    if dim <= 0:
        raise PluginError(plugin, f"encoder declares dim={dim}; expected a positive integer")
    return dim


def build_encoder(ctx: RunContext, component: Component, corpus: Corpus, vocab: Vocab
                  ) -> tuple[Encoder, str | None]:
    """Return the encoder, fitted (from the cache when possible) if it is trainable."""
    plugin = component.plugin
    encoder = ctx.build(component, vocab=vocab.vocab)
    if not isinstance(encoder, Encoder):
        raise PluginError(plugin, f"encoder {component.name!r} lacks dim/fingerprint/encode")
    if not component.info.trainable:
        return encoder, None
    if not isinstance(encoder, TrainableEncoder):
        raise PluginError(plugin, f"encoder {component.name!r} is registered as trainable "
                                  "but lacks fit/save/load")
    started = time.perf_counter()
    parts = {"version": VERSION, "encoder": component.identity(),
             "fit_version": fit_version(encoder),
             "corpus": corpus.fit_key, "vocab": vocab.key, "seed": ctx.spec.seed}

    def build(directory: Path) -> dict[str, Any]:
        # A resumable fit checkpoints in the artifact's partial directory, kept until the fit
        # is done, and continues from it after a kill.
        with plugin_call(plugin, f"encoder {component.name!r}: fit"):
            if fits_resumably(encoder):
                encoder.fit(corpus.fit, workdir=directory / "work")
                shutil.rmtree(directory / "work", ignore_errors=True)
            else:
                encoder.fit(corpus.fit)
            encoder.save(directory)
        return {"dim": _dim(encoder, plugin)}

    directory = ctx.cache.produce("fit", parts, build, label=component.name)
    with plugin_call(plugin, f"encoder {component.name!r}: load"):
        encoder.load(directory)  # the same state whether just fitted or cached
    ctx.add_time("fit", time.perf_counter() - started)
    return encoder, directory.name


def encode_corpus(ctx: RunContext, component: Component, corpus: Corpus, vocab: Vocab
                  ) -> Encoded:
    """Return the encoder's vectors for the corpus, encoding what the cache lacks."""
    plugin = component.plugin
    encoder, fit_key = build_encoder(ctx, component, corpus, vocab)
    started = time.perf_counter()
    dim = _dim(encoder, plugin)
    section = ctx.spec.encode
    identity = {"encoder": component.identity(), "fingerprint": encoder.fingerprint(),
                "fit": fit_key, "vocab": vocab.key}

    keys, directories = {}, {}
    for split, sentences, sentences_key in (("train", corpus.train, corpus.train_key),
                                            ("test", corpus.test, corpus.test_key)):
        parts = {"version": VERSION, **identity, "split": split, "sentences": sentences_key,
                 "dtype": section.dtype}

        def build(directory: Path, split: str = split, sentences: Sequence[str] = sentences
                  ) -> dict[str, Any]:
            path = directory / f"{split}.npy"
            shards = ctx.shards.count if ctx.shards is not None else 1
            plan = create_vector_file(path, len(sentences), dim=dim, dtype=section.dtype,
                                      shards=shards, batch_size=encode_batch_size(ctx.spec))
            pending = [s for s in plan if shard_done(path, s, len(sentences)) < len(s)]
            write = shard_writer(ctx, component, encoder, split, sentences, path, dim)
            if ctx.shards is None or len(pending) < 2:
                for shard in pending:
                    write(shard)
            else:
                work = ShardWork(component.name, split, path, identity["fingerprint"])
                ctx.shards.run(work, pending, write)
            finish_vector_file(path, plan, len(sentences))
            return {"dim": dim, "dtype": section.dtype, "sentences": len(sentences),
                    "shards": len(plan)}

        directories[split] = ctx.cache.produce("encode", parts, build,
                                               label=f"{component.name} {split}")
        keys[split] = directories[split].name
    ctx.add_time("encode", time.perf_counter() - started)
    return Encoded(encoder=component.name, keys=keys, dim=dim, directories=directories,
                   identity=identity, model=encoder, plugin=plugin,
                   pretrained=component.info.pretrained)


def shard_writer(ctx: RunContext, component: Component, encoder: Encoder, split: str,
                 sentences: Sequence[str], path: Path, dim: int) -> Callable[[Shard], None]:
    """Return a function that encodes one shard of `split` with `encoder` into `path`
    (`harness.util.vectors.write_shard`), in this process."""
    batch_size, plugin = encode_batch_size(ctx.spec), component.plugin
    positional = is_positional(encoder)  # told each batch's split and first row

    def encode(batch: list[str], start: int) -> Any:
        return encode_batch(encoder, batch, batch_size, plugin, component.name,
                            split=split if positional else None, start=start)

    def write(shard: Shard) -> None:
        label = f"encode {component.name} {split}" + (
            f" rows {shard.start}-{shard.stop}" if len(shard) < len(sentences) else "")
        write_shard(path, sentences, shard, encode, with_start=True, dim=dim, plugin=plugin,
                    batch_size=batch_size, label=label)

    return write


def encode_shard(ctx: RunContext, component: Component, corpus: Corpus, vocab: Vocab,
                 work: ShardWork, shard: Shard) -> None:
    """Encode one shard of `work` in this process: the body of a shard task that another
    process (`ShardRunner`) started, which first claims the shard (`claim_shard`); the
    encoder is rebuilt here (a trainable one's fit is read from the cache) and must have the
    job's fingerprint."""
    claim_shard(work.path, shard)
    encoder, _ = build_encoder(ctx, component, corpus, vocab)
    if encoder.fingerprint() != work.fingerprint:
        raise PluginError(component.plugin, f"encoder {component.name!r} built for rows "
                                            f"{shard.start}-{shard.stop} has the fingerprint "
                                            f"{encoder.fingerprint()!r}, not the job's "
                                            f"{work.fingerprint!r}: its processes would write "
                                            "rows of different models into one file")
    sentences = corpus.train if work.split == "train" else corpus.test
    shard_writer(ctx, component, encoder, work.split, sentences, work.path,
                 _dim(encoder, component.plugin))(shard)
