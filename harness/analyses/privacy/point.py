"""One privacy point, an encoder's vectors clean or at one defence level, attacked: the attacker
(a decoder of the spec) trained on those vectors, its output on the test split scored by every metric of the
spec, the downstream tasks run on the same vectors, and the canaries encoded, defended and
decoded. Every step is a cached artifact of the stages it reuses (train, generate, score,
evaluate), so a rerun decodes nothing twice."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.analyses.privacy.attacks import AttackPlan, Target, run_attacks, strongest
from harness.analyses.privacy.canaries import Canary
from harness.analyses.privacy.canary_recovery import canary_recovery
from harness.analyses.privacy.results import PrivacyPoint
from harness.analyses.privacy.utility import is_proportion, score_interval, task_score
from harness.protocols import TaskResult, chance_level
from harness.results.records import MetricScore
from harness.spec import Component
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.encode import Encoded
from harness.stages.evaluate import evaluate_tasks
from harness.stages.generate import generate_samples
from harness.stages.likelihood import Decoding
from harness.stages.score import scored
from harness.stages.train import TrainedDecoder, train_decoder_for
from harness.stages.vocab import Vocab


@dataclass(frozen=True)
class Attacked:
    """One attack: the point recorded, the trained attacker and the downstream tasks' results
    on the same vectors (what utility is computed from: `harness.analyses.privacy.utility`)."""

    point: PrivacyPoint
    trained: TrainedDecoder
    results: tuple[TaskResult, ...] = ()
    outputs: Mapping[str, Path] = field(default_factory=dict)  # attack label -> its output


def attack_point(ctx: RunContext, attacker: Component, encoded: Encoded, corpus: Corpus,
                 vocab: Vocab, *, defence: str = "", level: Any = None, describes: str = "",
                 canaries: list[Canary] | None = None, plan: AttackPlan | None = None,
                 clean: Encoded | None = None) -> Attacked:
    """The attacker trained on `encoded` and what it, every attack of `plan` and the downstream
    tasks make of it; `clean`, the encoder's own vectors of a defended `encoded`, is what
    encoder-aware metrics compare against (`leaked`)."""
    trained = train_decoder_for(ctx, attacker, encoded, corpus, vocab)
    leakage = leaked(ctx, attacker, trained, encoded, corpus, vocab, clean=clean)
    where = encoded.encoder + (f" under {describes or defence}" if defence else " (clean)")
    ran = (run_attacks(ctx, corpus, vocab, Target(encoded, attacker, trained, where), plan,
                       canaries or ())
           if plan is not None and plan.entries else None)
    attacks = ran.leakage if ran is not None else None
    tasks = (evaluate_tasks(ctx, [encoded]).get(encoded.encoder, [])
             if ctx.spec.downstream.tasks else [])
    recovery = (canary_recovery(ctx, attacker, trained, encoded, vocab, canaries,
                                ran.ranked if ran is not None else None)
                if canaries else None)
    point = PrivacyPoint(defence=defence, level=level, describes=describes, dim=encoded.dim,
                         leakage=leakage, tasks={r.task: r.score for r in tasks},
                         tasks_ci95={r.task: found for r in tasks
                                     if (found := task_interval(r)) is not None},
                         tasks_chance={r.task: level for r in tasks
                                       if (level := chance_level(r)) is not None},
                         canaries=recovery, attacks=attacks,
                         strongest=(strongest(attacks, plan.compare_on)
                                    if attacks and plan is not None else None),
                         strongest_text=(strongest(attacks, plan.text_on, sentences=True)
                                         if attacks and plan is not None and plan.text_on
                                         else None))
    return Attacked(point=point, trained=trained, results=tuple(tasks),
                    outputs=ran.outputs if ran is not None else {})


def leaked(ctx: RunContext, attacker: Component, trained: TrainedDecoder, encoded: Encoded,
           corpus: Corpus, vocab: Vocab, *, clean: Encoded | None = None
           ) -> dict[str, MetricScore]:
    """Every metric of the spec on what `trained` regenerates from `encoded`'s test vectors.

    A metric that re-encodes the output (`needs` "encoder": cosine) compares the output's clean
    encoding with the clean test vector: it is handed `clean` (the encoder's own vectors, of
    which `encoded` is a defended copy; default `encoded` itself), so an exact regeneration
    scores as it does undefended, whatever noise the defence adds. A metric that needs the
    decoder reads the vectors the attacker read (`encoded`)."""
    generated = generate_samples(ctx, attacker, trained, encoded, corpus, vocab)
    decoding = Decoding(attacker, trained, encoded, corpus, vocab)
    return {metric.name: scored(ctx, metric, generated, clean or encoded, decoding)[0]
            for metric in ctx.spec.metrics}


def task_interval(result: TaskResult) -> tuple[float, float] | None:
    """A proportion's exact 95% interval over the task's test examples (Clopper & Pearson), in
    percent, as the task reports it: an accuracy (`acc`) over its test examples, a recall@k
    (`recall@1`, ...: MRPC-retrieval) over its queries; None for another metric (a
    correlation)."""
    if not is_proportion(result.metric):
        return None
    return score_interval(task_score(result))

