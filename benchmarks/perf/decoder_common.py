"""What the decoder benchmarks (`generation.py`, `training.py`) share: their common arguments,
the data they prepare (a subword vocabulary, sentences as ids and their average-vector sentence
vectors), the decoder options the arguments ask for, the report's header, GPU memory peaks, the
torch profiler's summary and the printing of the JSON report."""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from harness.synthetic import generate_sentences
from harness.text.subwords import SubwordVocab, train_subword_vocab
from harness_plugins.decoders import mixture as mixture_module
from harness_plugins.decoders.options import PAPER_MOS_LSTM, MosLstmOptions

PLAIN_TRAINING = {"dropout": 0.0, "dropout_input": 0.0, "dropout_layers": 0.0,
                  "dropout_embedding": 0.0, "dropout_latent": 0.0, "weight_drop": 0.0,
                  "standardise": True}
"""`--plain-training`: the paper's architecture (and so the cost of a search step) trained
without its regularisers and on standardised vectors, so that a few minutes of training on a
small corpus give a decoder that regenerates sentences of their real length. The paper's
regularised decoder, trained that briefly, ends most hypotheses after a subword or two, and a
search over one-subword outputs measures little but overheads."""


@dataclass(frozen=True)
class Data:
    """Subword vocabulary, training and test sentences as ids, and their sentence vectors."""

    vocab: SubwordVocab
    train_ids: list[list[int]]
    train_vectors: np.ndarray
    test_ids: list[list[int]]
    test_vectors: np.ndarray


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments both benchmarks share: data, model size, device."""
    parser.add_argument("--corpus", type=Path, help="text file, one sentence per line (default: "
                        "a synthetic corpus from harness.synthetic)")
    parser.add_argument("--train-sentences", type=int, default=20_000)
    parser.add_argument("--sentences", type=int, default=1_000, help="test sentences")
    parser.add_argument("--max-tokens", type=int, default=15,
                        help="keep corpus sentences with fewer whitespace tokens (paper: 15)")
    parser.add_argument("--workdir", type=Path, help="keep (and reuse) vocabulary and model here")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bpe-size", type=int, default=1_000)
    parser.add_argument("--dim", type=int, default=100, help="subword vector dimension")
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--last-hidden", type=int)
    parser.add_argument("--experts", type=int, default=1)
    parser.add_argument("--paper", action="store_true",
                        help="the paper's decoder: 3 layers of 1024 (last 650), 5 experts, "
                             "its dropouts and weight drop")
    parser.add_argument("--batch-size", type=int, default=64, help="training batch size")
    parser.add_argument("--vocab-size", type=int, help="pad the trained vocabulary with random "
                        "vectors to this many subwords, which no sentence uses: the output "
                        "layer's cost grows with it (a 50k vocabulary from a small corpus)")
    parser.add_argument("--out", type=Path, help="also write the JSON report to this file")
    parser.add_argument("--eager-mixture", action="store_true", help="the mixture of softmaxes "
                        "by eager operations on CUDA too, not fused (the 'before' figure)")


def decoder_options(args: argparse.Namespace) -> MosLstmOptions:
    """The decoder architecture the arguments ask for (the quickstart's, or the paper's)."""
    if args.paper:
        if getattr(args, "plain_training", False):
            return MosLstmOptions(**{**PAPER_MOS_LSTM, **PLAIN_TRAINING})
        return MosLstmOptions(**PAPER_MOS_LSTM)
    return MosLstmOptions(layers=args.layers, hidden=args.hidden, last_hidden=args.last_hidden,
                          experts=args.experts, freeze_embeddings=False, standardise=True)


def read_corpus(path: Path, max_tokens: int) -> list[str]:
    """Lower-cased lines of `path` with fewer than `max_tokens` whitespace tokens."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip().lower() for line in lines
            if line.strip() and len(line.split()) < max_tokens]


