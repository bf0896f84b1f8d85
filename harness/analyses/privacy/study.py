"""Leakage against utility: every studied encoder's vectors attacked clean and under each
defence of the spec at each level (the attacker adapts: it is trained on the defended training
vectors), with the downstream tasks on the same vectors, canaries, and each defence's leakage
at matched utility. The floor is the leakage of the control encoder whose vectors carry no
information (`random-gaussian`), undefended, and its attacker's canaries (`canary_floor`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.analyses.floor.gains import floor_encoder
from harness.analyses.privacy.attacks import AttackPlan, Surrogate
from harness.analyses.privacy.canaries import canary_set
from harness.analyses.privacy.canary_floor import floor_attacks, floor_canaries, floor_jobs
from harness.analyses.privacy.defend import defend_encoded
from harness.analyses.privacy.point import attack_point, leaked
from harness.analyses.privacy.results import (
    MatchedLeakage,
    Privacy,
    PrivacyPoint,
    PrivacyRecord,
    judged_by,
)
from harness.analyses.privacy.spec import privacy_settings, studied_defences
from harness.analyses.privacy.utility import Utility, clean_utility, task_score, utility
from harness.analyses.run import AnalysisRun
from harness.errors import HarnessError
from harness.protocols import AnalysisJob
from harness.spec import Component
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.encode import encode_corpus, remembering
from harness.stages.train import train_decoder_for
from harness.stages.vocab import Vocab

UTILITY = ("chance-corrected: per task, (score - chance) / (clean score - chance), the share of "
           "the clean vectors' margin over chance kept (1 = all of it, 0 = chance; chance the "
           "task's own: the majority-class rate of its test examples for an accuracy, 0 for a "
           "correlation), averaged over the tasks on which the clean vectors' 95% interval lies "
           "above chance; its 95% interval by Monte Carlo over the sampling distributions of "
           "both the defended and the clean score (harness.analyses.privacy.utility)")


def privacy_jobs(spec: Any, name: str) -> list[AnalysisJob]:
    """One job per studied encoder, named `name`: its attacker trained on its clean vectors
    and on each defence level's, scored, with the downstream tasks and canaries on each
    (`attack_encoder`), and the floor encoder's canaries when it is not studied
    (`floor_jobs`); none when the spec names no defence."""
    if not studied_defences(spec):
        return []
    attacker = _attacker(spec, privacy_settings(spec).attacker)
    levels = sum(len(entry.at_levels()) for entry in studied_defences(spec))
    encoders = [e.name for e in spec.components("encoder")]
    # The clean attacker is the encoder's own decoder (one artifact, trained by its job).
    return [AnalysisJob(analysis=name, encoder=encoder, trains=(attacker.name,) * levels,
                        what=f"{attacker.name} attacks {encoder}'s vectors clean and at "
                             f"{levels} defence levels")
            for encoder in spec.studied(encoders)] + floor_jobs(spec, name, attacker)


def privacy_job(ctx: RunContext, corpus: Corpus, vocab: Vocab, encoder_name: str
                ) -> PrivacyRecord:
    """An encoder's privacy job (`privacy_jobs`): a studied encoder's points
    (`attack_encoder`); the floor encoder's canaries (`floor_canaries`) and attacks
    (`floor_attacks`), whether or not it is studied."""
    spec = ctx.spec
    points = (attack_encoder(ctx, corpus, vocab, encoder_name)
              if spec.studied([encoder_name]) else None)
    if encoder_name != floor_encoder(spec):
        return PrivacyRecord(encoder=encoder_name, points=points)
    attacker = _attacker(spec, privacy_settings(spec).attacker)
    return PrivacyRecord(
        encoder=encoder_name, points=points,
        floor_canaries=floor_canaries(ctx, corpus, vocab, attacker),
        floor_attacks=floor_attacks(ctx, corpus, vocab, attacker,
                                    _plan(ctx, corpus, vocab, attacker, encoder_name)))


def attack_encoder(ctx: RunContext, corpus: Corpus, vocab: Vocab,
                   encoder_name: str) -> list[PrivacyPoint]:
    """The clean point, then each defence's levels, of one encoder: every attacker trained and
    scored."""
    spec = ctx.spec
    section = privacy_settings(spec)
    (encoder,) = [e for e in spec.components("encoder") if e.name == encoder_name]
    found = canary_set(spec, vocab.vocab) if section.canaries else None
    return _encoder_points(ctx, corpus, vocab, encoder, _attacker(spec, section.attacker),
                           found)


def privacy_study(run: AnalysisRun) -> Privacy | None:
    """The study, or None when the spec names no defence: built from the records the jobs
    returned (`privacy_job`), computing nothing."""
    spec = run.spec
    if not studied_defences(spec):
        return None
    section = privacy_settings(spec)
    attacker = _attacker(spec, section.attacker)
    if section.leakage not in [m.name for m in spec.metrics]:
        raise HarnessError(f"privacy.leakage: {section.leakage!r} is not among the spec's "
                           f"metrics ({', '.join(m.name for m in spec.metrics)})")
    records = run.records(PrivacyRecord)
    points = {r.encoder: r.points for r in records if r.points is not None}
    floor = floor_encoder(spec)
    floor_scores = next((r.metrics for r in run.runs
                         if r.encoder == floor and r.decoder == attacker.name), {})
    found = next((r for r in records if r.encoder == floor), None)
    floor_found = found.floor_canaries if found is not None else None
    return Privacy(attacker=attacker.name, leakage=section.leakage, utility=UTILITY,
                   matched_utility=section.matched_utility, canaries=section.canaries,
                   points=points,
                   matched={name: matched_leakage(rows, section.leakage,
                                                  section.matched_utility, section.compare_on)
                            for name, rows in points.items()},
                   floor_encoder=floor if floor_scores or floor_found else None,
                   floor=floor_scores, floor_canaries=floor_found,
                   floor_attacks=found.floor_attacks if found is not None else None,
                   compare_on=section.compare_on)


def _attacker(spec: Any, name: str | None) -> Component:
    if not spec.decoders:
        raise HarnessError("privacy.defences: the privacy analysis attacks with a decoder; the spec "
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
    """The clean point, then each defence's levels, of one encoder (whose model remembers
    what it encoded: every level asks for the tasks' sentences again)."""
    encoded = remembering(encode_corpus(ctx, encoder, corpus, vocab))
    plan = _plan(ctx, corpus, vocab, attacker, encoder.name)
    clean = attack_point(ctx, attacker, encoded, corpus, vocab, canaries=canary_set, plan=plan)
    clean_scores = {r.task: task_score(r) for r in clean.results}
    rows = [clean.point.model_copy(update=_utility_fields(clean_utility(clean_scores)))]
    for entry in studied_defences(ctx.spec):
        for at in entry.at_levels():
            option = getattr(at.info.options, "LEVEL", "")
            defended, summary = defend_encoded(ctx, encoded, at)
            got = attack_point(ctx, attacker, defended, corpus, vocab, defence=entry.name,
                               level=getattr(at.settings, option) if option else None,
                               describes=summary.describes, canaries=canary_set, plan=plan,
                               clean=encoded)
            scores = {r.task: task_score(r) for r in got.results}
            update: dict[str, Any] = {"budget": summary.budget,
                                      **_utility_fields(utility(scores, clean_scores))}
            if privacy_settings(ctx.spec).non_adaptive and defended.dim == encoded.dim:
                update["non_adaptive"] = leaked(ctx, attacker, clean.trained, defended, corpus,
                                                vocab, clean=encoded)
            rows.append(got.point.model_copy(update=update))
    return rows


