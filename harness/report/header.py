"""The report's opening: what was run (corpus, vocabulary, decoders, encoders, provenance) and
what the diagnostics measure (Kerscher & Eger 2020, section 2)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from harness.report.elements import (
    Section,
    Table,
    fmt,
    min_support,
    spec_setting,
)
from harness.results.model import RunResults

METRICS_DOC = "docs/metrics.md"


def _options(options: dict[str, Any]) -> str:
    """"k=v, k=v" of a component's options; "defaults" when it has none."""
    return ", ".join(f"{k}={v}" for k, v in options.items()) or "defaults"


def _source(source: Any) -> str:
    """A corpus source as the spec gave it: a generator and its seed, or a file and its limit."""
    if not isinstance(source, dict):
        return ""
    if source.get("generate"):
        seed = source.get("seed")
        return (f"generated ({source['generate']}, {source.get('sentences')} asked"
                + (f", seed {seed}" if seed is not None else "") + ")")
    if source.get("path"):
        limit = source.get("limit")
        return f"file {PurePath(str(source['path'])).name}" + (
            f" (first {limit})" if limit else "")
    return ""


def _corpus(results: RunResults) -> str:
    spec = results.spec.corpus or {}
    counts = results.provenance.corpus
    parts = []
    for split in ("train", "test"):
        count = getattr(counts, split) if counts else None
        source = _source(spec.get(split))
        if count is not None or source:
            parts.append(f"{split}: " + (f"{count:,} sentences" if count is not None else "")
                         + (f", {source}" if count is not None and source else source))
    if spec.get("fit"):
        parts.append(f"fit: {_source(spec['fit'])}")
    if spec.get("max_tokens"):
        parts.append(f"fewer than {spec['max_tokens']} tokens")
    normalise = spec.get("normalise") or {}
    steps = (["lower-cased"] if normalise.get("lowercase") else []) + (
        ["digits as 0"] if normalise.get("digits") == "zero" else [])
    if steps:
        parts.append(", ".join(steps))
    return "; ".join(parts)


def _vocab(results: RunResults) -> str:
    vocab, spec = results.provenance.vocab, results.spec.vocab or {}
    if vocab is None:
        return ""
    parts = [f"{vocab.source or 'sentencepiece'} BPE",
             f"{fmt(vocab.pieces)} pieces", f"{fmt(vocab.dim)}-d vectors"]
    if vocab.source == "imported" and vocab.model_file:
        parts.insert(1, PurePath(vocab.model_file).name)
    elif spec.get("epochs"):
        parts.append(f"fastText {spec['epochs']} epochs")
    if vocab.missing_vectors:
        parts.append(f"{vocab.missing_vectors} pieces without a vector")
    return ", ".join(parts)


def provenance_line(results: RunResults) -> str:
    """The one line under the report's title: harness, commit, spec hash, seed, device."""
    prov = results.provenance
    device = prov.device or "?"
    if prov.device_name:
        device += f" ({prov.device_name})"
    parts = [f"harness {prov.harness_version or '?'}"]
    if prov.git_commit:
        parts.append(f"commit {prov.git_commit[:12]}")
    parts += [f"spec sha256 {prov.spec_sha256[:12] or '?'}",
              f"seed {fmt(prov.seed) if prov.seed is not None else '?'}", f"device {device}"]
    if results.signature is not None:
        parts.append(f"protocol {results.signature.text.rsplit('|', 1)[-1]}")
    if prov.threads:
        parts.append("threads " + ", ".join(f"{k} {v}" for k, v in prov.threads.items()))
    if "total" in prov.timings:
        parts.append(f"{prov.timings['total']:.0f} s")
    return ", ".join(parts)


