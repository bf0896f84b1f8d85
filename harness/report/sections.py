"""The report's sections in order, shared by the Markdown and HTML renderings, and the figures
they show; the samples and training sections live here too."""

from __future__ import annotations

from harness.outputs import shown
from harness.report.correlation import correlation_section
from harness.report.diagnostics import diagnostics_section, training_cell
from harness.report.downstream import downstream_section
from harness.report.floor import floor_section
from harness.report.header import definitions_section, run_section
from harness.report.lengths import length_figures, lengths_section
from harness.report.model import CURVES_FILE, HEATMAP_FILE, Section, Table, fmt
from harness.report.probes import probe_examples_section, probe_figures, probes_section
from harness.report.published import published_section
from harness.report.ranking import stability_section, table1_section
from harness.report.scatter import scatter_figures, scatter_section
from harness.report.sizes import size_figures, sizes_section
from harness.report.summary import summary_section
from harness.results import RunResults


def report_figures(results: RunResults) -> dict[str, bytes]:
    """The report's figures as file name -> PNG bytes (only those with something to show): the
    heatmap, one scatter plot per diagnostic, the diagnostics by length and by training-set
    size, and the training curves."""
    from harness.figures import heatmap_png, training_curves_png

    figures: dict[str, bytes] = {}
    if results.correlations.defined():
        figures[HEATMAP_FILE] = heatmap_png(results.correlations)
        figures.update(scatter_figures(results))
    figures.update(length_figures(results))
    figures.update(size_figures(results))
    figures.update(probe_figures(results))  # noise robustness
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


def report_sections(results: RunResults, figures: dict[str, bytes],
                    docs: str | None = None) -> list[Section]:
    """The report's sections in order. `docs`: where the report links docs/metrics.md."""
    notes = results.correlations.notes
    candidates = [
        run_section(results),
        summary_section(results),
        Section("Notes", [f"- {note}" for note in notes]) if notes else None,
        definitions_section(results, docs),
        diagnostics_section(results),
        stability_section(results),
        floor_section(results),
        lengths_section(results, figures),
        sizes_section(results, figures),
        downstream_section(results),
        correlation_section(results, figures),
        scatter_section(results, figures),
        table1_section(results),
        published_section(results),
        samples_section(results),
        probes_section(results, figures),
        probe_examples_section(results),
        training_section(results, figures),
    ]
    return [section for section in candidates if section is not None]