def _utility_fields(found: Utility) -> dict[str, Any]:
    """A point's utility fields (`PrivacyPoint`) from `harness.analyses.privacy.utility`."""
    return {"utility": found.value, "utility_ci95": found.ci95, "tasks_utility": found.tasks,
            "utility_left_out": found.left_out}


def _plan(ctx: RunContext, corpus: Corpus, vocab: Vocab, attacker: Component,
          encoder: str) -> AttackPlan:
    """The attacks of `privacy.attacks` on `encoder`'s points, with its surrogates."""
    section = privacy_settings(ctx.spec)
    return AttackPlan(section.attacks, _surrogates(ctx, corpus, vocab, attacker, encoder),
                      section.compare_on)


def _surrogates(ctx: RunContext, corpus: Corpus, vocab: Vocab, attacker: Component,
                attacked: str) -> Callable[[str | None], Surrogate | None]:
    """The surrogate an attack asks for by name (None: the first other encoder under study):
    its clean vectors and the attacker's decoder trained on them (the pair's own, cached)."""
    encoders = {e.name: e for e in ctx.spec.components("encoder")}
    built: dict[str, Surrogate] = {}

    def surrogate(name: str | None) -> Surrogate | None:
        studied = ctx.spec.studied(list(encoders))
        chosen = name or next((e for e in studied if e != attacked), None)
        if chosen is None:
            return None
        if chosen not in encoders or chosen == attacked:
            raise HarnessError(f"privacy.attacks: surrogate {chosen!r} is not another encoder "
                               f"of the spec ({', '.join(e for e in encoders if e != attacked)})")
        if chosen not in built:
            encoded = encode_corpus(ctx, encoders[chosen], corpus, vocab)
            built[chosen] = Surrogate(encoded, train_decoder_for(ctx, attacker, encoded, corpus,
                                                                 vocab))
        return built[chosen]

    return surrogate


def matched_leakage(rows: list[PrivacyPoint], metric: str, target: float,
                    compare_on: str | None = None) -> dict[str, MatchedLeakage]:
    """Per defence, the level that leaks least among those keeping `target` of the clean
    utility, on the interval: the lower bound of its 95% utility interval reaches `target`
    (level None when none keeps it, or the spec has no downstream task); a point's leakage is
    the strongest attack's on `compare_on` where attacks ran (`judged_by`)."""
    matched = {}
    for defence in dict.fromkeys(p.defence for p in rows if p.defence):
        kept = [(p, score, value) for p in rows
                if p.defence == defence and p.utility_ci95 is not None
                and p.utility_ci95[0] is not None and p.utility_ci95[0] >= target
                and (score := judged_by(p, metric, compare_on)) is not None
                and (value := score.value) is not None]
        if not kept:
            matched[defence] = MatchedLeakage()
            continue
        best, score, _ = min(kept, key=lambda found: found[2])
        matched[defence] = MatchedLeakage(level=best.level, utility=best.utility,
                                          utility_ci95=best.utility_ci95,
                                          leakage=score)
    return matched
