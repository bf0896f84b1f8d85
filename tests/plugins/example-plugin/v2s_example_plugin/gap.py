"""A length-gap analysis: how much shorter or longer each pair's regenerated sentences are than
their inputs, read from the samples the jobs left in the cache; with `length_gap.retrain`, also
of each decoder trained again on fewer sentences, in the encoders' jobs.

The retraining is the analysis's own work, planned, executed and returned
(`harness.plugin.PlannedAnalysis`): `jobs` declares one job per encoder, `run_job` trains,
generates and scores through the harness's toolkit (`encode`, `train_decoder`, `generate`,
`score`) wherever the executor runs the job, and returns a record (`RetrainedGaps`) that `run`
reads.

It reads its settings from the spec's `length_gap:` section (`gap_spec`), fills the
results.json field `length_gaps` (`gap_results`), and gives the report a table and the summary
("What this run shows") a claim and a caveat.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from harness.plugin import (
    AnalysisInputs,
    Figures,
    Job,
    JobInputs,
    ResultsView,
    Section,
    SpecView,
    Table,
    encode,
    generate,
    join_names,
    score,
    train_decoder,
)

from . import LENGTH_GAP
from .gap_results import (
    FIELD,
    LengthGaps,
    PairGap,
    RetrainedGap,
    RetrainedGaps,
    gap_header,
    gap_rows,
    read_gaps,
)
from .gap_spec import SECTION, LengthGapSection


def length_gaps(references: list[str], hypotheses: list[str]) -> PairGap:
    """`mean_gap`: the mean of (hypothesis tokens - reference tokens), whitespace tokens;
    `shorter`: the percentage of hypotheses with fewer tokens than their reference; `n`: the
    number of pairs (both 0 without pairs)."""
    gaps = [len(h.split()) - len(r.split()) for r, h in zip(references, hypotheses)]
    n = len(gaps)
    return PairGap(mean_gap=sum(gaps) / n if n else 0.0,
                   shorter=100.0 * sum(gap < 0 for gap in gaps) / n if n else 0.0, n=n)


def read_samples(path: Path) -> tuple[list[str], list[str]]:
    """The (references, hypotheses) of a samples file the jobs wrote: JSON lines."""
    records = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]
    return [r["reference"] for r in records], [r["hypothesis"] for r in records]


def shown(results: ResultsView) -> tuple[LengthGaps | None, LengthGapSection]:
    """What the report reads of a run: the field the analysis declares, read back as
    `LengthGaps` (None where the run has none), and the `length_gap:` section the run's spec
    recorded (the defaults where it recorded none)."""
    return (results.filled("length_gaps", LengthGaps),
            results.spec.section(SECTION, LengthGapSection) or LengthGapSection())


def measured(spec: SpecView, section: LengthGapSection) -> list[str]:
    """The decoders whose outputs are measured: `length_gap.decoder`, or every one."""
    return [entry.name for entry in spec.decoders if section.decoder in (None, entry.name)]


class LengthGapAnalysis:
    """Fills `length_gaps`: encoder -> decoder -> `length_gaps` of the first seed's samples
    (of `length_gap.decoder` only, when the spec names one), the baseline run's, and with
    `length_gap.retrain` those of the decoders its jobs trained again; shows one table."""

    NAME = LENGTH_GAP

    def jobs(self, spec: SpecView) -> list[Job]:
        """One job per encoder when the spec asks for `length_gap.retrain`, none otherwise."""
        section = spec.section(SECTION, LengthGapSection)
        if section.retrain is None:
            return []
        decoders = measured(spec, section)
        return [Job(analysis=self.NAME, encoder=encoder.name, trains=tuple(decoders),
                            what=f"{', '.join(decoders)} trained again on {section.retrain} "
                                 "sentences")
                for encoder in spec.components("encoder")]

    def run_job(self, job: Job, work: JobInputs) -> RetrainedGaps:
        """Each measured decoder trained on the first `retrain` sentences of the encoder's
        vectors, its test outputs generated, their gap measured and scored by the spec's first
        metric."""
        spec = work.ctx.spec
        section = spec.section(SECTION, LengthGapSection)
        assert section.retrain is not None  # `jobs` plans none without it
        metric = spec.components("metric")[0].name
        encoded = encode(work, job.encoder)
        gaps = {}
        for decoder in measured(spec, section):
            trained = train_decoder(work, decoder, encoded, sentences=section.retrain)
            samples = generate(work, trained, encoded)
            gap = length_gaps(*read_samples(samples.path))
            gaps[decoder] = RetrainedGap(**gap.model_dump(), sentences=section.retrain,
                                         metric=metric,
                                         value=score(work, metric, samples, trained,
                                                     encoded).value)
        return RetrainedGaps(encoder=job.encoder, gaps=gaps)

    def run(self, run: AnalysisInputs) -> Mapping[str, object]:
        section = run.spec.section(SECTION, LengthGapSection)
        pairs: dict[str, dict[str, PairGap]] = {}
        for outcome in run.execution.outcomes:
            for decoder, files in outcome.samples.items():
                if section.decoder in (None, decoder):
                    pairs.setdefault(outcome.encoder, {})[decoder] = length_gaps(
                        *read_samples(Path(files[0])))
        baseline = read_gaps(section.baseline).pairs if section.baseline else {}
        retrained = {record.encoder: record.gaps for record in run.records(RetrainedGaps)}
        return {FIELD: LengthGaps(pairs=pairs, baseline=baseline, retrained=retrained)}

    def sections(self, results: ResultsView, figures: Figures) -> list[Section]:
        gaps, section = shown(results)
        if gaps is None or not gaps.pairs:
            return []
        text = ["Regenerated minus input length in whitespace tokens, and the share of outputs "
                "shorter than their input, over the test sentences."]
        if gaps.baseline:
            text.append("The last column is the mean gap of the same pair in the baseline run "
                        f"({section.baseline}).")
        return [Section("Length gap (example plugin)", text,
                        tables=[Table("", gap_header(gaps), gap_rows(gaps, section.digits))])]

    def figures(self, results: ResultsView) -> dict[str, bytes]:
        return {}

    def claims(self, results: ResultsView) -> list[str]:
        """The pairs whose outputs are `length_gap.threshold` tokens or more longer or shorter
        than their inputs on average; that none is, where none is."""
        gaps, section = shown(results)
        if gaps is None or not gaps.pairs:
            return []
        far = [f"{encoder} -> {decoder} ({gap.mean_gap:+.{section.digits}f})"
               for encoder, by_decoder in gaps.pairs.items()
               for decoder, gap in by_decoder.items() if abs(gap.mean_gap) >= section.threshold]
        amount = f"{section.threshold:g} or more whitespace tokens on average"
        if not far:
            return [f"No pair's regenerated sentences differ in length from their inputs by "
                    f"{amount}."]
        return [f"The regenerated sentences of {join_names(far)} differ in length from their "
                f"inputs by {amount}."]

    def caveats(self, results: ResultsView) -> list[str]:
        """What the gaps are not: a test."""
        gaps, _ = shown(results)
        if gaps is None or not gaps.pairs:
            return []
        return ["the length gaps are means over the first seed's outputs, without intervals: "
                "they describe the outputs and test nothing."]
