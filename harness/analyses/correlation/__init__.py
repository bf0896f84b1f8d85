"""The correlation analysis (Kerscher & Eger 2020, section 3): its spec section (`spec`), the
correlations (`correlate`), their records (`results`), the report's sections (`report`,
`scatter`, `table1`, `multiplicity`) and heatmap (`heatmap`); `analysis.CorrelationAnalysis` is
what the runner calls.
"""
