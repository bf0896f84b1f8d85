"""The attack on one encoder's vectors, clean or defended: the attacker (a decoder of the
spec) trained on those vectors, its output on the test split scored by every metric of the
spec, the downstream tasks run on the same vectors, and the canaries encoded, defended and
decoded. Every step is a cached artifact of the stages it reuses (train, generate, score,
evaluate), so a rerun decodes nothing twice."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.analyses.privacy.canaries import Canary, recovery_counts
from harness.analyses.privacy.results import EntityRecovery, PrivacyPoint
from harness.protocols import TaskResult
from harness.results.records import MetricScore
from harness.spec import Component, encode_batch_size
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.encode import Encoded
from harness.stages.evaluate import evaluate_tasks
from harness.stages.generate import decode, generate_samples, load_trained_decoder
from harness.stages.likelihood import Decoding
from harness.stages.score import scored
from harness.stages.train import TrainedDecoder, train_decoder_for
from harness.stages.vocab import Vocab
from harness.stats.intervals import proportion_interval

VERSION = 1
HYPOTHESES_FILE = "hypotheses.json"


@dataclass(frozen=True)
class Attacked:
    """One attack: the point recorded and the trained attacker."""

    point: PrivacyPoint
    trained: TrainedDecoder


def attack(ctx: RunContext, attacker: Component, encoded: Encoded, corpus: Corpus, vocab: Vocab,
           *, defence: str = "", level: Any = None, describes: str = "",
           canaries: list[Canary] | None = None) -> Attacked:
    """The attacker trained on `encoded` and what it and the downstream tasks make of it."""
    trained = train_decoder_for(ctx, attacker, encoded, corpus, vocab)
    leakage = leaked(ctx, attacker, trained, encoded, corpus, vocab)
    tasks = (evaluate_tasks(ctx, [encoded]).get(encoded.encoder, [])
             if ctx.spec.downstream.tasks else [])
    recovery = (canary_recovery(ctx, attacker, trained, encoded, vocab, canaries)
                if canaries else None)
    point = PrivacyPoint(defence=defence, level=level, describes=describes, dim=encoded.dim,
                         leakage=leakage, tasks={r.task: r.score for r in tasks},
                         tasks_ci95={r.task: found for r in tasks
                                     if (found := task_interval(r)) is not None},
                         canaries=recovery)
    return Attacked(point=point, trained=trained)


def leaked(ctx: RunContext, attacker: Component, trained: TrainedDecoder, encoded: Encoded,
           corpus: Corpus, vocab: Vocab) -> dict[str, MetricScore]:
    """Every metric of the spec on what `trained` regenerates from `encoded`'s test vectors."""
    generated = generate_samples(ctx, attacker, trained, encoded, corpus, vocab)
    decoding = Decoding(attacker, trained, encoded, corpus, vocab)
    return {metric.name: scored(ctx, metric, generated, encoded, decoding)[0]
            for metric in ctx.spec.metrics}


def canary_recovery(ctx: RunContext, attacker: Component, trained: TrainedDecoder,
                    encoded: Encoded, vocab: Vocab, canaries: list[Canary]
                    ) -> dict[str, EntityRecovery]:
    """Entity type -> how much of the canaries' entities the attacker's output recovers."""
    sentences = [canary.sentence for canary in canaries]
    parts = {"version": VERSION, "trained": trained.key, "encoded": encoded.identity,
             "sentences": sentences, "generation": ctx.spec.generation.model_dump()}

    def build(directory: Path) -> dict[str, Any]:
        model = load_trained_decoder(ctx, attacker, trained, encoded, vocab)
        vectors = encoded.encode(sentences, batch_size=encode_batch_size(ctx.spec))
        hypotheses = [vocab.vocab.decode(h.ids) for h in
                      decode(model, vectors, ctx.spec.generation, vocab, ctx.device)]
        (directory / HYPOTHESES_FILE).write_text(json.dumps(hypotheses, ensure_ascii=False),
                                                 encoding="utf-8")
        return {"canaries": len(sentences)}

    directory = ctx.cache.produce("canaries", parts, build,
                                  label=f"{encoded.encoder} -> {attacker.name} canaries")
    hypotheses = json.loads((directory / HYPOTHESES_FILE).read_text(encoding="utf-8"))
    return {kind: entity_recovery(n, exact, partial)
            for kind, (n, exact, partial) in recovery_counts(canaries, hypotheses).items()}


def entity_recovery(n: int, exact: int, partial: int) -> EntityRecovery:
    """Recovery rates in percent with their exact Clopper-Pearson intervals."""
    def percent(k: int) -> tuple[float | None, tuple[float | None, float | None]]:
        found = proportion_interval(k, n)
        return 100 * found.value, (100 * found.low, 100 * found.high)

    (e, e_ci), (p, p_ci) = percent(exact), percent(partial)
    return EntityRecovery(n=n, exact=e, exact_ci95=e_ci, partial=p, partial_ci95=p_ci)


def relative_utility(tasks: dict[str, float], clean: dict[str, float]) -> float | None:
    """The mean over tasks of the score relative to the clean vectors' score (1 = no loss);
    None without tasks both have."""
    shared = [task for task in tasks if clean.get(task)]
    if not shared:
        return None
    return sum(tasks[task] / clean[task] for task in shared) / len(shared)


def task_interval(result: TaskResult) -> tuple[float, float] | None:
    """An accuracy's exact 95% interval over the task's test examples (Clopper & Pearson), in
    percent, as the task reports accuracy; None for another metric (a correlation)."""
    if result.metric != "acc" or not result.n_test:
        return None
    found = proportion_interval(round(result.score / 100 * result.n_test), result.n_test)
    return 100 * found.low, 100 * found.high


def relative_interval(intervals: dict[str, tuple[float, float]], tasks: dict[str, float],
                      clean: dict[str, float]) -> tuple[float, float] | None:
    """The utility's interval: the mean over tasks of each task's interval relative to the
    clean score, the clean scores held fixed; None unless every task has an interval."""
    shared = [task for task in tasks if clean.get(task)]
    if not shared or any(task not in intervals for task in shared):
        return None
    return (sum(intervals[t][0] / clean[t] for t in shared) / len(shared),
            sum(intervals[t][1] / clean[t] for t in shared) / len(shared))
