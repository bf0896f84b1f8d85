"""Reference results a run joins instead of recomputing them.

Every decoder is trained per encoder and independently of the others, so a run's per-encoder
results are reusable under the same protocol. This package holds what makes that safe:

- `signature`: a run's protocol signature (`harness.results.signature`: a readable string and
  a hash over everything that decides a run's numbers except which encoders run);
- `archive`: the per-sentence statistics a run directory keeps (`statistics.zip`), which every
  paired test reads back;
- `bundle`: `harness bundle` writes a run's rows, statistics, downstream scores, provenance
  and signature into one file; reading one back;
- `join`: a run that names a bundle (`reference:`) trains only the encoders the bundle lacks,
  refuses a bundle of another protocol, and merges the bundle's rows into every analysis.

`harness leaderboard` (the rankings analysis's command, `harness.analyses.rankings.leaderboard`)
ranks the encoders of runs and bundles of one protocol, with tie groups.
"""
