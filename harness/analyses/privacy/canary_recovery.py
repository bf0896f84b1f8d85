"""The canaries under one attacker: encoded (and defended, as the attacked vectors are),
decoded with the spec's `generation` settings, and every candidate sentence of each entity
scored by the attacker's likelihood given the canary's vector; then per entity type the
recovery (`canaries.recovery_counts`, exact Clopper-Pearson intervals) and the exposure
(`exposure`, Carlini et al. 2019, Sec. 4) by that likelihood and by every attack that ranks
(`harness.protocols.Ranker`, whose scores `run_attacks` gives), the strongest kept. One cached
artifact per attacker and vectors, so a rerun decodes and scores nothing twice."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.analyses.privacy.canaries import Canary, recovery_counts, variants_digest
from harness.analyses.privacy.exposure import (
    chance_exposure,
    exposures,
    mean_interval,
    variant_nll,
)
from harness.analyses.privacy.results import EntityRecovery, Exposure
from harness.spec import Component, encode_batch_size
from harness.stages.base import RunContext
from harness.stages.encode import Encoded
from harness.stages.generate import decode, load_trained_decoder
from harness.stages.train import TrainedDecoder
from harness.stages.vocab import Vocab
from harness.stats.intervals import proportion_interval

VERSION = 2
DECODER = "decoder"
"""The adaptive decoder's likelihood among the canaries' rankers (the attack label of its
output)."""
HYPOTHESES_FILE = "hypotheses.json"
NLL_FILE = "variants-nll.json"


def canary_recovery(ctx: RunContext, attacker: Component, trained: TrainedDecoder,
                    encoded: Encoded, vocab: Vocab, canaries: list[Canary],
                    ranked: Mapping[str, Sequence[Sequence[Sequence[float]]]] | None = None
                    ) -> dict[str, EntityRecovery]:
    """Entity type -> how much of the canaries' entities the attacker's output recovers, and
    their exposure under its likelihood and under each ranking attack's scores (`ranked`:
    label -> per canary, per entity, each candidate's score, higher the likelier)."""
    from harness.generation.perplexity import reference_nll

    sentences = [canary.sentence for canary in canaries]
    # The candidates are many (M per entity): the key holds their digest, not the sentences.
    variants = variants_digest(canaries)
    parts = {"version": VERSION, "trained": trained.key, "encoded": encoded.identity,
             "sentences": sentences, "variants": variants,
             "generation": ctx.spec.generation.model_dump()}
    words = vocab.vocab

    def build(directory: Path) -> dict[str, Any]:
        model = load_trained_decoder(ctx, attacker, trained, encoded, vocab)
        vectors = encoded.encode(sentences, batch_size=encode_batch_size(ctx.spec))
        hypotheses = [words.decode(h.ids) for h in
                      decode(model, vectors, ctx.spec.generation, vocab, ctx.device)]

        def score(rows: np.ndarray, texts: list[str]) -> np.ndarray:
            found = reference_nll(model, vectors[rows], words.encode(texts), bos_id=words.bos_id,
                                  eos_id=words.eos_id, batch_size=ctx.spec.generation.batch_size,
                                  device=ctx.device)
            return np.array([value for value, _ in found], dtype=np.float64)

        for name, value in ((HYPOTHESES_FILE, hypotheses),
                            (NLL_FILE, variant_nll(canaries, score))):
            (directory / name).write_text(json.dumps(value, ensure_ascii=False),
                                          encoding="utf-8")
        return {"canaries": len(sentences)}

    directory = ctx.cache.produce("canaries", parts, build,
                                  label=f"{encoded.encoder} -> {attacker.name} canaries")
    hypotheses = json.loads((directory / HYPOTHESES_FILE).read_text(encoding="utf-8"))
    nll = json.loads((directory / NLL_FILE).read_text(encoding="utf-8"))
    by_ranker = {DECODER: exposures(canaries, nll)}
    for label, scores in (ranked or {}).items():  # higher the likelier: rank the negation
        by_ranker[label] = exposures(canaries, [[[-v for v in entity] for entity in canary]
                                                for canary in scores])
    comparison = ctx.spec.comparison
    found = {}
    for kind, (n, exact, partial) in recovery_counts(canaries, hypotheses).items():
        candidates = by_ranker[DECODER][kind][1]
        found[kind] = entity_recovery(
            n, exact, partial, {label: exposed[kind][0] for label, exposed in by_ranker.items()},
            candidates, resamples=comparison.resamples, seed=ctx.spec.seed)
    return found


def entity_recovery(n: int, exact: int, partial: int,
                    exposure: Mapping[str, list[float]] | None = None,
                    candidates: int | None = None, *, resamples: int = 1000, seed: int = 0
                    ) -> EntityRecovery:
    """Recovery rates in percent with their exact Clopper-Pearson intervals; with each
    ranker's exposure of every canary's entity among `candidates` (`exposure`: ranker ->
    one value per canary), each ranker's mean with its bootstrap interval over the canaries,
    the strongest's (the highest mean, the first among equals) as the entity's, and the mean
    a uniform rank would give."""
    def percent(k: int) -> tuple[float | None, tuple[float | None, float | None]]:
        found = proportion_interval(k, n)
        return 100 * found.value, (100 * found.low, 100 * found.high)

    (e, e_ci), (p, p_ci) = percent(exact), percent(partial)
    exposed: dict[str, Any] = {}
    if exposure and candidates is not None:
        rankers = {label: Exposure(exposure=mean, exposure_ci95=interval)
                   for label, values in exposure.items()
                   for mean, interval in [mean_interval(values, resamples=resamples,
                                                        seed=seed,
                                                        upper=math.log2(candidates))]}
        ranker = max(rankers, key=lambda label: rankers[label].exposure or float("-inf"))
        exposed = {"candidates": candidates, "exposure": rankers[ranker].exposure,
                   "exposure_ci95": rankers[ranker].exposure_ci95, "ranker": ranker,
                   "rankers": rankers, "exposure_chance": chance_exposure(candidates)}
    return EntityRecovery(n=n, exact=e, exact_ci95=e_ci, partial=p, partial_ci95=p_ci,
                          **exposed)
