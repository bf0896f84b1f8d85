"""Analyses over a run's results, one folder each: its spec section and checks, its stage, its
result model (`results.py`), its report section and figures (`report.py`), and the class the
runner calls (`analysis.py`, `harness.protocols.Analysis`).

- `rankings`: how firmly the test set orders the encoders on each diagnostic;
- `floor`: what each encoder adds over the floor or its chance level;
- `lengths`: every diagnostic per bin of reference length;
- `downstream`: each encoder's downstream scores, from a reference table or computed;
- `correlation`: the diagnostics against the downstream scores across encoders (needs
  `downstream`);
- `probes`: analogies, interpolation and noise robustness;
- `privacy`: leakage against utility under each defence of the spec (docs/privacy.md).

They are registered like every other component, through the entry-point group "harness"
(`register_analyses` below), so a package adds one with `pip install` and `harness list`
shows them; the spec's `analyses:` chooses which run (`all` by default). Each folder declares
how it registers (`ANALYSIS`, a `registration.Registration` in its `__init__`: its name, class,
description, what it needs, its parts and whether it adds commands: the correlation's
`harness compare`, the probes' `harness generate` and `harness analogy`, the rankings'
`harness leaderboard`). Registering imports none of the analyses: each factory imports its
folder's `analysis` module when a run builds it. `run.AnalysisRun` is what the runner hands
each; `run.run_analyses` runs them in order.
"""

from __future__ import annotations

from harness.analyses import correlation, downstream, floor, lengths, privacy, probes, rankings
from harness.registry.hookspecs import Register, RegisterCommand, hookimpl

FOLDERS = (rankings, floor, lengths, downstream, correlation, probes, privacy)
"""The first-party analyses, in the order `analyses: all` runs them."""


@hookimpl
def register_analyses(register: Register) -> None:
    """Register the first-party analyses, each as its folder declares (`ANALYSIS`)."""
    for folder in FOLDERS:
        folder.ANALYSIS.register(register)


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    """Register the first-party analyses' commands."""
    for folder in FOLDERS:
        folder.ANALYSIS.register_commands(register)
