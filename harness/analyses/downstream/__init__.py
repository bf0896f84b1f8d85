"""The downstream analysis: each encoder's downstream scores, from the spec's reference table
(a row counts only for the model that earned it) or computed by the jobs' tasks (`scores`), and
its report section (`report`); `analysis.DownstreamAnalysis` is what the runner calls.
"""
