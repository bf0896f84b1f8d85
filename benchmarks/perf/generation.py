"""Side-by-side generation benchmark: batched beam search vs one sentence at a time.

Trains (or loads from --workdir) a decoder on sentence vectors (the average of each sentence's
subword vectors), then decodes the test sentences with

- ours: `harness.generation.search.beam_search`, all sentences batched;
- baseline: the released Vec2Sent generation, pruned to a true beam:
  `harness.generation.reference.priority_queue_beam_search`, one sentence at a time with a
  priority queue of nodes that each hold their own state slice (maruker/vec2sent
  lstm/beam_search.py), calling the released model's forward pass on the popped nodes
  (`released.ReleasedStepModel`: one-token tensors, packed sequences, one `nn.LSTM` per layer,
  the mixture in probability space) on the same weights, searching for the same hypotheses;
- per_sentence_harness_model: the same one-sentence-at-a-time search calling the harness
  model's own `step`, which isolates what batching sentences gains;
- released (on --released-sentences only): `released_beam_search`, the released algorithm
  itself (best-first queue, probability sums, stops after 5 ended hypotheses) on the released
  forward pass, for its speed and for how often it agrees with beam search.

Prints one JSON object: sentences/s of each, the speed-up, and how many best hypotheses are
identical (mismatches whose scores differ by at most 1e-4 are counted as ties).

    python benchmarks/perf/generation.py                      # synthetic corpus, CPU
    python benchmarks/perf/generation.py --corpus ../shared/data/newstest-en/train.txt
    python benchmarks/perf/generation.py --device cuda --paper --epochs 0   # paper-size model
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np
import torch

from harness.generation.reference import priority_queue_beam_search, released_beam_search
from harness.generation.search import Hypothesis, beam_search
from harness.protocols import BuildContext, TrainingOptions
from harness.training.trainer import load_decoder_state, save_decoder, train_decoder
from harness.util import devices
from harness_plugins.decoders.lstm import build_mos_lstm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from decoder_common import (  # noqa: E402  (same directory)
    Data,
    add_common_arguments,
    benchmark_data,
    decoder_options,
    emit,
    peak_memory,
    profiled,
    report_header,
)
from released import ReleasedStepModel  # noqa: E402  (same directory)

TIE = 1e-4  # best hypotheses whose scores differ by no more than this are ties


def trained_model(args: argparse.Namespace, data: Data, workdir: Path) -> torch.nn.Module:
    """The decoder, loaded from `workdir/model` or trained for --epochs there."""
    torch.manual_seed(args.seed)
    model = build_mos_lstm(decoder_options(args), BuildContext(
        vocab=data.vocab, input_dim=data.train_vectors.shape[1]))
    model_dir = workdir / "model"
    if (model_dir / "model.safetensors").exists():
        load_decoder_state(model, model_dir)
    elif args.epochs > 0:
        train_decoder(model, data.vocab, data.train_vectors, data.train_ids,
                      TrainingOptions(epochs=args.epochs, batch_size=args.batch_size, lr=3e-3,
                                      val_fraction=0.0),
                      seed=args.seed, device=args.device, checkpoint_dir=model_dir / "ckpt",
                      log_path=model_dir / "train.jsonl", progress=True)
        save_decoder(model, model_dir)
    return model.to(args.device).eval()


def agreement(ours: list[Hypothesis], theirs: list[Hypothesis]) -> dict[str, int]:
    """Counts of identical best hypotheses, ties (different, equal scores) and mismatches."""
    identical = sum(a.ids == b.ids for a, b in zip(ours, theirs, strict=True))
    ties = sum(a.ids != b.ids and abs(a.score - b.score) <= TIE
               for a, b in zip(ours, theirs, strict=True))
    return {"identical": identical, "ties": ties,
            "mismatches": len(ours) - identical - ties}


def compared(ours: list[Hypothesis], ours_s: float, theirs: list[Hypothesis],
             theirs_s: float) -> dict[str, Any]:
    """A baseline's time and speed, ours' speed-up over it, and how far their results agree."""
    return {"sentences": len(theirs), "seconds": theirs_s,
            "sentences_per_s": len(theirs) / theirs_s, "speedup_of_ours": theirs_s / ours_s,
            **agreement(ours, theirs)}


def timed(fn: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    result = fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return result, time.perf_counter() - started


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_arguments(parser)
    parser.add_argument("--epochs", type=int, default=3,
                        help="training epochs when no model is stored (0: random weights)")
    parser.add_argument("--beam", type=int, default=10)
    parser.add_argument("--max-len", type=int, default=100,
                        help="most tokens per sentence, eos included (released code: 100)")
    parser.add_argument("--length-penalty", default="none", choices=["none", "mean", "paper"])
    parser.add_argument("--stop-after", type=int, help="stop a sentence after this many ended "
                        "hypotheses (released code: 5; default: when its best is certain)")
    parser.add_argument("--generate-batch", type=int, default=1_000,
                        help="sentences per batch of our search")
    parser.add_argument("--released-sentences", type=int, default=100,
                        help="sentences for the released algorithm (0 = skip)")
    parser.add_argument("--plain-training", action="store_true",
                        help="with --paper: train without dropout or weight drop, vectors "
                             "standardised (see PLAIN_TRAINING)")
    parser.add_argument("--precision", choices=["bf16", "fp32"], default="bf16",
                        help="CUDA search precision: the harness's bf16 autocast, or float32 "
                             "(both sides; for exact agreement)")
    parser.add_argument("--profile", type=Path, help="profile ours on one batch; write the "
                        "operator table here")
    parser.add_argument("--baseline-sentences", type=int,
                        help="decode only the first this many sentences with the one-sentence-"
                             "at-a-time searches (default: all); their rates and agreement are "
                             "over those, ours over all")
    args = parser.parse_args(argv)
    with benchmark_data(args) as (workdir, data):
        model = trained_model(args, data, workdir)  # trained as runs train, whatever --precision
        if args.precision == "fp32":  # the searches' float32 path: no autocast, no TF32
            devices.mixed_precision = lambda device: nullcontext
        search = {"beam": args.beam, "bos_id": data.vocab.bos_id, "eos_id": data.vocab.eos_id,
                  "max_len": args.max_len, "length_penalty": args.length_penalty,
                  "stop_after": args.stop_after}
        vectors = data.test_vectors
        beam_search(model, vectors[:8], batch_size=8, device=args.device, **search)  # warm-up
        (ours, ours_s), ours_gib = peak_memory(args.device, lambda: timed(lambda: beam_search(
            model, vectors, batch_size=args.generate_batch, device=args.device, **search)))
        few = vectors[:args.baseline_sentences]
        # The baselines' rates are over `few`; ours, for their comparison, prorated to them.
        ours_few_s = ours_s * len(few) / len(vectors)
        released_path = ReleasedStepModel(model).to(args.device).eval()
        (baseline, baseline_s), baseline_gib = peak_memory(args.device, lambda: timed(
            lambda: [priority_queue_beam_search(released_path, v, device=args.device, **search)
                     for v in few]))
        lean, lean_s = timed(lambda: [priority_queue_beam_search(
            model, v, device=args.device, **search) for v in few])
        profile = None
        if args.profile:
            batch = vectors[:args.generate_batch]
            profile = profiled(lambda: beam_search(model, batch, batch_size=len(batch),
                                                   device=args.device, **search),
                               args.device, args.profile)
        # Generated tokens: each hypothesis's subwords, and its eos when it ended.
        tokens = sum(len(h.ids) + (len(h.ids) < args.max_len) for h in ours)
        report: dict[str, Any] = {
            **report_header("generation", args, model, data,
                            {"layers", "hidden", "last_hidden", "experts"}),
            "sentences": len(vectors),
            "search": {k: v for k, v in search.items() if not k.endswith("_id")},
            "ours": {"seconds": ours_s, "sentences_per_s": len(vectors) / ours_s,
                     "generated_tokens_per_s": tokens / ours_s, "peak_gib": ours_gib},
            "baseline": {**compared(ours[:len(few)], ours_few_s, baseline, baseline_s),
                         "peak_gib": baseline_gib},
            "per_sentence_harness_model": compared(ours[:len(few)], ours_few_s, lean, lean_s),
            "mean_output_subwords": float(np.mean([len(h.ids) for h in ours])),
            "precision": args.precision if args.device.startswith("cuda") else "fp32",
            "training": "plain" if args.plain_training else "as configured",
            "mixture": "eager" if args.eager_mixture else "fused on CUDA",
            "profile_of_ours": profile,
        }
        if args.released_sentences:
            subset = vectors[:args.released_sentences]
            released, released_s = timed(lambda: [released_beam_search(
                released_path, v, beam=args.beam, bos_id=data.vocab.bos_id,
                eos_id=data.vocab.eos_id, max_len=args.max_len, device=args.device)
                for v in subset])
            report["released"] = compared(ours[:len(subset)], ours_s * len(subset) / len(vectors),
                                          released, released_s)
    emit(report, args.out)
    return report


if __name__ == "__main__":
    main()
