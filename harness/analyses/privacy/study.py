"""Leakage against utility: every studied encoder's vectors attacked clean and under each
defence of the spec at each level (the attacker adapts: it is trained on the defended training
vectors), with the downstream tasks on the same vectors, canaries, and each defence's leakage
at matched utility. The floor is the leakage of the control encoder whose vectors carry no
information (`random-gaussian`), undefended, and its attacker's canaries (`canary_floor`)."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from harness.analyses.floor.gains import floor_encoder
from harness.analyses.privacy.attacks import AttackPlan, Surrogate, surrogate_name, surrogate_needs
from harness.analyses.privacy.canaries import drawn_canaries
from harness.analyses.privacy.canary_floor import FLOOR, floor_attacks, floor_canaries, floor_jobs
from harness.analyses.privacy.defend import defend_encoded
from harness.analyses.privacy.point import Attacked, attack_point, leaked
from harness.analyses.privacy.results import (
    MatchedLeakage,
    Privacy,
    PrivacyPoint,
    PrivacyRecord,
)
from harness.analyses.privacy.spec import privacy_settings, studied_defences, text_measure
from harness.analyses.privacy.utility import Utility, clean_utility, task_score, utility
from harness.analyses.run import AnalysisRun
from harness.errors import HarnessError
from harness.protocols import DecoderView, Job, SpecView
from harness.results.records import MetricScore
from harness.spec import Component
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.encode import Encoded, encode_corpus
from harness.stages.train import train_decoder_for
from harness.stages.vocab import Vocab

D = TypeVar("D", bound=DecoderView)

UTILITY = ("chance-corrected: per task, (score - chance) / (clean score - chance), the share of "
           "the clean vectors' margin over chance kept (1 = all of it, 0 = chance; chance the "
           "task's own: the majority-class rate of its test examples for an accuracy, 0 for a "
           "correlation), averaged over the tasks on which the clean vectors' 95% interval lies "
           "above chance; its 95% interval by Monte Carlo over the sampling distributions of "
           "both the defended and the clean score (harness.analyses.privacy.utility)")


CLEAN = "clean"
"""The part of a studied encoder's job that attacks its clean vectors (`Job.part`)."""


def privacy_jobs(spec: SpecView, name: str) -> list[Job]:
    """The jobs, named `name`, of every studied encoder: its attacker on its clean vectors
    (part `clean`) and on each defence level's (part `DEFENCE@INDEX`), each scored, with the
    downstream tasks and canaries on the same vectors, and the floor encoder's canaries and
    attacks (`floor_jobs`); none when the spec names no defence. The levels need nothing of
    each other, so an executor may run them at once; a job whose attacks read a surrogate
    encoder's vectors and decoder needs that encoder's job (`surrogate_needs`)."""
    if not studied_defences(spec):
        return []
    section = privacy_settings(spec)
    attacker = _attacker(spec.decoders, section.attacker)
    jobs, cleans = [], {}
    for encoder in spec.studied([e.name for e in spec.components("encoder")]):
        needs = surrogate_needs(spec, encoder)
        # The clean attacker is the encoder's own decoder where its job trains one.
        clean = Job(analysis=name, encoder=encoder, part=CLEAN,
                    trains=() if attacker.trains_for(encoder) else (attacker.name,),
                    needs=needs, what=f"{attacker.name} attacks {encoder}'s clean vectors")
        # The non-adaptive attacker is the clean one: trained by the encoder's job or this.
        after = ((clean.name,) if section.non_adaptive and not attacker.trains_for(encoder)
                 else ())
        jobs.append(clean)
        cleans[encoder] = clean
        jobs += [Job(analysis=name, encoder=encoder, part=part, trains=(attacker.name,),
                     needs=needs + after,
                     what=f"{attacker.name} attacks {encoder}'s vectors under {label}")
                 for part, (_, label) in defence_levels(spec).items()]
    return jobs + floor_jobs(spec, name, attacker, cleans.get(floor_encoder(spec) or ""))


def defence_levels(spec: SpecView) -> dict[str, tuple[Any, str]]:
    """Job part (`DEFENCE@INDEX`, the level's place among its defence's) -> the defence's
    resolved entry at that level, and the level in words ("laplace at epsilon 10")."""
    found = {}
    for entry in studied_defences(spec):
        for index, at in enumerate(entry.at_levels()):
            option = getattr(at.info.options, "LEVEL", "")
            label = (f"{entry.name} at {option} {getattr(at.settings, option)}" if option
                     else entry.name)
            found[f"{entry.name}@{index}"] = (at, label)
    return found


