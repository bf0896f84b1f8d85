"""Probe each trained decoder (the spec's `probes:` section): scored analogy sets,
interpolation paths and noise robustness (Kerscher & Eger 2020, sections 1 and 4, Table 2
right; `harness.analyses.probes`).

One artifact per encoder x decoder pair (the decoder trained with the spec's seed), keyed by
the trained decoder, the encoder, the test vectors, the search and the probes asked for (an
analogy file by its content), so a rerun builds nothing and a changed probe rebuilds only the
probes. The artifact holds the pair's results (`probes.json`) and every analogy item's output
(`analogies.jsonl`), which the run directory gets as `probes/<encoder>__<decoder>.jsonl`.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from harness.analyses.probes.analogies import (
    AnalogySet,
    generated_analogy_set,
    read_analogy_set,
    score_analogies,
    solve_analogies,
)
from harness.analyses.probes.interpolation import interpolate_paths
from harness.analyses.probes.noise import noise_robustness
from harness.analyses.probes.pairs import ProbedPair, normaliser, probed_pair
from harness.analyses.probes.results import PairProbes
from harness.analyses.probes.spec import AnalogySource, ProbesSection, probes_settings
from harness.protocols import Job, JobRecord, SpecView
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.encode import encode_corpus
from harness.stages.train import train_decoder_for
from harness.stages.vocab import Vocab
from harness.text.outputs import sample_file_name
from harness.util.cache import file_digest

VERSION = 1
RESULT_FILE = "probes.json"
ITEMS_FILE = "analogies.jsonl"
PROBES_DIR = "probes"


class Probed(JobRecord):
    """Pairs' probe results and, for each, where its analogy items lie in the cache (`items`,
    in the order of `pairs`): what an encoder's probes job returns (`run_probes`)."""

    pairs: list[PairProbes] = []
    items: list[Path] = []


def analogy_set_of(source: AnalogySource) -> AnalogySet:
    """The analogy set a spec entry names: its TSV file read, or the generated set."""
    if source.path is not None:
        return read_analogy_set(source.path, source.form)
    return generated_analogy_set(source.generate or "", source.items, source.seed,
                                 source.form)


def _source_identity(source: AnalogySource) -> dict[str, Any]:
    if source.path is not None:  # the content, not where it lies
        return {"sha256": file_digest(source.path), "form": source.form}
    from harness.synthetic.analogies import ANALOGY_VERSION

    return {**source.model_dump(mode="json", exclude={"path"}), "version": ANALOGY_VERSION}


