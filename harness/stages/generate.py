"""Stage 6: regenerate the test sentences from their vectors with a trained decoder."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.results.model import GenerateSummary
from harness.spec import Component, GenerationSection
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.encode import Encoded
from harness.stages.train import TrainedDecoder, build_decoder
from harness.stages.vocab import Vocab
from harness.text.outputs import count_empty
from harness.util.cache import read_meta

VERSION = 4  # 4: `length_penalty: paper` is the released search (harness.generation.released)
SAMPLES_FILE = "samples.jsonl"


@dataclass(frozen=True)
class Samples:
    """Inputs and decoder outputs for the test split, one record per sentence."""

    encoder: str
    decoder: str
    key: str
    path: Path
    records: list[dict[str, Any]]
    sentences_per_s: float

    @property
    def references(self) -> list[str]:
        """The normalised input sentences."""
        return [r["reference"] for r in self.records]

    @property
    def hypotheses(self) -> list[str]:
        """The generated sentences."""
        return [r["hypothesis"] for r in self.records]

    @property
    def summary(self) -> GenerateSummary:
        """Speed, and the count of empty outputs, for results.json."""
        return GenerateSummary(sentences_per_s=self.sentences_per_s,
                               sentences=len(self.records),
                               empty=count_empty(self.hypotheses))



def write_samples(path: Path, corpus: Corpus, hypotheses: Sequence[str],
                  extra: Sequence[Mapping[str, Any]] | None = None) -> None:
    """The samples file: one JSON record per test sentence, its index, reference (normalised
    and raw) and `hypotheses[i]`, then the fields of `extra[i]`."""
    with open(path, "w", encoding="utf-8") as handle:
        for index, (hyp, ref, raw) in enumerate(zip(hypotheses, corpus.test, corpus.test_raw)):
            record = {"index": index, "reference": ref, "reference_raw": raw, "hypothesis": hyp,
                      **(extra[index] if extra is not None else {})}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def read_samples(path: Path) -> list[dict[str, Any]]:
    """The records of a samples file (`write_samples`)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

def load_trained_decoder(ctx: RunContext, component: Component, trained: TrainedDecoder,
                         encoded: Encoded, vocab: Vocab) -> Any:
    """Return the decoder with its trained weights (checked against their sha256)."""
    from harness.training.checkpoint import load_decoder_state

    model = build_decoder(ctx, component, encoded, vocab)
    load_decoder_state(model, trained.directory)
    return model


def decode(model: Any, vectors: Any, section: GenerationSection, vocab: Vocab, device: str, *,
           progress: bool = False) -> list[Any]:
    """Return the best hypothesis for each vector (N, D) as the spec's `generation` section
    asks: greedy search with beam 1, else batched beam search."""
    from harness.generation.search import beam_search, greedy_search

    ids = dict(bos_id=vocab.vocab.bos_id, eos_id=vocab.vocab.eos_id)
    if section.beam == 1:
        return greedy_search(model, vectors, max_len=section.max_len,
                             batch_size=section.batch_size, device=device, progress=progress,
                             **ids)
    return beam_search(model, vectors, beam=section.beam, max_len=section.max_len,
                       batch_size=section.batch_size, device=device,
                       length_penalty=section.length_penalty, stop_after=section.stop_after,
                       progress=progress, **ids)


def generate_samples(ctx: RunContext, component: Component, trained: TrainedDecoder,
                     encoded: Encoded, corpus: Corpus, vocab: Vocab) -> Samples:
    """Return the decoded test sentences, generating what the cache lacks."""
    from harness.generation.perplexity import reference_nll

    started = time.perf_counter()
    section = ctx.spec.generation
    parts = {"version": VERSION, "trained": trained.key, "encoded": encoded.keys["test"],
             **section.model_dump()}

    def build(directory: Path) -> dict[str, Any]:
        model = load_trained_decoder(ctx, component, trained, encoded, vocab)
        ids = dict(bos_id=vocab.vocab.bos_id, eos_id=vocab.vocab.eos_id)
        begun = time.perf_counter()
        hypotheses = decode(model, encoded.vectors("test"), section, vocab, ctx.device,
                            progress=True)
        seconds = time.perf_counter() - begun
        # Teacher-forced NLL of every input, for the `ppl` metric.
        nll = reference_nll(model, encoded.vectors("test"), vocab.vocab.encode(corpus.test),
                            batch_size=section.batch_size, device=ctx.device, **ids)
        write_samples(directory / SAMPLES_FILE, corpus,
                      [vocab.vocab.decode(hyp.ids) for hyp in hypotheses],
                      [{"score": hyp.score, "nll": nll[i][0], "tokens": nll[i][1]}
                       for i, hyp in enumerate(hypotheses)])
        return {"sentences": len(hypotheses),
                "sentences_per_s": len(hypotheses) / max(seconds, 1e-9)}

    directory = ctx.cache.produce("generate", parts, build,
                                  label=f"{trained.encoder} -> {trained.decoder}")
    ctx.add_time("generate", time.perf_counter() - started)
    path = directory / SAMPLES_FILE
    return Samples(encoder=trained.encoder, decoder=trained.decoder, key=directory.name,
                   path=path, records=read_samples(path),
                   sentences_per_s=read_meta(directory)["summary"]["sentences_per_s"])
