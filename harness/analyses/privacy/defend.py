"""The privacy analysis's defences applied: an encoder's vectors under a defence
(`harness.protocols.Defence`), one artifact per split, as a store of embeddings would keep
them.

The defence is fitted on the training split's vectors, then maps each split in blocks of
`BLOCK` rows. A randomised defence draws each stored record's noise from a generator of its
own (`record_rng`), seeded by the defence's secret seed (`DefenceEntry.seed`, default the
spec's), the defence at its level, the encoder and the record: a corpus row by its split and
position, any other stored sentence (the downstream tasks', the canaries') by its text. So a
record's defended vector is the same in every run, after a resume and whatever else shares its
encode call, and the noise of two records, two levels, two defences or two encoders is
independent. An attacker's query (its own text through the defended encoder, `query`) draws
fresh noise, keyed by the caller and the call, never a stored record's.

The result is an `Encoded` like the encoder's own: decoders train on it (the adaptive
attacker), generation and scoring read it, and downstream tasks encode their text through the
encoder and then the defence (`DefendedEncoder`).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import PluginError, plugin_call
from harness.protocols import Defence, defence_budget
from harness.spec import DefenceEntry, Entry
from harness.stages.base import RunContext
from harness.stages.encode import Encoded
from harness.util.vectors import check_vectors, write_vectors

VERSION = 3  # 3: noise keyed per record (2: per block of rows, or per encode call)
BLOCK = 4096
"""Rows per block a split is defended and written in (a deterministic defence's `transform`
call)."""

STREAMS = ("train", "test", "record", "query", "redraw")
"""The generator streams: the corpus' splits (a row by its position), every other stored
record (by its text), an attacker's queries (by the caller and the call: one block), and
the fresh draws of the training split an adaptive attacker trains on (`redraws`)."""


def secret_digest(seed: int) -> str:
    """BLAKE2b-128 of a defence's seed: what cache keys and fingerprints hold in its place, so
    the secret itself is written nowhere (a cache's meta.json lists its key's parts)."""
    return hashlib.blake2b(str(seed).encode(), digest_size=16, person=b"defence-seed"
                           ).hexdigest()


def noise_key(entry: Entry, encoder: Mapping[str, Any]) -> str:
    """What a defence's noise is keyed by beside its seed and the rows: the defence at its
    level (name and validated options, so every level has its own) and the encoder (`encoder`:
    its name and validated options), as canonical JSON."""
    defence = {"name": entry.name, "options": entry.settings.model_dump(mode="json")}
    return json.dumps({"defence": defence, "encoder": dict(encoder)}, sort_keys=True,
                      separators=(",", ":"))


def encoder_key(encoded: Encoded) -> dict[str, Any]:
    """The encoder's part of `noise_key`: its name and validated options."""
    component = encoded.identity.get("encoder") or {}
    return {"name": encoded.encoder, "options": component.get("options")}


def _generator(seed: int, key: str, stream: str, position: int | str) -> np.random.Generator:
    """A generator seeded by the 256-bit BLAKE2b digest of (seed, key, stream, position) as
    canonical JSON: distinct tuples give unrelated streams, and the draws give the seed away
    only to one who guesses it (BLAKE2b's preimage resistance)."""
    if stream not in STREAMS:
        raise ValueError(f"unknown stream {stream!r}; known: {', '.join(STREAMS)}")
    material = json.dumps([seed, key, stream, position], separators=(",", ":"))
    digest = hashlib.blake2b(material.encode("utf-8"), digest_size=32).digest()
    return np.random.default_rng(int.from_bytes(digest, "little"))


def record_rng(seed: int, key: str, stream: str, record: int | str) -> np.random.Generator:
    """The generator of one record of `stream` (a row's position, a text's digest, a query
    call's name), for the defence seeded by `seed` at the level and on the encoder `key`
    names (`noise_key`)."""
    return _generator(seed, key, stream, record)


def text_digest(text: str) -> str:
    """BLAKE2b-128 of a stored sentence: its record in the "record" stream."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def defence_at(entry: Entry, encoder: str = "", encoder_plugin: str = "") -> str:
    """The defence at its level on an encoder's vectors, as errors name it: "defence 'gaussian'
    at scale 0.5 on the vectors of encoder 'avg' (plugin 'harness-encoders')"."""
    option = getattr(entry.info.options, "LEVEL", "")
    level = getattr(entry.settings, option, None) if option else None
    shown = f"{level:g}" if isinstance(level, float) else str(level)
    found = f"defence {entry.name!r}" + (f" at {option} {shown}" if option else "")
    if encoder:
        found += f" on the vectors of encoder {encoder!r}"
        found += f" (plugin {encoder_plugin!r})" if encoder_plugin else ""
    return found


