"""Stage 4b: an encoder's vectors under a defence (`harness.protocols.Defence`), one artifact
per split, as a store of embeddings would keep them.

The defence is fitted on the training split's vectors, then maps each split in blocks of
`BLOCK` rows; a randomised defence draws a block's noise from a generator seeded by the run's
seed, the split and the block's first row (`block_rng`), so the defended vectors are the same
in every run and after a resume. The result is an `Encoded` like the encoder's own: decoders
train on it (the adaptive attacker), generation and scoring read it, and downstream tasks
encode their text through the encoder and then the defence (`DefendedEncoder`).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import PluginError, plugin_call
from harness.protocols import Defence
from harness.spec import Entry
from harness.stages.base import RunContext
from harness.stages.encode import Encoded
from harness.util.vectors import check_vectors, write_vectors

VERSION = 1
BLOCK = 4096
"""Rows per call of `transform`: the unit its noise is seeded by, so it never changes."""

STREAMS = {"train": 0, "test": 1, "other": 2}
"""The generator streams: the corpus' splits, and every other sentence a run encodes."""


def block_rng(seed: int, stream: str, start: int) -> np.random.Generator:
    """The generator of the block of `stream` whose first row is `start`."""
    return np.random.default_rng([seed, STREAMS[stream], start])


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


def text_rng(seed: int, sentences: Sequence[str]) -> np.random.Generator:
    """The generator of a call that encodes `sentences` outside the corpus: seeded by the run's
    seed and the sentences themselves (BLAKE2b), so the same call gets the same noise in every
    run, whatever was cached and in whatever order the calls come."""
    digest = hashlib.blake2b("\n".join(sentences).encode("utf-8"), digest_size=8).digest()
    return np.random.default_rng([seed, STREAMS["other"], int.from_bytes(digest, "little")])


@dataclass
class DefendedEncoder:
    """An encoder followed by a fitted defence: what downstream tasks and encoder-aware
    metrics call to encode other sentences, each call's noise from `text_rng`."""

    inner: Any
    defence: Defence
    entry: Entry
    seed: int
    encoder: str = ""  # the encoder's name and plugin, for errors
    encoder_plugin: str = ""

    @property
    def dim(self) -> int:
        return self.defence.output_dim(self.inner.dim)

    def fingerprint(self) -> str:
        """The encoder's fingerprint and the defence's name and options (its level)."""
        return f"{self.inner.fingerprint()}+{json.dumps(self.entry.identity(), sort_keys=True)}"

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        vectors = self.inner.encode(list(sentences), batch_size=batch_size)
        return defended_block(self.defence, vectors, text_rng(self.seed, sentences), self.entry,
                              encoder=self.encoder, encoder_plugin=self.encoder_plugin)


def defend_encoded(ctx: RunContext, encoded: Encoded, entry: Entry) -> tuple[Encoded, str]:
    """`encoded` under the defence `entry` (a resolved defence at one level): the defended
    vectors of each split from the cache, computed where it lacks them, and what the defence
    at this level does (`describe()`)."""
    started = time.perf_counter()
    defence = ctx.build(entry, f"for encoder {encoded.encoder!r}")
    if not isinstance(defence, Defence):
        raise PluginError(entry.plugin, f"defence {entry.name!r} lacks fit, transform, "
                                        "output_dim or describe (harness.protocols.Defence)")
    with plugin_call(entry.plugin, f"{defence_at(entry, encoded.encoder, encoded.plugin)}: fit"):
        defence.fit(np.asarray(encoded.vectors("train"), dtype=np.float32))
    width = defence.output_dim(encoded.dim)
    identity = {**encoded.identity, "defence": entry.identity(), "defence_seed": ctx.spec.seed}
    keys, directories = {}, {}
    for split in ("train", "test"):
        source = encoded.vectors(split)
        parts = {"version": VERSION, "encoded": encoded.keys[split],
                 "fitted_on": encoded.keys["train"], "defence": entry.identity(),
                 "seed": ctx.spec.seed, "split": split}

        def build(directory: Path, split: str = split, source: np.ndarray = source
                  ) -> dict[str, Any]:
            def transform(rows: Sequence[int], start: int) -> np.ndarray:
                block = source[start:start + len(rows)]
                return defended_block(defence, block, block_rng(ctx.spec.seed, split, start),
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
    model = (DefendedEncoder(encoded.model, defence, entry, ctx.spec.seed,
                             encoder=encoded.encoder, encoder_plugin=encoded.plugin)
             if encoded.model is not None else None)
    return replace(encoded, keys=keys, dim=width, directories=directories, identity=identity,
                   model=model), defence.describe()
