"""The run report's content, one module per concern.

`harness.report.write` writes the run directory and is what other code imports; this package
builds what it writes: `model` (sections, tables, number formatting), `header` (the run, its
encoders, the diagnostics' definitions), `diagnostics`, `ranking`, `downstream`, `correlation`,
`published`, `summary` (the generated "What this run shows" paragraph), `sections` (their order,
samples, training) and `render` (Markdown and self-contained HTML). Figures are drawn by
`harness.report.plots`.
"""