def privacy_job(ctx: RunContext, corpus: Corpus, vocab: Vocab, job: Job,
                encoded: Encoded) -> PrivacyRecord:
    """One privacy job (`privacy_jobs`): the floor encoder's canaries (`floor_canaries`) and
    attacks (`floor_attacks`); else one point of a studied encoder, `encoded` its clean
    vectors, with the downstream scores its utility is computed from (in `privacy_study`)."""
    spec = ctx.spec
    section = privacy_settings(spec)
    attacker = _attacker(spec.decoders, section.attacker)
    plan = _plan(ctx, corpus, vocab, attacker, job.encoder)
    canaries = drawn_canaries(ctx, corpus, vocab.vocab, vocab.key) if section.canaries else None
    if job.part == FLOOR:
        found = floor_attacks(ctx, corpus, vocab, attacker, plan, canaries or ())
        return PrivacyRecord(encoder=job.encoder, part=job.part,
                             floor_canaries=floor_canaries(ctx, corpus, vocab, attacker, found),
                             floor_attacks=found.leakage if found is not None else None,
                             outputs=_outputs(found.outputs if found is not None else {}))
    if job.part == CLEAN:
        got = attack_point(ctx, attacker, encoded, corpus, vocab, canaries=canaries, plan=plan)
        return _record(job, got.point, got)
    at, _ = defence_levels(spec)[job.part]
    option = getattr(at.info.options, "LEVEL", "")
    defended, summary = defend_encoded(ctx, encoded, at)
    got = attack_point(ctx, attacker, defended, corpus, vocab, defence=at.name,
                       level=getattr(at.settings, option) if option else None,
                       describes=summary.describes, canaries=canaries, plan=plan,
                       clean=encoded)
    update: dict[str, Any] = {"budget": summary.budget}
    if section.non_adaptive and defended.dim == encoded.dim:
        trained = train_decoder_for(ctx, attacker, encoded, corpus, vocab)
        update["non_adaptive"] = leaked(ctx, attacker, trained, defended, corpus, vocab,
                                        clean=encoded)
    return _record(job, got.point.model_copy(update=update), got)


def _record(job: Job, point: PrivacyPoint, got: Attacked) -> PrivacyRecord:
    return PrivacyRecord(encoder=job.encoder, part=job.part, point=point,
                         scores={r.task: task_score(r) for r in got.results},
                         outputs=_outputs(got.outputs))


def _outputs(found: Mapping[str, Path]) -> dict[str, str]:
    return {label: str(path) for label, path in found.items()}


ATTACKS_FOLDER = "attacks"
"""Where in the run directory each attack's output lies: attacks/ENCODER/PART/LABEL.jsonl."""


def write_attack_outputs(out: Path, records: Sequence[PrivacyRecord]) -> None:
    """Copy every attack's output at every point from the cache into the run directory:
    `attacks/ENCODER/PART/LABEL.jsonl` (PART "clean", a defence level such as "gaussian@0",
    or "floor"), JSON lines of `index`, `reference` and `hypothesis`, as `samples/` holds the
    decoders'."""
    for record in records:
        for label, source in record.outputs.items():
            target = out / ATTACKS_FOLDER / record.encoder / record.part / f"{label}.jsonl"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


def privacy_study(run: AnalysisRun) -> Privacy | None:
    """The study, or None when the spec names no defence: built from the records the jobs
    returned (`privacy_job`), computing nothing."""
    spec = run.spec
    if not studied_defences(spec):
        return None
    section = privacy_settings(spec)
    attacker = _attacker(spec.decoders, section.attacker)
    if section.leakage not in [m.name for m in spec.metrics]:
        raise HarnessError(f"privacy.leakage: {section.leakage!r} is not among the spec's "
                           f"metrics ({', '.join(m.name for m in spec.metrics)})")
    text_on = text_measure(spec)
    records = run.records(PrivacyRecord)
    write_attack_outputs(run.out, records)
    points = _points(records)
    floor = floor_encoder(spec)
    floor_scores = next((r.metrics for r in run.runs
                         if r.encoder == floor and r.decoder == attacker.name), {})
    found = next((r for r in records if r.part == FLOOR), None)
    floor_found = found.floor_canaries if found is not None else None
    return Privacy(attacker=attacker.name, leakage=section.leakage, utility=UTILITY,
                   matched_utility=section.matched_utility, canaries=section.canaries,
                   points=points,
                   matched={name: matched_leakage(rows, section.leakage,
                                                  section.matched_utility, section.compare_on)
                            for name, rows in points.items()},
                   matched_text=({name: matched_leakage(rows, section.leakage,
                                                        section.matched_utility,
                                                        text_on=text_on)
                                  for name, rows in points.items()} if text_on else {}),
                   text_on=text_on,
                   floor_encoder=floor if floor_scores or floor_found else None,
                   floor=floor_scores, floor_canaries=floor_found,
                   floor_attacks=found.floor_attacks if found is not None else None,
                   compare_on=section.compare_on)


