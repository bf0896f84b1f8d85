"""The privacy analysis: how much text an attacker reads back from every encoder's vectors,
clean and under each defence of `privacy.defences`, against what the vectors are still
good for (the downstream tasks), with canaries and each defence's leakage at matched utility
(docs/privacy.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.analyses.privacy.report import privacy_figures, privacy_sections
from harness.analyses.privacy.results import PrivacyRecord
from harness.analyses.privacy.study import privacy_job, privacy_jobs, privacy_study
from harness.analyses.run import AnalysisRun
from harness.executors.toolkit import encode, resolved
from harness.protocols import Job, JobInputs, SpecView
from harness.report.elements import Section
from harness.results.model import RunResults
from harness.stages.encode import Encoded, remembering


class PrivacyAnalysis:
    """Fills `privacy` (`Privacy`), or nothing when the spec names no defence. Its attackers
    train in jobs of their own, one per encoder and point (`jobs`, `run_job`), so they reach
    the executor, and `run` builds the study from the records the jobs return."""

    NAME = "privacy"

    def __init__(self) -> None:
        # Encoder -> its clean vectors, whose model remembers what it encoded: the jobs run in
        # one process (the levels of an encoder) ask it for the tasks' sentences once.
        self._encoded: dict[str, Encoded] = {}

    def jobs(self, spec: SpecView) -> list[Job]:
        return privacy_jobs(spec, self.NAME)

    def run_job(self, job: Job, work: JobInputs) -> PrivacyRecord:
        ctx, corpus, vocab = resolved(work)
        if job.encoder not in self._encoded:
            self._encoded[job.encoder] = remembering(encode(work, job.encoder))
        return privacy_job(ctx, corpus, vocab, job, self._encoded[job.encoder])

    def run(self, run: AnalysisRun) -> Mapping[str, Any]:
        return {"privacy": privacy_study(run)}

    def sections(self, results: RunResults, figures: Mapping[str, bytes]) -> list[Section]:
        return privacy_sections(results, figures)

    def figures(self, results: RunResults) -> dict[str, bytes]:
        return privacy_figures(results)
