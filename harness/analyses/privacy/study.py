"""Leakage against utility: every studied encoder's vectors attacked clean and under each
defence of the spec at each level (the attacker adapts: it is trained on the defended training
vectors), with the downstream tasks on the same vectors, canaries, and each defence's leakage
at matched utility. The floor is the leakage of the control encoder whose vectors carry no
information (`random-gaussian`), undefended."""

from __future__ import annotations

import time
from typing import Any

from harness.analyses.floor.gains import floor_encoder
from harness.analyses.privacy.attack import attack, leaked, relative_interval, relative_utility
from harness.analyses.privacy.canaries import canaries
from harness.analyses.privacy.results import MatchedLeakage, Privacy, PrivacyPoint
from harness.analyses.probes.pairs import normaliser
from harness.analyses.run import AnalysisRun
from harness.errors import HarnessError
from harness.protocols import AnalysisJob
from harness.spec import Component
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.defend import defend_encoded
from harness.stages.encode import encode_corpus
from harness.stages.vocab import Vocab

UTILITY = ("the mean over the spec's downstream tasks of each task's score on these vectors "
           "divided by its score on the clean vectors (1 = no loss)")


def privacy_jobs(spec: Any, name: str) -> list[AnalysisJob]:
    """One job per studied encoder, named `name`: its attacker trained on its clean vectors
    and on each defence level's, scored, with the downstream tasks and canaries on each
    (`attack_encoder`); none when the spec names no defence."""
    if not spec.defences:
        return []
    attacker = _attacker(spec, spec.privacy.attacker)
    levels = sum(len(entry.at_levels()) for entry in spec.defences)
    encoders = [e.name for e in spec.components("encoder")]
    # The clean attacker is the encoder's own decoder (one artifact, trained by its job).
    return [AnalysisJob(analysis=name, encoder=encoder, trains=(attacker.name,) * levels,
                        what=f"{attacker.name} attacks {encoder}'s vectors clean and at "
                             f"{levels} defence levels")
            for encoder in spec.studied(encoders)]


def attack_encoder(ctx: RunContext, corpus: Corpus, vocab: Vocab,
                   encoder_name: str) -> list[PrivacyPoint]:
    """The clean point, then each defence's levels, of one encoder: every attacker trained and
    scored through the cache, so the study (`privacy_study`) reads what a job computed."""
    spec = ctx.spec
    section = spec.privacy
    (encoder,) = [e for e in spec.components("encoder") if e.name == encoder_name]
    canary_set = (canaries(section.canaries, section.canary_seed,
                           normaliser(spec.corpus.normalise)) if section.canaries else None)
    return _encoder_points(ctx, corpus, vocab, encoder, _attacker(spec, section.attacker),
                           canary_set)


def privacy_study(run: AnalysisRun) -> Privacy | None:
    """The study, or None when the spec names no defence: the points the jobs computed
    (`privacy_jobs`), read from the cache."""
    spec, ctx = run.spec, run.ctx
    if not spec.defences:
        return None
    started = time.perf_counter()
    section = spec.privacy
    attacker = _attacker(spec, section.attacker)
    if section.leakage not in [m.name for m in spec.metrics]:
        raise HarnessError(f"privacy.leakage: {section.leakage!r} is not among the spec's "
                           f"metrics ({', '.join(m.name for m in spec.metrics)})")
    studied = set(spec.studied(run.encoders)) - set(run.execution.failures)
    points: dict[str, list[PrivacyPoint]] = {}
    for encoder in spec.components("encoder"):
        if encoder.name in studied:
            points[encoder.name] = attack_encoder(ctx, run.corpus, run.vocab, encoder.name)
    floor = floor_encoder(spec.encoders)
    floor_scores = next((r.metrics for r in run.runs
                         if r.encoder == floor and r.decoder == attacker.name), {})
    ctx.add_time("privacy", time.perf_counter() - started)
    return Privacy(attacker=attacker.name, leakage=section.leakage, utility=UTILITY,
                   matched_utility=section.matched_utility, canaries=section.canaries,
                   points=points,
                   matched={name: matched_leakage(rows, section.leakage,
                                                  section.matched_utility)
                            for name, rows in points.items()},
                   floor_encoder=floor if floor_scores else None, floor=floor_scores)


def _attacker(spec: Any, name: str | None) -> Component:
    if not spec.decoders:
        raise HarnessError("defences: the privacy analysis attacks with a decoder; the spec "
                           "has none (add `decoders:`)")
    if name is None:
        return spec.decoders[0]
    found = [d for d in spec.decoders if d.name == name]
    if not found:
        raise HarnessError(f"privacy.attacker: {name!r} is not among the spec's decoders "
                           f"({', '.join(d.name for d in spec.decoders)})")
    return found[0]


def _encoder_points(ctx: RunContext, corpus: Corpus, vocab: Vocab, encoder: Component,
                    attacker: Component, canary_set: Any) -> list[PrivacyPoint]:
    """The clean point, then each defence's levels, of one encoder."""
    encoded = encode_corpus(ctx, encoder, corpus, vocab)
    clean = attack(ctx, attacker, encoded, corpus, vocab, canaries=canary_set)
    clean_tasks = clean.point.tasks
    rows = [clean.point.model_copy(update={
        "utility": 1.0 if clean_tasks else None,
        "utility_ci95": relative_interval(clean.point.tasks_ci95, clean_tasks, clean_tasks)})]
    for entry in ctx.spec.defences:
        for at in entry.at_levels():
            option = getattr(at.info.options, "LEVEL", "")
            defended, describes = defend_encoded(ctx, encoded, at)
            got = attack(ctx, attacker, defended, corpus, vocab, defence=entry.name,
                         level=getattr(at.settings, option) if option else None,
                         describes=describes, canaries=canary_set)
            found = got.point
            update: dict[str, Any] = {
                "utility": relative_utility(found.tasks, clean_tasks),
                "utility_ci95": relative_interval(found.tasks_ci95, found.tasks, clean_tasks)}
            if ctx.spec.privacy.non_adaptive and defended.dim == encoded.dim:
                update["non_adaptive"] = leaked(ctx, attacker, clean.trained, defended, corpus,
                                                vocab)
            rows.append(got.point.model_copy(update=update))
    return rows


def matched_leakage(rows: list[PrivacyPoint], metric: str, target: float
                    ) -> dict[str, MatchedLeakage]:
    """Per defence, the level that leaks least among those keeping `target` of the clean
    utility (level None when none keeps it, or the spec has no downstream task)."""
    matched = {}
    for defence in dict.fromkeys(p.defence for p in rows if p.defence):
        kept = [p for p in rows if p.defence == defence and p.utility is not None
                and p.utility >= target and p.leakage[metric].value is not None]
        if not kept:
            matched[defence] = MatchedLeakage()
            continue
        best = min(kept, key=lambda p: p.leakage[metric].value)
        matched[defence] = MatchedLeakage(level=best.level, utility=best.utility,
                                          leakage=best.leakage[metric])
    return matched
