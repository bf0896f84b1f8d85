"""The protocol signature: what decides a run's numbers, except which encoders run.

The record and its arithmetic; `harness.reference.signature` computes a run's
(`protocol_fields`, then `with_vocabulary`).

Like sacrebleu's signature, it is a short readable string plus a hash. The hash runs over
`Signature.fields`, a flat mapping from a dotted field name to a JSON value:

- `protocol`: `PROTOCOL_VERSION`, the version of the code that computes the numbers (bumped by
  any change that moves a number; docs/results.md says when);
- `seed`: the spec's seed (decoder seeds, bootstrap draws, retrieval distractors);
- `data.*`: the sha256 of the training and test text as the run read it (after the corpus
  filter and normalisation), and the sentence counts;
- `corpus.*`: the filter (`max_tokens`) and the normalisation;
- `vocab.*`: how the vocabulary was made, and the sha256 of its files (a vocabulary trained
  again need not come out the same: a joined run uses the bundle's);
- `encode.dtype`: the precision the vectors are stored at;
- `decoders.NAME.*`: each decoder's registered identity (options, plugin and its version) and
  its seeds;
- `generation.*`: beam, length, ranking of hypotheses;
- `metrics.NAME.*`: each metric's registered identity (its options);
- `downstream.*`: each task's identity, classifier seeds and the digests of its data, the
  configuration and the tasks' seed.

Left out on purpose: the encoders (a signature is what two runs of different encoders share),
the analyses' sections (they read the numbers, they do not make them), the executor, the
device and the cache (they change how fast, not what).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

from harness.results.records import Record

PROTOCOL_VERSION = 3
"""The version of the code that computes a run's numbers. Bump it with any change that moves a
number of an unchanged spec (docs/results.md, "The protocol signature"): a bundle made before
the change is then refused, not silently mixed with numbers made after it. 2: an interval
widened by the seeds' spread is clipped to the metric's range (`value_range`). 3: learning-curve
points train every decoder seed and average them."""

HASH_DIGITS = 12
"""Hex digits of the hash shown in the readable signature (the full sha256 is kept beside)."""


class Signature(Record):
    """A run's protocol signature: `text`, the readable string (`v2s:1|...|#hash`), `sha256`
    over `fields`, and `fields` themselves (dotted name -> JSON value), which name what differs
    when two signatures do."""

    text: str
    sha256: str
    fields: dict[str, Any]


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted name, leaf) of every leaf of nested mappings; lists are leaves."""
    if isinstance(value, Mapping) and value:
        for key in sorted(value):
            yield from flatten(value[key], f"{prefix}.{key}" if prefix else str(key))
    else:
        yield prefix, value


def digest(fields: Mapping[str, Any]) -> str:
    """The sha256 of `fields` as canonical JSON (sorted keys, no spaces)."""
    blob = json.dumps(dict(fields), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def signed(fields: Mapping[str, Any]) -> Signature:
    """The `Signature` of `fields` (nested or flat): the hash and the readable string."""
    flat = dict(flatten(fields))
    sha = digest(flat)
    return Signature(text=readable(flat, sha), sha256=sha, fields=flat)


def readable(fields: Mapping[str, Any], sha256: str) -> str:
    """The short string a report header shows: `v2s:PROTOCOL|data:TRAIN/TEST|corpus:...|
    vocab:...|dec:...|gen:...|metrics:...|tasks:...|seed:S|#HASH`."""
    def pick(prefix: str) -> dict[str, Any]:
        return {k[len(prefix):]: v for k, v in fields.items() if k.startswith(prefix)}

    data = pick("data.")
    vocab = pick("vocab.")
    generation = pick("generation.")
    decoders = sorted({k.split(".")[0] for k in pick("decoders.")})
    seeds = {name: len(fields.get(f"decoders.{name}.seeds") or []) for name in decoders}
    metrics = sorted({k.split(".")[0] for k in pick("metrics.")})
    tasks = sorted({k.split(".")[1] for k in pick("downstream.") if k.startswith("tasks.")})
    short = {key: str(data.get(key, ""))[:8] for key in ("train_sha256", "test_sha256")}
    parts = [
        f"v2s:{fields.get('protocol')}",
        f"data:{short['train_sha256']}/{short['test_sha256']}"
        f"({data.get('train')}/{data.get('test')})",
        f"corpus:<{fields.get('corpus.max_tokens')}"
        + (".lc" if fields.get("corpus.normalise.lowercase") else "")
        + (".d0" if fields.get("corpus.normalise.digits") == "zero" else ""),
        "vocab:" + (f"bpe{vocab.get('bpe_size')}.d{vocab.get('dim')}.e{vocab.get('epochs')}"
                    if "bpe_size" in vocab else "imported") + f".{str(vocab.get('sha256'))[:8]}",
        "dec:" + ",".join(f"{name}x{seeds[name]}" for name in decoders),
        f"gen:beam{generation.get('beam')}.len{generation.get('max_len')}"
        f".{generation.get('length_penalty')}",
        "metrics:" + ",".join(metrics),
        "tasks:" + (",".join(tasks) or "-"),
        f"seed:{fields.get('seed')}",
        f"#{sha256[:HASH_DIGITS]}",
    ]
    return "|".join(parts)


def differences(ours: Signature, theirs: Signature) -> list[tuple[str, Any, Any]]:
    """(field, our value, their value) of every field in which two signatures differ, a field
    one of them lacks given as None, in field order."""
    names = sorted(set(ours.fields) | set(theirs.fields))
    return [(name, ours.fields.get(name), theirs.fields.get(name)) for name in names
            if ours.fields.get(name) != theirs.fields.get(name)]


def describe_difference(name: str, ours: Any, theirs: Any, *, our_side: str,
                        their_side: str) -> str:
    """One line naming a differing field and both values."""
    def show(value: Any) -> str:
        return "(absent)" if value is None else json.dumps(value, default=str)

    return f"{name}: {their_side} has {show(theirs)}, {our_side} {show(ours)}"


