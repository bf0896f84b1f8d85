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
shows them; the spec's `analyses:` chooses which run (`all` by default). `run.AnalysisRun` is
what the runner hands each; `run.run_analyses` runs them in order. Registering imports none of
them: each factory imports its folder when a run builds it.

An analysis may also add commands to the `harness` CLI, through the same entry point's
`register_commands` hook: those of `WITH_COMMANDS` (the probes' `harness generate` and
`harness analogy`, the rankings' `harness leaderboard`) list them in their folder's
`commands.COMMANDS`, a module that imports click and nothing heavy.
"""

from __future__ import annotations

from functools import partial
from importlib import import_module
from typing import Any

from harness.protocols import AnalysisParts, BuildContext, Options
from harness.registry.hookspecs import Register, RegisterCommand, hookimpl

FIRST_PARTY: dict[str, tuple[str, tuple[str, ...], str]] = {
    "rankings": ("RankingsAnalysis", (),
                 "rank intervals of the encoders on each diagnostic from paired tests over "
                 "the test sentences, Holm-corrected"),
    "floor": ("FloorAnalysis", (),
              "each encoder's gain over the random-vector floor or its own chance level"),
    "lengths": ("LengthsAnalysis", (),
                "every diagnostic per bin of reference length (`breakdown:`)"),
    "downstream": ("DownstreamAnalysis", (),
                   "downstream scores per encoder: a reference table's rows bound to the model "
                   "that earned them, or computed by the spec's tasks"),
    "correlation": ("CorrelationAnalysis", ("downstream",),
                    "Spearman (or Pearson, Kendall) of each diagnostic with each task across "
                    "encoders, with exact p, Holm and Fisher-z intervals (paper Figure 2)"),
    "probes": ("ProbesAnalysis", (),
               "analogies, interpolation and noise robustness decoded by each pair "
               "(`probes:`)"),
    "privacy": ("PrivacyAnalysis", (),
                "leakage against utility of every encoder's vectors under each defence of "
                "`defences:` (an attacker trained on the defended vectors), canaries"),
}
"""Analysis name -> (its class in `harness.analyses.<name>.analysis`, what it needs, what it
does), in the order `analyses: all` runs them."""

_HERE = "harness.analyses"
PARTS: dict[str, AnalysisParts] = {
    "rankings": AnalysisParts(results={"rankings": f"{_HERE}.rankings.results:Rankings"}),
    "floor": AnalysisParts(results={"floor": f"{_HERE}.floor.results:FloorGains"}),
    "lengths": AnalysisParts(
        section="breakdown", settings=f"{_HERE}.lengths.spec:BreakdownSection",
        results={"lengths": f"{_HERE}.lengths.results:LengthBreakdown"},
        resolve=f"{_HERE}.lengths.checks:check_bins"),
    "correlation": AnalysisParts(
        section="correlation", settings=f"{_HERE}.correlation.spec:CorrelationSection",
        results={"correlations": f"{_HERE}.correlation.results:Correlations"},
        check=f"{_HERE}.correlation.checks:check_correlation",
        preflight=f"{_HERE}.correlation.checks:primary_problems",
        tables=f"{_HERE}.correlation.tables:table_results"),
    "probes": AnalysisParts(
        section="probes", settings=f"{_HERE}.probes.spec:ProbesSection",
        results={"probes": f"{_HERE}.probes.results:ProbeResults"},
        resolve=f"{_HERE}.probes.checks:resolve_probes",
        preflight=f"{_HERE}.probes.checks:probe_problems"),
    "privacy": AnalysisParts(
        section="privacy", settings=f"{_HERE}.privacy.spec:PrivacySection",
        results={"privacy": f"{_HERE}.privacy.results:Privacy"},
        check=f"{_HERE}.privacy.checks:check_privacy", components={"attacks": "attack"}),
}
"""What each first-party analysis brings besides its class (`harness.protocols.AnalysisParts`),
named as "module:attribute" so that registering imports none of it."""


def _build(name: str, cls: str, options: Options, context: BuildContext) -> Any:
    """A new first-party analysis: its folder is imported now, not when it registers. A
    module-level function (bound with `partial`), so a spec holding it pickles for executors
    that run jobs in other processes."""
    return getattr(import_module(f"harness.analyses.{name}.analysis"), cls)()


@hookimpl
def register_analyses(register: Register) -> None:
    """Register the first-party analyses."""
    for name, (cls, needs, description) in FIRST_PARTY.items():
        register(name, partial(_build, name, cls), description=description, needs=needs,
                 parts=PARTS.get(name))


WITH_COMMANDS: tuple[str, ...] = ("correlation", "probes", "rankings")
"""The first-party analyses whose folder has a `commands` module adding commands to `harness`."""


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    """Register the first-party analyses' commands (`harness compare`, `harness generate`,
    `harness analogy`, `harness leaderboard`)."""
    for name in WITH_COMMANDS:
        for command in import_module(f"harness.analyses.{name}.commands").COMMANDS:
            register(command)