def defended_block(defence: Defence, vectors: np.ndarray, rng: np.random.Generator,
                   entry: Entry, *, encoder: str = "", encoder_plugin: str = "") -> np.ndarray:
    """`defence.transform` of one block under one generator, checked (shape, dtype, finite);
    an error names the defence's plugin, the defence at its level and the encoder whose vectors
    it defends."""
    width = defence.output_dim(vectors.shape[1])
    what = defence_at(entry, encoder, encoder_plugin)
    with plugin_call(entry.plugin, f"{what}: transform"):
        out = defence.transform(np.asarray(vectors, dtype=np.float32), rng)
    return check_vectors(out, len(vectors), width, entry.plugin, what=f"{what}: transform",
                         unit="block")


DETERMINISTIC = _generator(0, "deterministic", "record", 0)
"""What a deterministic defence's `transform` is handed: its output does not follow it."""


def defended_records(defence: Defence, vectors: np.ndarray,
                     rngs: Sequence[np.random.Generator] | None, entry: Entry, *,
                     encoder: str = "", encoder_plugin: str = "") -> np.ndarray:
    """The defended `vectors`, row i under `rngs[i]`, its record's generator: a randomised
    defence is handed one row at a time, so a row's noise is its record's alone; a
    deterministic one (`rngs` None) the rows at once."""
    if rngs is None:
        return defended_block(defence, vectors, DETERMINISTIC, entry, encoder=encoder,
                              encoder_plugin=encoder_plugin)
    out = np.empty((len(vectors), defence.output_dim(vectors.shape[1])), dtype=np.float32)
    for row, rng in enumerate(rngs):
        out[row] = defended_block(defence, vectors[row:row + 1], rng, entry, encoder=encoder,
                                  encoder_plugin=encoder_plugin)[0]
    return out


def randomised(defence: Defence, vectors: np.ndarray, entry: Entry, *, encoder: str = "",
               encoder_plugin: str = "") -> bool:
    """Whether `defence` (fitted) draws noise: its transforms of the first rows of `vectors`
    under two unrelated generators differ."""
    rows = np.asarray(vectors[:64], dtype=np.float32)
    first, second = (defended_block(defence, rows, _generator(0, "probe", "record", n), entry,
                                    encoder=encoder, encoder_plugin=encoder_plugin)
                     for n in (0, 1))
    return not np.array_equal(first, second)


def redraws(defence: Defence, source: np.ndarray, seed: int, key: str, entry: Entry, *,
            encoder: str = "", encoder_plugin: str = "") -> Callable[[int], np.ndarray]:
    """`redraw(draw)`: every row of `source` (the clean training vectors) under the fitted
    randomised `defence` with noise of its own (stream "redraw", each row's generator seeded
    by the draw and the row): what an adaptive attacker who may query the store trains on
    afresh each epoch, so that it learns the noise's distribution rather than one draw."""
    width = defence.output_dim(source.shape[1])

    def redraw(draw: int) -> np.ndarray:
        out = np.empty((len(source), width), dtype=np.float32)
        for start in range(0, len(source), BLOCK):
            block = np.asarray(source[start:start + BLOCK], dtype=np.float32)
            rngs = [record_rng(seed, key, "redraw", f"{draw}:{start + row}")
                    for row in range(len(block))]
            out[start:start + len(block)] = defended_records(
                defence, block, rngs, entry, encoder=encoder, encoder_plugin=encoder_plugin)
        return out

    return redraw


@dataclass
class DefendedEncoder:
    """An encoder followed by a fitted defence, with the defence's `seed` and `key`
    (`noise_key`; default: the defence and the encoder's name). `encode` stores sentences
    (what downstream tasks, encoder-aware metrics and the canaries call): each sentence's
    noise is its record's, keyed by its text. `query` is an attacker's access: fresh noise."""

    inner: Any
    defence: Defence
    entry: Entry
    seed: int = field(repr=False)  # the defence's secret
    encoder: str = ""  # the encoder's name and plugin, for errors
    encoder_plugin: str = ""
    key: str = ""
    noisy: bool = True  # whether the defence is randomised (else no generator is drawn)

    def __post_init__(self) -> None:
        if not self.key:
            self.key = noise_key(self.entry, {"name": self.encoder, "options": None})

    @property
    def dim(self) -> int:
        return self.defence.output_dim(self.inner.dim)

    def fingerprint(self) -> str:
        """The encoder's fingerprint, the defence's name and options (its level), the digest
        of its seed and how its noise is keyed (`VERSION`)."""
        return (f"{self.inner.fingerprint()}+{json.dumps(self.entry.identity(), sort_keys=True)}"
                f"+{secret_digest(self.seed)}+noise{VERSION}")

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """The stored vectors of `sentences`: each one's noise keyed by its text alone."""
        return self._defended(sentences, batch_size, [
            record_rng(self.seed, self.key, "record", text_digest(s)) for s in sentences])

    def query(self, sentences: Sequence[str], call: str, batch_size: int = 256) -> np.ndarray:
        """`sentences` through the encoder and the defence as an attacker's query `call` (a
        name unique to the caller's call) gets them: noise drawn afresh for each call, never a
        stored record's. The call's rows are one block under the call's generator (a defence
        draws each row's noise independently: `harness.testing.check_defence`), so a query's
        noise costs one transform, however many rows it holds."""
        vectors = np.asarray(self.inner.encode(list(sentences), batch_size=batch_size),
                             dtype=np.float32)
        if not self.noisy:
            return defended_records(self.defence, vectors, None, self.entry,
                                    encoder=self.encoder, encoder_plugin=self.encoder_plugin)
        return defended_block(self.defence, vectors,
                              record_rng(self.seed, self.key, "query", call), self.entry,
                              encoder=self.encoder, encoder_plugin=self.encoder_plugin)

    def _defended(self, sentences: Sequence[str], batch_size: int,
                  rngs: list[np.random.Generator]) -> np.ndarray:
        vectors = np.asarray(self.inner.encode(list(sentences), batch_size=batch_size),
                             dtype=np.float32)
        return defended_records(self.defence, vectors, rngs if self.noisy else None,
                                self.entry, encoder=self.encoder,
                                encoder_plugin=self.encoder_plugin)


