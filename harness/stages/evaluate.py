"""Stage 8: an encoder's downstream tasks, evaluated by the harness itself (each task plugin's
own procedure: SentEval's for the first-party tasks), once per encoder, task and seed, cached.

The tasks' seeds are `downstream.seed` (SentEval's default, 1111), not the run's, and the next
ones, as many as `downstream.seeds` (or the task's own `seeds:`) asks for; a task whose result
does not depend on the seed (`harness.protocols.is_seeded`) is evaluated once. Each seed's
result is cached on its own (a one-seed run shares the first), the sentences are encoded once
for all seeds, and the result is the first seed's with the spread over all
(`harness.protocols.over_seeds`). A task that evaluates several seeds in one call
(`harness.protocols.SeedBatched`: SentEval's, which train every seed's classifier fits
together) is asked once for all the seeds the cache lacks. What the scores are then compared
with, and which count, is the downstream analysis's (`harness.analyses.downstream`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from harness.errors import DataError, PluginError, plugin_call
from harness.protocols import (
    Encode,
    GeneratedTask,
    SeedBatched,
    TaskResult,
    is_seeded,
    over_seeds,
)
from harness.protocols.task import data_command
from harness.spec import encode_batch_size
from harness.stages.base import RunContext, file_digest
from harness.stages.encode import Encoded
from harness.util.cache import artifact_key

VERSION = 2
RESULT_FILE = "result.json"


def evaluate_tasks(ctx: RunContext, encodings: list[Encoded]) -> dict[str, list[TaskResult]]:
    """Return each encoder's results on the spec's downstream tasks, computing what the cache
    lacks."""
    results: dict[str, list[TaskResult]] = {}
    for component in ctx.spec.components("task"):
        started = time.perf_counter()
        task = ctx.build_once(component)
        data_dir, data_identity = task_data(ctx, task)
        seeds = ctx.spec.downstream.task_seeds(component, is_seeded(task))
        for encoded in encodings:
            parts = {"version": VERSION, "task": component.identity(),
                     "task_version": task.version, "config": ctx.spec.downstream.config,
                     "data": data_identity, "encoder": encoded.identity,
                     "normalise": _task_normalisation(ctx, encoded)}
            encode = _encode_once(ctx, encoded, parts["normalise"] is not None)
            results.setdefault(encoded.encoder, []).append(over_seeds(
                _evaluate(ctx, task, [{**parts, "seed": seed} for seed in seeds], data_dir,
                          encode, encoded.encoder)))
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


def _evaluate(ctx: RunContext, task: Any, keys: list[dict[str, Any]], data_dir: Path,
              encode: Encode, encoder: str) -> list[TaskResult]:
    """One task's results for one encoder at the seeds its cache keys' parts `keys` name, from
    the cache or evaluated now: a `SeedBatched` task evaluates every seed the cache lacks in one
    call, any other one seed per call."""
    plugin = keys[0]["task"]["plugin"]
    config = ctx.spec.downstream.config
    missing = [parts for parts in keys
               if not ctx.cache.exists("downstream", artifact_key("downstream", parts))]
    computed: dict[int, TaskResult] = {}
    if len(missing) > 1 and isinstance(task, SeedBatched):
        with plugin_call(plugin, f"task {task.name}: evaluate_seeds"):
            batch = task.evaluate_seeds(encode, data_dir, config=config,
                                        seeds=[parts["seed"] for parts in missing],
                                        device=ctx.device)
        if [result.seed for result in batch] != [parts["seed"] for parts in missing]:
            raise PluginError(plugin, f"task {task.name}: evaluate_seeds returned results for "
                                      f"seeds {[r.seed for r in batch]}, asked for "
                                      f"{[parts['seed'] for parts in missing]}")
        computed = {result.seed: result for result in batch}

    def cached(parts: dict[str, Any]) -> TaskResult:
        def build(directory: Path) -> dict[str, Any]:
            result = computed.get(parts["seed"])
            if result is None:
                with plugin_call(plugin, f"task {task.name}: evaluate"):
                    result = task.evaluate(encode, data_dir, config=config, seed=parts["seed"],
                                           device=ctx.device)
            (directory / RESULT_FILE).write_text(json.dumps(result.to_json()), encoding="utf-8")
            return {"score": result.score, "seconds": result.seconds}

        directory = ctx.cache.produce("downstream", parts, build,
                                      label=f"{task.name} {encoder} seed {parts['seed']}")
        return TaskResult.from_json(json.loads((directory / RESULT_FILE).read_text()))

    return [cached(parts) for parts in keys]


def _task_normalisation(ctx: RunContext, encoded: Encoded) -> dict[str, Any] | None:
    """How task text is normalised before `encoded` reads it: like the run's corpus for an
    encoder built from that corpus (its vocabulary, its fit), which never saw other text; not at
    all (None) for a pretrained one, which reads it as SentEval hands it to any encoder."""
    return None if encoded.pretrained else ctx.spec.corpus.normalise.model_dump()


def task_data(ctx: RunContext, task: Any) -> tuple[Path, Any]:
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
        command = data_command([task], "DIR")
        raise DataError(f"downstream task {task.name} reads its files from a data directory: "
                        "set `downstream.data_dir`"
                        + (f" (make one with `{command}`)" if command else ""))
    return data_dir, {str(path.relative_to(data_dir)): file_digest(path)
                      for path in task.files(data_dir)}