def sentences(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """(train, test) sentences: from --corpus (test = its last --sentences lines after a seeded
    shuffle) or generated."""
    if args.corpus is None:
        train = generate_sentences("quickstart", args.train_sentences, seed=args.seed)
        test = generate_sentences("quickstart", args.sentences, seed=args.seed + 1)
        return [s.lower() for s in train], [s.lower() for s in test]
    lines = read_corpus(args.corpus, args.max_tokens)
    random.Random(args.seed).shuffle(lines)
    if len(lines) <= args.sentences:
        sys.exit(f"{args.corpus}: {len(lines)} usable lines, need more than {args.sentences}")
    test = lines[-args.sentences:]
    return lines[:-args.sentences][:args.train_sentences], test


def average_vectors(vocab: SubwordVocab, ids: list[list[int]]) -> np.ndarray:
    """Sentence vectors: the mean of each sentence's subword vectors (an `avg`-like encoder)."""
    return np.stack([vocab.vectors[s].mean(axis=0) if s else np.zeros(vocab.dim, np.float32)
                     for s in ids]).astype(np.float32)


def prepare_data(args: argparse.Namespace, workdir: Path) -> Data:
    """Return the benchmark's data, training the vocabulary unless `workdir` has one."""
    train, test = sentences(args)
    vocab_dir = workdir / "vocab"
    if (vocab_dir / "vectors.npy").exists():
        vocab = SubwordVocab.load(vocab_dir)
    else:
        vocab = train_subword_vocab(train, vocab_dir, bpe_size=args.bpe_size, dim=args.dim,
                                    epochs=5)
    train_ids, test_ids = vocab.encode(train), vocab.encode(test)
    if args.vocab_size and args.vocab_size > len(vocab):
        # Rows like the trained ones in scale, appended after every id the segmenter emits.
        rng = np.random.default_rng(args.seed)
        extra = rng.normal(0.0, float(vocab.vectors.std()), (args.vocab_size - len(vocab),
                                                             vocab.dim))
        vocab.vectors = np.concatenate([vocab.vectors, extra.astype(np.float32)])
    return Data(vocab, train_ids, average_vectors(vocab, train_ids), test_ids,
                average_vectors(vocab, test_ids))


@contextmanager
def benchmark_data(args: argparse.Namespace) -> Iterator[tuple[Path, Data]]:
    """Apply --threads and yield the working directory (--workdir, else a temporary one) and the
    benchmark's data."""
    if args.threads:
        torch.set_num_threads(args.threads)
    mixture_module.FUSED.enabled = not args.eager_mixture
    with tempfile.TemporaryDirectory() as scratch:
        workdir = args.workdir or Path(scratch)
        yield workdir, prepare_data(args, workdir)


def report_header(benchmark: str, args: argparse.Namespace, model: torch.nn.Module, data: Data,
                  model_fields: set[str]) -> dict[str, Any]:
    """What a benchmark report says of its run: date, machine, threads, corpus and model."""
    return {
        "benchmark": benchmark, "date": time.strftime("%Y-%m-%d"),
        "machine": platform.platform(), "device": args.device,
        "threads": torch.get_num_threads(), "torch": torch.__version__,
        "corpus": str(args.corpus or "synthetic:quickstart"),
        "model": {"parameters": sum(p.numel() for p in model.parameters()),
                  "vocab": len(data.vocab), "input_dim": int(data.train_vectors.shape[1]),
                  **decoder_options(args).model_dump(include=model_fields)}}


def peak_memory(device: str, fn: Any) -> tuple[Any, float | None]:
    """Run `fn` and return its result and the GPU memory peak (GiB) it reached on a CUDA
    `device` (None elsewhere)."""
    if not device.startswith("cuda"):
        return fn(), None
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    result = fn()
    torch.cuda.synchronize(device)
    return result, torch.cuda.max_memory_allocated(device) / 2**30


def emit(report: dict[str, Any], out: Path | None) -> None:
    """Print the report as JSON, and write it to `out` too when given."""
    text = json.dumps(report, indent=1)
    print(text)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")


def profiled(run: Any, device: str, table: Path) -> dict[str, Any]:
    """Trace `run()` with the torch profiler; write its operators by GPU time to `table` and
    return where the time went: the GPU's kernel time against the wall clock (the rest is
    launch overhead, host work and waits), launches, host synchronisations."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    if device.startswith("cuda"):
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities) as trace:
        started = time.perf_counter()
        run()
        if device.startswith("cuda"):
            torch.cuda.synchronize(device)
        wall = time.perf_counter() - started
    events = trace.key_averages()
    # Kernel time: the events the GPU itself ran (each kernel once; the operators that launched
    # them carry the same time again, so they are not summed), as the table's own total.
    device_s = sum(e.self_device_time_total for e in trace.events()
                   if e.device_type == DeviceType.CUDA) / 1e6
    table.parent.mkdir(parents=True, exist_ok=True)
    sort = "self_device_time_total" if device.startswith("cuda") else "self_cpu_time_total"
    table.write_text(events.table(sort_by=sort, row_limit=60), encoding="utf-8")

    def calls(*names: str) -> dict[str, Any]:
        return {e.key: {"count": e.count, "host_s": e.cpu_time_total / 1e6}
                for e in events if any(n in e.key for n in names)}

    return {"wall_s": wall, "gpu_busy_s": device_s, "gpu_busy_fraction": device_s / wall,
            "launches": sum(e.count for e in events if "LaunchKernel" in e.key),
            "synchronisations": calls("Synchronize", "cudaMemcpy"), "table": str(table)}
