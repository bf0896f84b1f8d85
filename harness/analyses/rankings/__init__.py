"""The rankings analysis: rank intervals from paired tests over the test sentences (`rank`), their
records (`results`) and report section (`report`); `analysis.RankingsAnalysis` is what the
runner calls.
"""
