"""The report's sections in order, shared by the Markdown and HTML renderings, and the figures
they show: the run's own (the run, the summary, the diagnostics, training-set sizes, published
tables, samples, training) around those of each analysis the run ran (`harness.analyses`,
asked through the registry, so a plugin's analysis shows its own)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.errors import HarnessError
from harness.protocols import BuildContext
from harness.report.diagnostics import diagnostics_section, training_cell
from harness.report.elements import CURVES_FILE, Section, Table, fmt
from harness.report.header import definitions_section, run_section
from harness.report.published import published_section
from harness.report.sizes import size_figures, sizes_section
from harness.report.summary import summary_section
from harness.results.model import AnalysisRecord, RunResults
from harness.text.outputs import shown

log = logging.getLogger("harness.report")


@dataclass(frozen=True)
class MissingAnalysis:
    """Stands in for an analysis the run ran that is not installed where the report is made:
    no figure, and a note in place of its section saying what to install."""

    record: AnalysisRecord

    def _who(self) -> str:
        plugin = self.record.plugin
        return f"analysis {self.record.name!r}" + (f" (plugin {plugin!r})" if plugin else "")

    def install(self) -> str:
        """What to install to draw the section."""
        distribution = self.record.distribution
        return (f"pip install {distribution}" if distribution else "install the package that "
                "registers it (results.json does not name it)")

    def warning(self) -> str:
        """The warning line `harness report` prints."""
        return (f"warning: {self._who()} is not installed here, so the report leaves out its "
                f"section: {self.install()}, then rerun `harness report`")

    def figures(self, results: RunResults) -> dict[str, bytes]:
        """None: the analysis that draws them is not here."""
        return {}

    def sections(self, results: RunResults, figures: Mapping[str, bytes]) -> list[Section]:
        """A note in place of the analysis's section."""
        distribution = self.record.distribution
        install = (f"Install {distribution} (pip install {distribution})" if distribution
                   else "Install the package that registers it")
        return [Section(f"Analysis {self.record.name}: not shown", [
            f"The run's {self._who()} is not installed where this report was made; its "
            f"results are in results.json. {install} and rerun `harness report` to show "
            "them."])]


def analyses_of(results: RunResults) -> list[Any]:
    """The analyses a run ran (its spec's `analyses:`; every registered one for results that
    do not say), built from the registry; one that is not installed here is a
    `MissingAnalysis`, with a warning naming what to install."""
    from harness.registry.loader import load_registry

    registry = load_registry()
    named = results.spec.analyses
    records = ([AnalysisRecord(name=info.name) for info in registry.in_order("analysis")]
               if named is None else named)
    found: list[Any] = []
    for record in records:
        try:
            info = registry.get("analysis", record.name)
        except HarnessError:  # results of an analysis not installed here
            missing = MissingAnalysis(record)
            log.warning("%s", missing.warning())
            found.append(missing)
            continue
        options = info.options.model_validate(record.options)
        found.append(info.factory(options, BuildContext()))
    return found


def report_figures(results: RunResults, analyses: list[Any] | None = None
                   ) -> dict[str, bytes]:
    """The report's figures as file name -> PNG bytes (only those with something to show):
    each analysis's (the heatmap, scatter plots, lengths, noise robustness), the diagnostics
    by training-set size and the training curves."""
    from harness.report.plots import training_curves_png

    figures: dict[str, bytes] = {}
    for analysis in analyses_of(results) if analyses is None else analyses:
        figures.update(analysis.figures(results))
    figures.update(size_figures(results))
    curves = training_curves_png(results.runs)
    if curves is not None:
        figures[CURVES_FILE] = curves
    return figures


def samples_section(results: RunResults) -> Section | None:
    """Each example input and what every pair regenerated (Kerscher & Eger 2020, Table 2)."""
    if not results.examples:
        return None
    tables = []
    for number, example in enumerate(results.examples, start=1):
        rows = [["input", "", example.reference]]
        rows += [[o.encoder, o.decoder, shown(o.hypothesis)] for o in example.outputs]
        tables.append(Table(f"Sample {number}", ["encoder", "decoder", "sentence"], rows))
    return Section("Samples", ["One test input and what the decoder regenerated from each "
                               "encoder's vector (Kerscher & Eger 2020, Table 2, left)."],
                   tables=tables, kind="samples")


def training_section(results: RunResults, figures: dict[str, bytes]) -> Section | None:
    """Training and generation per pair, and the training curves."""
    if not results.runs:
        return None
    rows = [[r.encoder, r.decoder, fmt(r.train.epochs), fmt(r.train.train_loss, 3),
             fmt(r.train.val_loss, 3), fmt(r.train.tokens_per_s, 0),
             fmt(r.generate.sentences_per_s, 1)] for r in results.runs]
    header = ["encoder", "decoder", "epochs", "train loss", "val loss", "tokens/s",
              "sentences/s"]
    if any(r.train.best_epoch is not None or r.seeds for r in results.runs):
        header.append("training")
        for row, run in zip(rows, results.runs):
            row.append(training_cell(run))
    if CURVES_FILE in figures:
        text = ["One panel per encoder and decoder, sharing the loss axis: validation loss "
                "solid, training loss dashed (nats per token), one colour per seed. A panel "
                "titled \"still improving\" ended at its epoch limit unconverged: with early "
                "stopping, before `patience` epochs passed without improvement; without, with "
                "its lowest validation loss in its last epoch."]
    else:
        text = ["No training curves were recorded."]
    if any(r.seeds for r in results.runs):
        text.append("With several seeds the table shows the first seed's training; the "
                    "curves show every seed's.")
    return Section("Training and generation", text,
                   figures=[CURVES_FILE] if CURVES_FILE in figures else [],
                   tables=[Table("", header, rows)])


def report_sections(results: RunResults, figures: Mapping[str, bytes],
                    docs: str | None = None, analyses: list[Any] | None = None
                    ) -> list[Section]:
    """The report's sections in order. `docs`: where the report links docs/metrics.md."""
    analyses = analyses_of(results) if analyses is None else analyses
    notes = [note for analysis in analyses if hasattr(analysis, "notes")
             for note in analysis.notes(results)]
    candidates: list[Section | None] = [
        run_section(results, analyses),
        summary_section(results, analyses),
        Section("Notes", [f"- {note}" for note in notes]) if notes else None,
        definitions_section(results, docs),
        diagnostics_section(results),
        sizes_section(results, dict(figures)),
    ]
    for analysis in analyses:
        candidates += analysis.sections(results, figures)
    candidates += [published_section(results), samples_section(results),
                   training_section(results, dict(figures))]
    return [section for section in candidates if section is not None]
