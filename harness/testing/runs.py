"""The tiny real run the executor and analysis checks share: two encoders, one tiny decoder
each, seconds on a CPU."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TINY_SPEC = """\
name: conformance-check
seed: 1
device: cpu
corpus:
  train: {generate: quickstart, sentences: 300}
  test: {generate: quickstart, sentences: 30, seed: 2}
vocab: {bpe_size: 150, dim: 8, epochs: 1}
encoders: [avg, {name: random-gaussian, dim: 8}]
decoders: [{name: mos-lstm, layers: 1, hidden: 16, epochs: 1}]
generation: {beam: 1, max_len: 15}
metrics: [id, bleu]
"""
"""Two encoders, one tiny decoder each: seconds on a CPU."""


PLANNED = """\
probes: {noise: {scales: [0.5], sentences: 4}}
"""
"""What `TINY_SPEC` adds for an analysis that plans jobs (the probes' decoding)."""


def tiny_spec(workdir: Path, extra: str = "") -> Any:
    """`TINY_SPEC`, with `extra` (YAML) after it, written into `workdir` and loaded with the
    installed plugins."""
    from harness.registry.loader import load_registry
    from harness.spec import load_spec

    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "spec.yaml"
    path.write_text(TINY_SPEC + extra, encoding="utf-8")
    return load_spec(path, registry=load_registry())


def tiny_execution(spec: Any, executor: Any, cache: Path) -> tuple[Any, Any, Any, Any]:
    """(context, corpus, vocabulary, what `executor.run` returned) of `spec`'s jobs against
    the cache at `cache`."""
    from harness.stages.base import RunContext
    from harness.stages.corpus import prepare_corpus
    from harness.stages.vocab import prepare_vocab
    from harness.util.cache import Cache

    ctx = RunContext(spec=spec, cache=Cache(cache), device="cpu")
    corpus = prepare_corpus(ctx)
    vocab = prepare_vocab(ctx, corpus)
    return ctx, corpus, vocab, executor.run(ctx, corpus, vocab)
