"""The probes analysis: analogies, interpolation and noise robustness decoded by every trained
pair (Kerscher & Eger 2020, section 4; `probes:` section of the spec); each pair's analogy items
are written under the run directory's probes/."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.analyses.probes.probing import Probed, probe_jobs, run_probes, write_probe_items
from harness.analyses.probes.report import probe_examples_section, probe_figures, probes_section
from harness.analyses.run import AnalysisRun
from harness.executors.toolkit import resolved
from harness.protocols import Job, JobInputs, SpecView
from harness.report.elements import Section
from harness.results.model import RunResults


class ProbesAnalysis:
    """Fills `probes` (one `PairProbes` per pair): each encoder's job decodes its pairs'
    probes (`jobs`, `run_job`) and returns them, and `run` reads those records."""

    NAME = "probes"

    def jobs(self, spec: SpecView) -> list[Job]:
        return probe_jobs(spec, self.NAME)

    def run_job(self, job: Job, work: JobInputs) -> Probed:
        return run_probes(*resolved(work), job.encoder)

    def run(self, run: AnalysisRun) -> Mapping[str, Any]:
        probed = run.records(Probed)
        write_probe_items(run.out, probed)
        return {"probes": [pair for found in probed for pair in found.pairs] or None}

    def sections(self, results: RunResults, figures: Mapping[str, bytes]) -> list[Section]:
        found = [probes_section(results, dict(figures)), probe_examples_section(results)]
        return [section for section in found if section is not None]

    def figures(self, results: RunResults) -> dict[str, bytes]:
        return probe_figures(results)