def _attacker(decoders: Sequence[D], name: str | None) -> D:
    """The decoder `privacy.attacker` names among the spec's `decoders` (the first if none)."""
    if not decoders:
        raise HarnessError("privacy.defences: the privacy analysis attacks with a decoder; the spec "
                           "has none (add `decoders:`)")
    if name is None:
        return decoders[0]
    found = [d for d in decoders if d.name == name]
    if not found:
        raise HarnessError(f"privacy.attacker: {name!r} is not among the spec's decoders "
                           f"({', '.join(d.name for d in decoders)})")
    return found[0]


def _points(records: list[PrivacyRecord]) -> dict[str, list[PrivacyPoint]]:
    """Encoder -> its points (clean first, then each defence level), each with its utility
    against the clean vectors' (`harness.analyses.privacy.utility`), from its jobs' records."""
    points: dict[str, list[PrivacyPoint]] = {}
    clean = {r.encoder: r.scores for r in records if r.part == CLEAN}
    for record in records:
        if record.point is None:
            continue
        found = (clean_utility(record.scores) if record.part == CLEAN
                 else utility(record.scores, clean[record.encoder]))
        points.setdefault(record.encoder, []).append(
            record.point.model_copy(update=_utility_fields(found)))
    return points


def _utility_fields(found: Utility) -> dict[str, Any]:
    """A point's utility fields (`PrivacyPoint`) from `harness.analyses.privacy.utility`."""
    return {"utility": found.value, "utility_ci95": found.ci95, "tasks_utility": found.tasks,
            "utility_left_out": found.left_out}


def _plan(ctx: RunContext, corpus: Corpus, vocab: Vocab, attacker: Component,
          encoder: str) -> AttackPlan:
    """The attacks of `privacy.attacks` on `encoder`'s points, with its surrogates."""
    section = privacy_settings(ctx.spec)
    return AttackPlan(section.attacks, _surrogates(ctx, corpus, vocab, attacker, encoder),
                      section.compare_on, text_measure(ctx.spec))


def _surrogates(ctx: RunContext, corpus: Corpus, vocab: Vocab, attacker: Component,
                attacked: str) -> Callable[[str | None], Surrogate | None]:
    """The surrogate an attack asks for by name (None: the first other encoder under study,
    `surrogate_name`): its clean vectors and the attacker's decoder trained on them (the
    pair's own, left in the cache by that encoder's job, which the job needs)."""
    encoders = {e.name: e for e in ctx.spec.components("encoder")}
    built: dict[str, Surrogate] = {}

    def surrogate(name: str | None) -> Surrogate | None:
        chosen = surrogate_name(ctx.spec, attacked, name)
        if chosen is None:
            return None
        if chosen not in built:
            encoded = encode_corpus(ctx, encoders[chosen], corpus, vocab)
            built[chosen] = Surrogate(encoded, train_decoder_for(ctx, attacker, encoded, corpus,
                                                                 vocab))
        return built[chosen]

    return surrogate


def matched_leakage(rows: list[PrivacyPoint], metric: str, target: float,
                    compare_on: str | None = None, *, text_on: str | None = None
                    ) -> dict[str, MatchedLeakage]:
    """Per defence, the level that leaks least among those keeping `target` of the clean
    utility, on the interval: the lower bound of its 95% utility interval reaches `target`
    (level None when none keeps it, or the spec has no downstream task). A point's leakage is
    the strongest attack's on `compare_on` where attacks ran (`judged_by`: word leakage), else
    the decoder's `metric`; with `text_on`, the strongest sentence-writing attack's on it
    (`strongest_text`: text recovery). Each level found carries that attack and its score on
    the clean vectors (`rows[0]`)."""
    def judged(point: PrivacyPoint) -> tuple[str | None, MetricScore | None]:
        if text_on is not None:
            label = point.strongest_text
            found = (point.attacks or {}).get(label or "")
            return label, found.leakage.get(text_on) if found is not None else None
        if point.strongest and point.attacks and compare_on:
            return point.strongest, point.attacks[point.strongest].leakage.get(compare_on)
        return None, point.leakage.get(metric)

    def on_clean(label: str | None) -> MetricScore | None:
        clean = rows[0] if rows and not rows[0].defence else None
        if clean is None:
            return None
        if label is None:
            return clean.leakage.get(metric)
        found = (clean.attacks or {}).get(label)
        return found.leakage.get(text_on or compare_on or metric) if found is not None else None

    matched = {}
    for defence in dict.fromkeys(p.defence for p in rows if p.defence):
        kept = [(p, label, score, value) for p in rows
                if p.defence == defence and p.utility_ci95 is not None
                and p.utility_ci95[0] is not None and p.utility_ci95[0] >= target
                for label, score in [judged(p)]
                if score is not None and (value := score.value) is not None]
        if not kept:
            matched[defence] = MatchedLeakage()
            continue
        best, label, score, _ = min(kept, key=lambda found: found[3])
        matched[defence] = MatchedLeakage(level=best.level, utility=best.utility,
                                          utility_ci95=best.utility_ci95, leakage=score,
                                          attack=label, clean=on_clean(label))
    return matched