def interpolation_pairs(section: ProbesSection, corpus: Corpus,
                        normalise: Callable[[str], str]) -> list[tuple[str, str]]:
    """The sentence pairs to interpolate: the spec's own (normalised), or consecutive test
    sentences (as many pairs as the test split holds, up to the number asked for)."""
    assert section.interpolation is not None
    pairs = section.interpolation.pairs
    if isinstance(pairs, int):
        test = corpus.test
        return [(test[2 * i], test[2 * i + 1]) for i in range(min(pairs, len(test) // 2))]
    return [(normalise(x), normalise(y)) for x, y in pairs]


def run_probes(ctx: RunContext, corpus: Corpus, vocab: Vocab, encoder_name: str) -> Probed:
    """The probes of encoder `encoder_name`'s pairs, from the cache or computed now (its
    probes job). Nothing when the spec asks for no probe."""
    section = probes_settings(ctx.spec)
    pairs: list[PairProbes] = []
    items: list[Path] = []
    if not section.active:
        return Probed()
    started = time.perf_counter()
    normalise = normaliser(ctx.spec.corpus.normalise)
    sets = [analogy_set_of(s).normalised(normalise) for s in section.analogies]
    seed = ctx.spec.seed if section.noise is None or section.noise.seed is None \
        else section.noise.seed
    common = {"version": VERSION, "beam": section.beam,
              "generation": ctx.spec.generation.model_dump(mode="json"),
              "analogies": [_source_identity(s) for s in section.analogies],
              "interpolation": None if section.interpolation is None
              else section.interpolation.model_dump(mode="json"),
              "noise": None if section.noise is None
              else {**section.noise.model_dump(mode="json"), "seed": seed}}
    (encoder,) = [e for e in ctx.spec.components("encoder") if e.name == encoder_name]
    encoded = encode_corpus(ctx, encoder, corpus, vocab)
    for decoder in ctx.spec.decoders:
        if not decoder.trains_for(encoder.name):
            continue
        trained = train_decoder_for(ctx, decoder, encoded, corpus, vocab)
        parts = {**common, "trained": trained.key, "encoded": encoded.keys["test"],
                 "encoder": encoded.identity}

        def build(directory: Path, decoder: Any = decoder, trained: Any = trained) -> dict[str, Any]:
            pair = probed_pair(ctx, decoder, trained, encoded, vocab, section.beam)
            probes, records = probe_pair(pair, section, sets, corpus, seed, normalise)
            (directory / RESULT_FILE).write_text(probes.model_dump_json(indent=1),
                                                 encoding="utf-8")
            with open(directory / ITEMS_FILE, "w", encoding="utf-8") as handle:
                for record in records:
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            return {"analogy_items": len(records)}

        directory = ctx.cache.produce("probes", parts, build,
                                      label=f"{encoder.name} -> {decoder.name}")
        pairs.append(PairProbes.model_validate_json(
            (directory / RESULT_FILE).read_text(encoding="utf-8")))
        items.append(directory / ITEMS_FILE)
    ctx.add_time("probes", time.perf_counter() - started)
    return Probed(pairs=pairs, items=items)


def probe_pair(pair: ProbedPair, section: ProbesSection, sets: list[AnalogySet],
               corpus: Corpus, seed: int, normalise: Callable[[str], str]
               ) -> tuple[PairProbes, list[dict[str, Any]]]:
    """One pair's probes, and every analogy item's output as JSON records."""
    analogies, items = [], []
    for analogy_set in sets:
        result, scored = score_analogies(analogy_set,
                                         solve_analogies(analogy_set, pair.encode, pair.decode))
        analogies.append(result)
        items += [{"set": analogy_set.name, **item.model_dump(mode="json")} for item in scored]
    interpolation = None
    if section.interpolation is not None:
        interpolation = interpolate_paths(interpolation_pairs(section, corpus, normalise),
                                          section.interpolation.steps, pair.encode, pair.decode)
    noise = None
    if section.noise is not None:
        test = pair.encoded.vectors("test")
        count = min(section.noise.sentences, len(test))
        sigma = np.asarray(test, dtype=np.float64).std(axis=0)
        noise = noise_robustness(np.asarray(test[:count]), sigma, corpus.test[:count],
                                 section.noise.scales, seed, pair.decode)
    return PairProbes(encoder=pair.encoder, decoder=pair.decoder, analogies=analogies,
                      interpolation=interpolation, noise=noise), items


def write_probe_items(out: Path, probed: list[Probed]) -> None:
    """Copy each pair's analogy items into `out/probes/<encoder>__<decoder>.jsonl` (atomically);
    remove files there that this run does not write."""
    folder = out / PROBES_DIR
    written = set()
    for pair, source in ((p, s) for found in probed for p, s in zip(found.pairs, found.items)):
        if not source.is_file() or source.stat().st_size == 0:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / sample_file_name(pair.encoder, pair.decoder)
        tmp = target.with_name(f".{target.name}.tmp")
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
        written.add(target.name)
    if folder.is_dir():
        for stale in folder.glob("*.jsonl"):
            if stale.name not in written:
                stale.unlink()


def probe_jobs(spec: SpecView, name: str) -> list[Job]:
    """One job per encoder with a decoder trained for it, named `name`: the pairs' probes
    decoded in the encoder's job (`run_probes`); none when the spec asks for no probe."""
    if not probes_settings(spec).active:
        return []
    return [Job(analysis=name, encoder=encoder.name,
                        what=f"probes decoded by {encoder.name}'s decoders")
            for encoder in spec.components("encoder")
            if any(decoder.trains_for(encoder.name) for decoder in spec.decoders)]
