"""Stage 5: train one decoder on (sentence vector -> sentence) for one encoder (resumable)."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, PluginError
from harness.protocols import ConditionalLanguageModel, DecoderOptions
from harness.results.model import TrainSummary
from harness.spec import Component
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.encode import Encoded
from harness.stages.vocab import Vocab
from harness.training.options import keyed_options
from harness.util.cache import read_meta

VERSION = 3


@dataclass(frozen=True)
class TrainedDecoder:
    """A decoder's trained weights for one encoder."""

    encoder: str
    decoder: str
    key: str
    directory: Path
    summary: TrainSummary
    seed: int
    sentences: int | None = None
    """Trained on the first that many training sentences (a `curve` point), or on all."""


def build_decoder(ctx: RunContext, component: Component, encoded: Encoded, vocab: Vocab, *,
                  seed: int | None = None) -> Any:
    """Return a freshly initialised decoder conditioned on `encoded`'s vector dimension, its
    weights drawn with `seed` (default: the spec's)."""
    import torch

    torch.manual_seed(ctx.spec.seed if seed is None else seed)
    model = ctx.build(component, f"for encoder {encoded.encoder!r} (dim {encoded.dim})",
                      vocab=vocab.vocab, input_dim=encoded.dim)
    if not isinstance(model, ConditionalLanguageModel) or not isinstance(model, torch.nn.Module):
        raise PluginError(component.plugin, f"decoder {component.name!r} must be a "
                                            "torch.nn.Module with forward/initial_state/step/"
                                            "reorder_state")
    return model.to(ctx.device)


def decoder_parts(component: Component, encoded: Encoded, vocab: Vocab, *, seed: int,
                  sentences: int | None = None) -> dict[str, Any]:
    """The cache key's parts of decoder `component` trained with `seed` on `encoded`'s training
    vectors (the first `sentences` of them, for a `curve` point) over `vocab`: what
    `train_decoder_for` keys its artifact on, known before anything is trained."""
    decoder = component.identity()
    # How often training checkpoints and logs does not change the weights (the trainer resumes
    # across a change of either), so a kill and a rerun with other values keeps the progress;
    # `workers: 1` is left out too, so decoders cached before that option existed stay valid.
    decoder["options"] = keyed_options(decoder["options"])
    return {"version": VERSION, "decoder": decoder,
            "encoded": encoded.keys["train"], "vocab": vocab.key, "seed": seed,
            **({"sentences": sentences} if sentences is not None else {})}


def train_decoder_for(ctx: RunContext, component: Component, encoded: Encoded, corpus: Corpus,
                      vocab: Vocab, *, seed: int | None = None,
                      sentences: int | None = None) -> TrainedDecoder:
    """Return the decoder trained with `seed` (default: the spec's; it draws the initial
    weights, the validation split and the batch order), training (or resuming) what the cache
    lacks; with `sentences`, on the first that many training sentences only (a point of the
    spec's `curve`)."""
    from harness.training.token_ids import TokenIds
    from harness.training.trainer import save_decoder, train_decoder

    started = time.perf_counter()
    seed = ctx.spec.seed if seed is None else seed
    settings = component.settings
    if not isinstance(settings, DecoderOptions):
        raise PluginError(component.plugin, f"options of decoder {component.name!r} must "
                                            "subclass harness.protocols.DecoderOptions")
    parts = decoder_parts(component, encoded, vocab, seed=seed, sentences=sentences)
    suffix = (f" (seed {seed})" if component.seeds > 1 else "") + (
        f" ({sentences} sentences)" if sentences is not None else "")
    label = f"{encoded.encoder} -> {component.name}{suffix}"
    vectors, train = encoded.vectors("train"), corpus.train
    if sentences is not None:
        vectors, train = vectors[:sentences], train[:sentences]
    # Under a randomised defence the attacker trains on a fresh draw of the noise every epoch.
    redraw = encoded.redraw if sentences is None else None
    if redraw is not None:
        parts["draws"] = "fresh every epoch/1"  # bump when `redraws` draws otherwise
        if settings.workers > 1:
            raise HarnessError(f"decoders: {component.name!r} attacks {encoded.encoder!r}'s "
                               "defended vectors with fresh noise every epoch, which trains "
                               "in one process; set its workers: 1")

    def build(directory: Path) -> dict[str, Any]:
        model = build_decoder(ctx, component, encoded, vocab, seed=seed)
        # Compact ids (int32 values + offsets), encoded a chunk at a time: as lists of lists,
        # the paper's 1.4M sentences would take about 1 GB of Python objects.
        summary = train_decoder(
            model, vocab.vocab, vectors, TokenIds.encode(vocab.vocab.encode, train), settings,
            seed=seed, device=ctx.device,
            checkpoint_dir=directory / "checkpoints", log_path=directory / "train.jsonl",
            progress=True,
            label=f"decoder {component.name!r} for encoder {encoded.encoder!r}{suffix}",
            redraw=redraw)
        save_decoder(model, directory, {"encoder": encoded.encoder, "decoder": component.name})
        return {"epochs": summary.epochs, "steps": summary.steps, "val_loss": summary.val_loss,
                "train_loss": summary.train_loss, "tokens_per_s": summary.tokens_per_s,
                "best_epoch": summary.best_epoch, "stopped_early": summary.stopped_early,
                "patience": settings.patience,
                "curve": _curve(directory / "train.jsonl")}

    directory = ctx.cache.produce("train", parts, build, label=label)
    # Checkpoints (~1 GB each at the paper's size) go once the artifact is committed: a kill
    # before that resumes from the last one instead of training again.
    shutil.rmtree(directory / "checkpoints", ignore_errors=True)
    ctx.add_time("train", time.perf_counter() - started)
    return TrainedDecoder(encoder=encoded.encoder, decoder=component.name, key=directory.name,
                          directory=directory, seed=seed, sentences=sentences,
                          summary=TrainSummary.model_validate(read_meta(directory)["summary"]))


def _curve(log_path: Path) -> list[dict[str, Any]]:
    """The per-epoch losses from the training log, for the report's training curves."""
    curve = []
    if log_path.exists():
        for line in log_path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("event", "epoch") == "epoch" and "epoch" in record:
                curve.append({key: record.get(key) for key in ("epoch", "train_loss", "val_loss")})
    return curve
