"""An executor that runs each encoder's job in a pool of worker processes on this machine.

Each worker runs the harness's one job assembly (`run_encoder_job`) against the run's cache,
as a cluster worker would; then the jobs the analyses planned (`planned_jobs`,
`run_planned_job`), each once what it needs is done. The driver collects the outcomes in the
spec's encoder order, attaches the planned jobs' records (`with_records`) and adds their
timings and cache counts to the run's (`account`). All come from `harness.plugin`, with the
views of the run it is handed (`RunContextView`, `CorpusView`, `VocabView`).
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from harness.plugin import (
    CorpusView,
    Execution,
    Outcome,
    RunContextView,
    VocabView,
    account,
    planned_jobs,
    run_encoder_job,
    run_planned_job,
    with_records,
)


class ProcessesExecutor:
    """`workers` processes, each running one encoder's job at a time."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def device(self, requested: str) -> str:
        """"cpu" for the driver: each job resolves `requested` in its own process."""
        return "cpu"

    def run(self, ctx: RunContextView, corpus: CorpusView, vocab: VocabView) -> Execution:
        """Every encoder's job in a worker process (the corpus and vocabulary are in the cache
        already: the runner prepared them)."""
        names = [encoder.name for encoder in ctx.spec.components("encoder")]
        spawn = multiprocessing.get_context("spawn")  # no torch state forked into workers
        with ProcessPoolExecutor(self.workers, mp_context=spawn) as pool:
            futures = [pool.submit(run_encoder_job, ctx.spec, name, ctx.cache.root)
                       for name in names]
            outcomes = [future.result() for future in futures]
            planned = self._planned(pool, ctx)
        for outcome in outcomes:
            account(ctx, outcome)
        for found in planned:
            account(ctx, found)
        return Execution(with_records(outcomes, planned))

    def _planned(self, pool: ProcessPoolExecutor, ctx: RunContextView) -> list[Outcome]:
        """Every planned job in the pool, in rounds (those whose needs are done, at once);
        their outcomes in the plan's order."""
        done: dict[str, Outcome] = {}
        jobs = remaining = planned_jobs(ctx.spec)
        while remaining:
            ready = [job for job in remaining if all(need in done or need not in
                                                     {j.name for j in remaining}
                                                     for need in job.needs)]
            futures = {job.name: pool.submit(run_planned_job, ctx.spec, job.name,
                                             ctx.cache.root) for job in ready}
            done.update({name: future.result() for name, future in futures.items()})
            remaining = [job for job in remaining if job.name not in done]
        return [done[job.name] for job in jobs]
