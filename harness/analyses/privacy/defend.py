"""The privacy analysis's defences applied: an encoder's vectors under a defence
(`harness.protocols.Defence`), one artifact per split, as a store of embeddings would keep
them.

The defence is fitted on the training split's vectors, then maps each split in blocks of
`BLOCK` rows; a randomised defence draws a block's noise from a generator seeded by the
defence's secret seed (`DefenceEntry.seed`, default the spec's), the defence at its level, the
encoder, the split and the block's first row (`block_rng`): the defended vectors are the same
in every run and after a resume, and the noise of two levels, two defences or two encoders is
independent. The result is an `Encoded` like the encoder's own: decoders train on it (the
adaptive attacker), generation and scoring read it, and downstream tasks encode their text
through the encoder and then the defence (`DefendedEncoder`).
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

VERSION = 2
BLOCK = 4096
"""Rows per call of `transform`: the unit its noise is seeded by, so it never changes."""

STREAMS = ("train", "test", "other", "redraw")
"""The generator streams: the corpus' splits, every other sentence a run encodes, and the fresh
draws of the training split an adaptive attacker trains on (`redraws`)."""


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


def block_rng(seed: int, key: str, stream: str, start: int) -> np.random.Generator:
    """The generator of the block of `stream` whose first row is `start`, for the defence
    seeded by `seed` at the level and on the encoder `key` names (`noise_key`)."""
    return _generator(seed, key, stream, start)


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
    """`defence.transform` of one block, checked (shape, dtype, finite); an error names the
    defence's plugin, the defence at its level and the encoder whose vectors it defends."""
    width = defence.output_dim(vectors.shape[1])
    what = defence_at(entry, encoder, encoder_plugin)
    with plugin_call(entry.plugin, f"{what}: transform"):
        out = defence.transform(np.asarray(vectors, dtype=np.float32), rng)
    return check_vectors(out, len(vectors), width, entry.plugin, what=f"{what}: transform",
                         unit="block")


def randomised(defence: Defence, vectors: np.ndarray, entry: Entry) -> bool:
    """Whether `defence` (fitted) draws noise: its transforms of the first rows of `vectors`
    under two unrelated generators differ."""
    rows = np.asarray(vectors[:64], dtype=np.float32)
    first, second = (defended_block(defence, rows, _generator(0, "probe", "other", n), entry)
                     for n in (0, 1))
    return not np.array_equal(first, second)


def redraws(defence: Defence, source: np.ndarray, seed: int, key: str, entry: Entry, *,
            encoder: str = "", encoder_plugin: str = "") -> Callable[[int], np.ndarray]:
    """`redraw(draw)`: every row of `source` (the clean training vectors) under the fitted
    randomised `defence` with noise of its own (stream "redraw", seeded by the draw and the
    block like `block_rng`): what an adaptive attacker who may query the store trains on
    afresh each epoch, so that it learns the noise's distribution rather than one draw."""
    width = defence.output_dim(source.shape[1])

    def redraw(draw: int) -> np.ndarray:
        out = np.empty((len(source), width), dtype=np.float32)
        for start in range(0, len(source), BLOCK):
            block = source[start:start + BLOCK]
            out[start:start + len(block)] = defended_block(
                defence, block, _generator(seed, key, "redraw", f"{draw}:{start}"), entry,
                encoder=encoder, encoder_plugin=encoder_plugin)
        return out

    return redraw


def text_rng(seed: int, key: str, sentences: Sequence[str]) -> np.random.Generator:
    """The generator of a call that encodes `sentences` outside the corpus (downstream tasks,
    canaries): seeded like `block_rng` with the sentences themselves (BLAKE2b) for the rows, so
    the same call gets the same noise in every run, whatever was cached and in whatever order
    the calls come."""
    text = json.dumps(list(sentences), ensure_ascii=False)
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
    return _generator(seed, key, "other", digest)


@dataclass
class DefendedEncoder:
    """An encoder followed by a fitted defence: what downstream tasks and encoder-aware
    metrics call to encode other sentences, each call's noise from `text_rng` with the
    defence's `seed` and `key` (`noise_key`; default: the defence and the encoder's name)."""

    inner: Any
    defence: Defence
    entry: Entry
    seed: int = field(repr=False)  # the defence's secret
    encoder: str = ""  # the encoder's name and plugin, for errors
    encoder_plugin: str = ""
    key: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            self.key = noise_key(self.entry, {"name": self.encoder, "options": None})

    @property
    def dim(self) -> int:
        return self.defence.output_dim(self.inner.dim)

    def fingerprint(self) -> str:
        """The encoder's fingerprint, the defence's name and options (its level) and the
        digest of its seed."""
        return (f"{self.inner.fingerprint()}+{json.dumps(self.entry.identity(), sort_keys=True)}"
                f"+{secret_digest(self.seed)}")

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        vectors = self.inner.encode(list(sentences), batch_size=batch_size)
        return defended_block(self.defence, vectors, text_rng(self.seed, self.key, sentences),
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
                block = source[start:start + len(rows)]
                return defended_block(defence, block, block_rng(seed, key, split, start),
                                      entry, encoder=encoded.encoder,
                                      encoder_plugin=encoded.plugin)

            write_vectors(directory / f"{split}.npy", range(len(source)), transform,
                          with_start=True, dim=width, plugin=entry.plugin, batch_size=BLOCK,
                          label=f"defend {encoded.encoder} {split} ({entry.name})")
            return {"dim": width, "sentences": len(source), "describes": defence.describe()}

        directories[split] = ctx.cache.produce("defend", parts, build,
                                               label=f"{encoded.encoder} {split} {entry.name}")
        keys[split] = directories[split].name
    ctx.add_time("defend", time.perf_counter() - started)
    model = (DefendedEncoder(encoded.model, defence, entry, seed, encoder=encoded.encoder,
                             encoder_plugin=encoded.plugin, key=key)
             if encoded.model is not None else None)
    summary = LevelSummary(defence.describe(), budget_of(
        defence, encoded.dim, entry, defence_at(entry, encoded.encoder, encoded.plugin)))
    clean = encoded.vectors("train")
    redraw = (redraws(defence, clean, seed, key, entry, encoder=encoded.encoder,
                      encoder_plugin=encoded.plugin)
              if randomised(defence, clean, entry) else None)
    return replace(encoded, keys=keys, dim=width, directories=directories, identity=identity,
                   model=model, redraw=redraw), summary