@dataclass(frozen=True)
class LevelSummary:
    """What a defence at one level says of itself: `describes` (`describe()`) and `budget`
    (`budget(dim)` of a defence with a privacy guarantee, else None)."""

    describes: str
    budget: dict[str, float] | None = None


def budget_of(defence: Defence, dim: int, entry: Entry, what: str) -> dict[str, float] | None:
    """The defence's `budget(dim)` (`harness.protocols.BudgetedDefence`), checked finite; an
    error names the defence's plugin and `what` (the defence at its level)."""
    with plugin_call(entry.plugin, f"{what}: budget"):
        found = defence_budget(defence, dim)
    if found is not None and not all(math.isfinite(value) for value in found.values()):
        raise PluginError(entry.plugin, f"{what}: budget({dim}) returned a non-finite value "
                                        f"({found})")
    return found


def defend_encoded(ctx: RunContext, encoded: Encoded, entry: DefenceEntry
                   ) -> tuple[Encoded, LevelSummary]:
    """`encoded` under the defence `entry` (a resolved defence at one level): the defended
    vectors of each split from the cache, computed where it lacks them, and what the defence
    at this level does (`describe()`) and guarantees (`budget(dim)`)."""
    started = time.perf_counter()
    defence = ctx.build(entry, f"for encoder {encoded.encoder!r}")
    if not isinstance(defence, Defence):
        raise PluginError(entry.plugin, f"defence {entry.name!r} lacks fit, transform, "
                                        "output_dim or describe (harness.protocols.Defence)")
    with plugin_call(entry.plugin, f"{defence_at(entry, encoded.encoder, encoded.plugin)}: fit"):
        defence.fit(np.asarray(encoded.vectors("train"), dtype=np.float32))
    width = defence.output_dim(encoded.dim)
    seed = entry.noise_seed(ctx.spec.seed)
    key = noise_key(entry, encoder_key(encoded))
    clean = encoded.vectors("train")
    noisy = randomised(defence, clean, entry, encoder=encoded.encoder,
                       encoder_plugin=encoded.plugin)
    identity = {**encoded.identity, "defence": entry.identity(),
                "defence_seed": secret_digest(seed)}
    keys, directories = {}, {}
    for split in ("train", "test"):
        source = encoded.vectors(split)
        parts = {"version": VERSION, "encoded": encoded.keys[split],
                 "fitted_on": encoded.keys["train"], "defence": entry.identity(),
                 "seed": secret_digest(seed), "split": split}

        def build(directory: Path, split: str = split, source: np.ndarray = source
                  ) -> dict[str, Any]:
            def transform(rows: Sequence[int], start: int) -> np.ndarray:
                block = np.asarray(source[start:start + len(rows)], dtype=np.float32)
                rngs = ([record_rng(seed, key, split, start + row) for row in range(len(rows))]
                        if noisy else None)
                return defended_records(defence, block, rngs, entry,
                                        encoder=encoded.encoder, encoder_plugin=encoded.plugin)

            write_vectors(directory / f"{split}.npy", range(len(source)), transform,
                          with_start=True, dim=width, plugin=entry.plugin, batch_size=BLOCK,
                          label=f"defend {encoded.encoder} {split} ({entry.name})")
            return {"dim": width, "sentences": len(source), "describes": defence.describe()}

        directories[split] = ctx.cache.produce("defend", parts, build,
                                               label=f"{encoded.encoder} {split} {entry.name}")
        keys[split] = directories[split].name
    ctx.add_time("defend", time.perf_counter() - started)
    model = (DefendedEncoder(encoded.model, defence, entry, seed, encoder=encoded.encoder,
                             encoder_plugin=encoded.plugin, key=key, noisy=noisy)
             if encoded.model is not None else None)
    summary = LevelSummary(defence.describe(), budget_of(
        defence, encoded.dim, entry, defence_at(entry, encoded.encoder, encoded.plugin)))
    redraw = (redraws(defence, clean, seed, key, entry, encoder=encoded.encoder,
                      encoder_plugin=encoded.plugin) if noisy else None)
    return replace(encoded, keys=keys, dim=width, directories=directories, identity=identity,
                   model=model, redraw=redraw), summary
