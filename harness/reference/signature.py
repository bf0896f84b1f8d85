"""A run's protocol signature (`harness.results.signature` says what it covers and why):
computed from the resolved spec, the prepared corpus and the vocabulary."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.results.signature import PROTOCOL_VERSION, Signature, signed
from harness.util.cache import file_digest

if TYPE_CHECKING:
    from harness.spec.schema import Spec
    from harness.stages.base import RunContext
    from harness.stages.corpus import Corpus
    from harness.stages.vocab import Vocab


def with_vocabulary(fields: dict[str, Any], ctx: RunContext, vocab: Vocab) -> Signature:
    """The signature of `protocol_fields` completed by the built vocabulary's digest."""
    digest = vocab_digest(ctx.cache.path("vocab", vocab.key))
    return signed({**fields, "vocab": {**fields["vocab"], "sha256": digest}})


def protocol_fields(ctx: RunContext, corpus: Corpus) -> dict[str, Any]:
    """Every field of the signature of a run of `ctx.spec` over `corpus` but `vocab.sha256`,
    nested: what a joined run checks before it builds a vocabulary (`signed` makes the
    signature of it)."""
    from harness.protocols import is_seeded
    from harness.stages.evaluate import task_data

    spec = ctx.spec
    tasks = {}
    for component in spec.components("task"):
        task = ctx.build_once(component)
        identity = component.identity()
        tasks[component.name] = {
            "options": identity["options"], "plugin": identity["plugin"],
            "version": identity["version"], "task_version": getattr(task, "version", None),
            "seeds": spec.downstream.task_seeds(component, is_seeded(task)),
            "data": task_data(ctx, task)[1]}
    return {
        **spec_fields(spec),
        "data": {"train_sha256": file_digest(corpus.directory / "train.txt"),
                 "test_sha256": file_digest(corpus.directory / "test.txt"),
                 "train": len(corpus.train), "test": len(corpus.test)},
        "downstream": {"tasks": tasks, "config": spec.downstream.config,
                       "seed": spec.downstream.seed,
                       "reference": (file_digest(spec.downstream.reference)
                                     if spec.downstream.reference else None)},
    }


def spec_fields(spec: Spec) -> dict[str, Any]:
    """The fields of the signature that the spec alone decides (no data file read): the
    protocol's version, the seed, the corpus filter, the vocabulary's settings, the decoders,
    the generation and the metrics."""
    vocab_section = spec.vocab.model_dump(mode="json")
    for key in ("model", "vectors"):  # imported files: their content, not where they lie
        if vocab_section.get(key):
            vocab_section[key] = file_digest(Path(vocab_section[key]))
    return {
        "protocol": PROTOCOL_VERSION,
        "seed": spec.seed,
        "corpus": {"max_tokens": spec.corpus.max_tokens,
                   "normalise": spec.corpus.normalise.model_dump(mode="json")},
        "vocab": {k: v for k, v in vocab_section.items() if v is not None},
        "encode": {"dtype": spec.encode.dtype},
        "decoders": {d.name: {**_identity(d), "seeds": spec.decoder_seeds(d)}
                     for d in spec.decoders},
        "generation": spec.generation.model_dump(mode="json"),
        "metrics": {m.name: _identity(m) for m in spec.metrics},
    }


def vocab_digest(directory: Path) -> str:
    """The sha256 over the files of a vocabulary artifact (names and contents), meta.json
    left out (it records when and how long)."""
    from harness.util.cache import META_FILE

    sha = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and p.name != META_FILE):
        sha.update(str(path.relative_to(directory)).encode() + b"\0")
        sha.update(file_digest(path).encode() + b"\0")
    return sha.hexdigest()


def _identity(component: Any) -> dict[str, Any]:
    """A component's options, plugin and plugin version; a decoder's options without those that
    change how often it checkpoints and logs, not its weights (`keyed_options`)."""
    from harness.training.options import keyed_options

    identity = component.identity()
    options = identity["options"]
    if component.info.kind == "decoder":
        options = keyed_options(options)
    return {"options": options, "plugin": identity["plugin"], "version": identity["version"]}
