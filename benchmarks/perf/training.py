"""Side-by-side training benchmark: tokens/s of the core trainer vs a paper-style loop.

Both train the same `mos-lstm` configuration from the same initial weights on the same batches
(sentence vectors: the mean of each sentence's subword vectors):

- ours: `harness.training.trainer.train_decoder` (padded length-bucketed batches, batch-first
  LSTMs, mixture of softmaxes in log space, bf16 autocast on CUDA);
- paper-style: the released Vec2Sent forward pass (`released.PaperStyleMoS`, same directory):
  per-sentence input tensors, each concatenated with its context vector, packed into a
  `PackedSequence`, run through one `nn.LSTM` per layer (weight drop as in the MoS code), the
  mixture computed in probability space and `log(p + 1e-8)`, in fp32.

Prints one JSON object with the tokens/s of each and their ratio.

With `--profile FILE`, a further short run of ours is traced with the torch profiler: FILE gets
the operators by GPU time, and the report the time the GPU was busy against the wall-clock time,
kernel launches and host synchronisations (where the steps lose time: kernels, launch overhead
or waits for the host).

    python benchmarks/perf/training.py                    # synthetic corpus, CPU
    python benchmarks/perf/training.py --device cuda --paper --batch-size 128 --steps 200
"""

from __future__ import annotations

import argparse
import copy
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from harness.protocols import BuildContext, TrainingOptions
from harness.training.batches import bucketed_batches
from harness.training.trainer import train_decoder
from harness_plugins.decoders.lstm import build_mos_lstm

# The data preparation, model arguments and report helpers are shared with the generation
# benchmark (same directory).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from decoder_common import (  # noqa: E402
    add_common_arguments,
    benchmark_data,
    decoder_options,
    emit,
    peak_memory,
    profiled,
    report_header,
)
from released import PaperStyleMoS  # noqa: E402

ARCHITECTURE = {"layers", "hidden", "last_hidden", "experts", "dropout", "dropout_input",
                "dropout_layers", "dropout_embedding", "dropout_latent", "weight_drop"}


def paper_style_tokens_per_s(module: PaperStyleMoS, batches: list[np.ndarray], data: Any,
                             *, lr: float, clip: float, warmup: int, device: str) -> float:
    """Train on `batches` (after `warmup` untimed ones) and return tokens per second."""
    module.to(device).train()
    params = [p for p in module.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=lr)
    bos, eos = data.vocab.bos_id, data.vocab.eos_id
    tokens, started = 0, 0.0
    for n, index in enumerate(batches):
        if n == warmup:
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            tokens, started = 0, time.perf_counter()
        sentences = [data.train_ids[i] for i in index]
        inputs = [torch.tensor([bos, *s], device=device) for s in sentences]
        labels = nn.utils.rnn.pad_sequence(
            [torch.tensor([*s, eos], device=device) for s in sentences], padding_value=-100)
        contexts = torch.from_numpy(data.train_vectors[index]).to(device)
        log_probs, _ = module(inputs, list(contexts.unbind(0)))
        loss = F.nll_loss(log_probs.flatten(0, 1), labels.flatten(), ignore_index=-100)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if clip > 0:
            nn.utils.clip_grad_norm_(params, clip)
        optimizer.step()
        tokens += sum(len(s) + 1 for s in sentences)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return tokens / (time.perf_counter() - started)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_arguments(parser)
    parser.add_argument("--steps", type=int, default=30, help="timed optimiser steps of each")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps before timing")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--clip", type=float, default=0.25)
    parser.add_argument("--profile", type=Path, help="profile 20 more steps of ours; write the "
                        "operator table here")
    args = parser.parse_args(argv)
    with benchmark_data(args) as (workdir, data):
        torch.manual_seed(args.seed)
        model = build_mos_lstm(decoder_options(args), BuildContext(
            vocab=data.vocab, input_dim=data.train_vectors.shape[1]))
        needed = (args.steps + args.warmup) * args.batch_size
        if len(data.train_ids) < needed:
            sys.exit(f"{len(data.train_ids)} training sentences; --steps/--warmup/--batch-size "
                     f"need {needed}")
        subset = np.arange(needed)
        lengths = np.array([len(data.train_ids[i]) for i in subset])
        # Both loops see these batches; the trainer's order for this seed and epoch 1.
        batches = bucketed_batches(subset, lengths, args.batch_size, args.seed, epoch=1)

        paper_model = PaperStyleMoS(model)
        profile_model = copy.deepcopy(model) if args.profile else None
        paper, paper_gib = peak_memory(args.device, lambda: paper_style_tokens_per_s(
            paper_model, batches, data, lr=args.lr, clip=args.clip, warmup=args.warmup,
            device=args.device))
        paper_model.to("cpu")  # off the GPU: the next peak is ours alone

        warm = copy.deepcopy(model)
        options = TrainingOptions(epochs=1, batch_size=args.batch_size, lr=args.lr,
                                  clip=args.clip, val_fraction=0.0, checkpoint_every=0,
                                  log_every=0)
        common = {"seed": args.seed, "device": args.device, "progress": False}
        warm_n = args.warmup * args.batch_size
        for stale in ("warm", "ours"):  # a reused --workdir must not resume old runs
            shutil.rmtree(workdir / stale, ignore_errors=True)
        train_decoder(warm, data.vocab, data.train_vectors[:warm_n], data.train_ids[:warm_n],
                      options, checkpoint_dir=workdir / "warm",
                      log_path=workdir / "warm" / "log.jsonl", **common)
        del warm
        summary, ours_gib = peak_memory(args.device, lambda: train_decoder(
            model, data.vocab, data.train_vectors[:needed], data.train_ids[:needed], options,
            checkpoint_dir=workdir / "ours", log_path=workdir / "ours" / "log.jsonl", **common))
        profile = None
        if profile_model is not None:
            shutil.rmtree(workdir / "profile", ignore_errors=True)
            few = 20 * args.batch_size
            profile = profiled(lambda: train_decoder(
                profile_model, data.vocab, data.train_vectors[:few], data.train_ids[:few],
                options, checkpoint_dir=workdir / "profile",
                log_path=workdir / "profile" / "log.jsonl", **common), args.device, args.profile)
    report = {
        **report_header("training", args, model, data, ARCHITECTURE),
        "batch_size": args.batch_size, "steps": len(batches) - args.warmup,
        "ours": {"tokens_per_s": summary.tokens_per_s, "peak_gib": ours_gib,
                 "precision": "bf16 autocast" if args.device.startswith("cuda") else "fp32"},
        "paper_style": {"tokens_per_s": paper, "peak_gib": paper_gib, "precision": "fp32"},
        "ratio": summary.tokens_per_s / paper,
        "mixture": "eager" if args.eager_mixture else "fused on CUDA",
        "profile_of_ours": profile,
    }
    emit(report, args.out)
    return report


if __name__ == "__main__":
    main()
