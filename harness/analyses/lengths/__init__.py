"""The lengths analysis: its spec section (`spec`, `breakdown:`), the breakdown by reference length
(`breakdown`), its records (`results`), report section and figure (`report`);
`analysis.LengthsAnalysis` is what the runner calls.
"""
