"""Time fit and encode of registered encoders on a corpus; print {encoder: {"fit_s",
"encode_sentences_per_s", "dim", "sentences"}} as JSON.

    OMP_NUM_THREADS=2 python benchmarks/perf/encoders.py \\
        --corpus ../shared/data/newstest-en/train.txt --encoders avg,hier,avg-max-hier,gem

Every encoder is built through the plugin registry, exactly as a run builds it, over a subword
vocabulary trained on the corpus (BPE + fastText, `--bpe-size/--dim/--epochs`) or imported
(`--vocab-model/--vocab-vectors`); the vocabulary comes from the harness cache when it is there
already (`--cache`, default $HARNESS_CACHE or the user cache dir), and its time is not counted.
A trainable encoder fits on the corpus, then encodes it; `fit_s` is null for the others.
Encoder options: `--set gem.k=30 --set hier.window=2` (values parsed as YAML).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from harness.protocols import BuildContext
from harness.registry.loader import load_registry
from harness.spec import Normalise
from harness.stages.base import file_digest
from harness.text.reading import normalise
from harness.text.subwords import SubwordVocab, import_subword_vocab, train_subword_vocab
from harness.util.cache import Cache, default_root


def read_corpus(path: Path, limit: int | None, options: Normalise) -> list[str]:
    """Return the corpus' non-empty lines, normalised, at most `limit` of them."""
    sentences = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                sentences.append(normalise(line.strip(), options))
                if limit is not None and len(sentences) >= limit:
                    break
    return sentences


def vocabulary(args: argparse.Namespace, sentences: list[str], corpus_key: str) -> SubwordVocab:
    """Return the vocabulary for the benchmark, from the cache when it was built before."""
    cache = Cache(root=args.cache)
    if args.vocab_model is not None:
        parts: dict[str, Any] = {"benchmark": "encoders", "model": file_digest(args.vocab_model),
                                 "vectors": file_digest(args.vocab_vectors)}

        def build(directory: Path) -> dict[str, Any]:
            vocab, read = import_subword_vocab(args.vocab_model, args.vocab_vectors, directory)
            return {"pieces": len(vocab), "missing_vectors": read.missing}
    else:
        parts = {"benchmark": "encoders", "corpus": corpus_key, "bpe_size": args.bpe_size,
                 "dim": args.dim, "epochs": args.epochs}

        def build(directory: Path) -> dict[str, Any]:
            vocab = train_subword_vocab(sentences, directory, bpe_size=args.bpe_size,
                                        dim=args.dim, epochs=args.epochs)
            return {"pieces": len(vocab)}

    return SubwordVocab.load(cache.produce("vocab", parts, build))


def encoder_options(overrides: list[str]) -> dict[str, dict[str, Any]]:
    """Return {encoder: {option: value}} from `name.key=value` strings."""
    options: dict[str, dict[str, Any]] = {}
    for text in overrides:
        key, _, raw = text.partition("=")
        name, _, option = key.rpartition(".")
        if not name or not option or not raw:
            raise SystemExit(f"--set {text!r}: expected ENCODER.OPTION=VALUE, e.g. gem.k=30")
        options.setdefault(name, {})[option] = yaml.safe_load(raw)
    return options


def time_encoder(registry: Any, name: str, options: dict[str, Any], vocab: SubwordVocab,
                 sentences: list[str], batch_size: int, device: str) -> dict[str, Any]:
    """Return fit seconds (None if not trainable) and encoding throughput of one encoder."""
    info = registry.get("encoder", name)
    encoder = registry.create("encoder", name, info.options(**options),
                              BuildContext(device=device, vocab=vocab))
    fit_s = None
    if info.trainable:
        started = time.perf_counter()
        encoder.fit(sentences)
        fit_s = round(time.perf_counter() - started, 3)
    started = time.perf_counter()
    vectors = encoder.encode(sentences, batch_size=batch_size)
    seconds = time.perf_counter() - started
    return {"fit_s": fit_s, "encode_sentences_per_s": round(len(sentences) / seconds, 1),
            "dim": int(vectors.shape[1]), "sentences": len(sentences)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("../shared/data/newstest-en/train.txt"))
    parser.add_argument("--encoders", default="avg,hier,avg-max-hier,gem",
                        help="comma-separated registered encoder names")
    parser.add_argument("--limit", type=int, default=None, help="first N sentences only")
    parser.add_argument("--lowercase", action="store_true", help="normalise like BPEmb: lower")
    parser.add_argument("--digits-zero", action="store_true", help="normalise: digits to 0")
    parser.add_argument("--bpe-size", type=int, default=4000)
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--vocab-model", type=Path, default=None,
                        help="import this sentencepiece model instead of training one")
    parser.add_argument("--vocab-vectors", type=Path, default=None,
                        help="its vectors (.txt/.vec/.bin/.npy), with --vocab-model")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="ENCODER.OPTION=VALUE")
    args = parser.parse_args(argv)
    if (args.vocab_model is None) != (args.vocab_vectors is None):
        parser.error("give both --vocab-model and --vocab-vectors, or neither")
    args.cache = args.cache or default_root()

    normalisation = Normalise(lowercase=args.lowercase,
                              digits="zero" if args.digits_zero else "keep")
    sentences = read_corpus(args.corpus, args.limit, normalisation)
    corpus_key = json.dumps([file_digest(args.corpus), args.limit,
                             normalisation.model_dump()], sort_keys=True)
    started = time.perf_counter()
    vocab = vocabulary(args, sentences, corpus_key)
    print(f"{len(sentences)} sentences, vocabulary {len(vocab)} x {vocab.dim} "
          f"({time.perf_counter() - started:.1f} s)", file=sys.stderr)

    registry = load_registry()
    options = encoder_options(args.overrides)
    results = {}
    for name in [n.strip() for n in args.encoders.split(",") if n.strip()]:
        results[name] = time_encoder(registry, name, options.get(name, {}), vocab, sentences,
                                     args.batch_size, args.device)
        print(f"{name}: {results[name]}", file=sys.stderr)
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
