"""An executor that runs each encoder's job in a pool of worker processes on this machine.

Each worker runs the harness's one job assembly (`run_encoder_job`) against the run's cache,
as a cluster worker would; the driver collects the outcomes in the spec's encoder order and
adds their timings and cache counts to the run's (`account`). Both come from `harness.plugin`,
with the views of the run it is handed (`RunContextView`, `CorpusView`, `VocabView`).
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from harness.plugin import (
    CorpusView,
    Execution,
    RunContextView,
    VocabView,
    account,
    run_encoder_job,
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
        for outcome in outcomes:
            account(ctx, outcome)
        return Execution(outcomes)
