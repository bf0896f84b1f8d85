"""Stage 8: an encoder's downstream tasks, evaluated by the harness itself (each task plugin's
own procedure: SentEval's for the first-party tasks), once per encoder, task and seed, cached.

The tasks' seeds are `downstream.seed` (SentEval's default, 1111), not the run's, and the next
ones, as many as `downstream.seeds` (or the task's own `seeds:`) asks for; a task whose result
does not depend on the seed (`harness.protocols.is_seeded`) is evaluated once. Each seed's
result is cached on its own (a one-seed run shares the first), the sentences are encoded once
for all seeds, and the result is the first seed's with the spread over all
(`harness.protocols.over_seeds`). What the scores are then compared with, and which count, is
the downstream analysis's (`harness.analyses.downstream`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from harness.errors import DataError, plugin_call
from harness.protocols import Encode, GeneratedTask, TaskResult, is_seeded, over_seeds
from harness.spec import encode_batch_size
from harness.stages.base import RunContext, file_digest
from harness.stages.encode import Encoded

VERSION = 2
RESULT_FILE = "result.json"


def evaluate_tasks(ctx: RunContext, encodings: list[Encoded]) -> dict[str, list[TaskResult]]:
    """Return each encoder's results on the spec's downstream tasks, computing what the cache
    lacks."""
    results: dict[str, list[TaskResult]] = {}
    for component in ctx.spec.components("task"):
        started = time.perf_counter()
        task = ctx.build_once(component)
        data_dir, data_identity = _task_data(ctx, task)
        seeds = ctx.spec.downstream.task_seeds(component, is_seeded(task))
        for encoded in encodings:
            parts = {"version": VERSION, "task": component.identity(),
                     "task_version": task.version, "config": ctx.spec.downstream.config,
                     "data": data_identity, "encoder": encoded.identity,
                     "normalise": _task_normalisation(ctx, encoded)}
            encode = _encode_once(ctx, encoded, parts["normalise"] is not None)
            results.setdefault(encoded.encoder, []).append(over_seeds(
                [_evaluate(ctx, task, {**parts, "seed": seed}, data_dir, encode, encoded.encoder)
                 for seed in seeds]))
        ctx.add_time("downstream", time.perf_counter() - started)
    return results


def _encode_once(ctx: RunContext, encoded: Encoded, normalised: bool) -> Encode:
    """The `encode` handed to a task: `encoded`'s vectors of the task's text (normalised like
    the run's corpus when `normalised`), computed once for all of a task's seeds (a task asks
    for the same sentences at each)."""
    from harness.text.reading import normalise

    options = ctx.spec.corpus.normalise
    computed: dict[tuple[str, ...], Any] = {}

    def encode(sentences: list[str]) -> Any:
        key = tuple(sentences)
        if key not in computed:
            text = [normalise(s, options) for s in sentences] if normalised else sentences
            computed.clear()  # a task asks for one list: keep only the latest
            computed[key] = encoded.encode(text, encode_batch_size(ctx.spec))
        return computed[key]

    return encode


def _evaluate(ctx: RunContext, task: Any, parts: dict[str, Any], data_dir: Path,
              encode: Encode, encoder: str) -> TaskResult:
    """One task's result for one encoder at the seed `parts` names, from the cache or evaluated
    now."""

    def build(directory: Path) -> dict[str, Any]:
        with plugin_call(parts["task"]["plugin"], f"task {task.name}: evaluate"):
            result = task.evaluate(encode, data_dir, config=ctx.spec.downstream.config,
                                   seed=parts["seed"], device=ctx.device)
        (directory / RESULT_FILE).write_text(json.dumps(result.to_json()), encoding="utf-8")
        return {"score": result.score, "seconds": result.seconds}

    directory = ctx.cache.produce("downstream", parts, build,
                                  label=f"{task.name} {encoder} seed {parts['seed']}")
    return TaskResult.from_json(json.loads((directory / RESULT_FILE).read_text()))


def _task_normalisation(ctx: RunContext, encoded: Encoded) -> dict[str, Any] | None:
    """How task text is normalised before `encoded` reads it: like the run's corpus for an
    encoder built from that corpus (its vocabulary, its fit), which never saw other text; not at
    all (None) for a pretrained one, which reads it as SentEval hands it to any encoder."""
    return None if encoded.pretrained else ctx.spec.corpus.normalise.model_dump()


def _task_data(ctx: RunContext, task: Any) -> tuple[Path, Any]:
    """The task's data directory and what identifies its content, read once per run (every
    encoder's job asks for it)."""
    key = f"task-data:{task.name}"
    if key not in ctx.built:
        ctx.built[key] = _read_task_data(ctx, task)
    return ctx.built[key]


def _read_task_data(ctx: RunContext, task: Any) -> tuple[Path, Any]:
    """The task's data directory and the digests of its files, generating synthetic data."""
    if isinstance(task, GeneratedTask):
        key = task.data_key()
        directory = ctx.cache.produce("task-data", {"task": task.name, "data": key},
                                      lambda d: task.generate(d), label=task.name)
        return directory, key
    data_dir = ctx.spec.downstream.data_dir
    if data_dir is None:
        raise DataError(f"downstream task {task.name} reads SentEval data: set "
                        "`downstream.data_dir` (make it with `harness data senteval --dir DIR`)")
    return data_dir, {str(path.relative_to(data_dir)): file_digest(path)
                      for path in task.files(data_dir)}