def run_section(results: RunResults, analyses: Sequence[Any] = ()) -> Section | None:
    """What was run: corpus, vocabulary, decoders, generation, correlation settings and packages,
    one row each (the provenance line sits under the report's title), then the encoders with
    what each declares it is."""
    rows: list[list[str]] = []
    if corpus := _corpus(results):
        rows.append(["corpus", corpus])
    if vocab := _vocab(results):
        rows.append(["vocabulary", vocab])
    for decoder in results.spec.decoders or []:
        line = _options(decoder.options)
        line += f"; {decoder.seeds} seeds" if decoder.seeds > 1 else "; 1 seed"
        if decoder.encoders:
            line += f"; for {', '.join(decoder.encoders)} only"
        rows.append([f"decoder {decoder.name}", line])
    if (generation := results.spec.generation) is not None:
        rows.append(["generation", _options({k: v for k, v in generation.items()
                                             if v is not None})])
    if results.runs:
        resamples = spec_setting(results, "comparison", "resamples", None)
        permutations = spec_setting(results, "comparison", "permutations", None)
        controls = spec_setting(results, "comparison", "controls", None)
        rows.append(["comparison", f"min support {min_support(results)}"
                     + (f", {resamples} bootstrap resamples" if resamples else "")
                     + (f", {permutations} permutations" if permutations else "")
                     + (f", controls {controls}d" if controls else "")])
    for analysis in analyses:  # each analysis's own rows (its optional `header_rows`)
        if hasattr(analysis, "header_rows"):
            rows += analysis.header_rows(results)
    if results.signature is not None:
        rows.append(["protocol signature", results.signature.text])
    if (joined := results.reference) is not None:
        rows.append(["reference", f"bundle {joined.file} ({joined.id}): "
                     f"{len(joined.encoders)} encoders' rows joined, not run here"
                     + (f"; run again here: {', '.join(joined.rerun)} (bundled rows as "
                        f"NAME@{joined.id.split('@')[0]})" if joined.rerun else "")
                     + (f"; made at commit {joined.provenance.git_commit[:12]}"
                        if joined.provenance.git_commit else "")])
    if results.provenance.packages:
        rows.append(["packages", ", ".join(f"{name} {version}" for name, version
                                           in results.provenance.packages.items())])
    tables = [Table("", ["", "this run"], rows)] if rows else []
    if results.encoders:
        bundled = set(results.reference.encoders) if results.reference is not None else set()
        encoder_rows = [[name + (" (bundle)" if name in bundled else ""),
                         described.plugin + (f" {described.version}" if described.version
                                             else ""),
                         fmt(described.dim), _options(described.declares) if described.declares
                         else "–", _options(described.options)]
                        for name, described in results.encoders.items()]
        header = ["encoder", "plugin", "dim", "declares", "options"]
        if any(d.family for d in results.encoders.values()):
            header.append("family")
            for row, described in zip(encoder_rows, results.encoders.values()):
                row.append(described.family or "–")
        tables.append(Table("Encoders", header, encoder_rows))
    return Section("Run", [], tables=tables, kind="text") if tables else None


def definitions_section(results: RunResults, docs: str | None = None) -> Section | None:
    """One sentence per diagnostic the run reports, after Kerscher & Eger (2020), section 2,
    with a link to docs/metrics.md (`docs`: the link's target; plain text without one)."""
    metrics = set(results.published_diagnostics()) | {
        m for run in results.runs for m in run.metrics}
    if not metrics:
        return None
    definitions = [
        ("id", "Id: the share (in %) of test sentences the decoder regenerates exactly, token "
               "for token, from the encoder's vector."),
        ("perm", "PERM: the share (in %) of outputs that contain exactly the input's tokens, in "
                 "any order (an identical output counts as a permutation)."),
        ("id-perm", "Id/PERM: 100 x Id / PERM, how often an output that recovers the input's "
                    "words also recovers their order; undefined when no output is a "
                    "permutation, and a rate of only as many trials as permutations were "
                    "found."),
        ("bleu", "BLEU: corpus BLEU (sacrebleu) of the outputs against their inputs, n-gram "
                 "overlap on a 0-100 scale."),
        ("mover", "Mover: MoverScore as the paper's code computes it, 100 x (1 - the transport "
                  "cost between the two sentences' BERT token embeddings)."),
        ("bertscore", "BERTScore: greedy cosine matching of the two sentences' token "
                      "embeddings (F1 by default), x 100."),
        ("ppl", "ppl: perplexity of the inputs under the decoder, teacher-forced; lower is "
                "better."),
        ("token-f1", "token-f1: the F1 of the output's and the input's bags of tokens "
                     "(overlap counted with repeats), mean over sentences x 100, as embedding-"
                     "inversion work reports it; order plays no part."),
        ("cosine", "cosine: the output re-encoded by the same encoder, its cosine to the "
                   "input's vector, mean over sentences x 100: what the encoder itself sees "
                   "of the regeneration."),
        ("info", "info: the bits per sentence the vector gives the decoder, the mean over test "
                 "sentences of the unconditional model's code length minus the decoder's "
                 "(teacher-forced NLL / ln 2); the unconditional model is the same decoder "
                 "trained on vectors that carry nothing, so 0 is a vector with no "
                 "information; graded where Id sits at its floor. Within a seed the "
                 "unconditional model is the same for every encoder, so info orders encoders "
                 "as the decoder's conditional perplexity does; a vector with little "
                 "information costs its decoder some fitted noise, so the floor's info is "
                 "below 0."),
        ("retrieval", "retrieval: the share (in %) of test vectors for which the decoder finds "
                      "the vector's own sentence likelier than each of k - 1 other test "
                      "sentences (teacher-forced, nothing generated); chance is 100 / k, shown "
                      "beside the score."),
    ]
    lines = [f"- {text}" for name, text in definitions
             if any(m.split(":")[0] == name for m in metrics)]
    if not lines:
        return None
    where = f"[{METRICS_DOC}]({docs})" if docs else f"{METRICS_DOC} in the v2s-harness documentation"
    lines.append(f"Id, PERM, Id/PERM, BLEU and Mover as Kerscher & Eger (2020), section 2, "
                 f"define them; how each is computed, and where it departs from the paper's "
                 f"code: {where}.")
    return Section("What the diagnostics measure", lines)
