"""The one address of everything a plugin calls: `from harness.plugin import hookimpl, Register,
Options, Section, ...`. `THEMES` lists it by theme, in the order of `__all__`:

- registering a plugin: the hooks' marker and callbacks (`hookimpl`, `Register`,
  `RegisterCommand`), the `command` decorator of the command line, what a registration holds;
- the contracts of `harness.protocols` by kind of component: encoders and decoders, metrics,
  downstream tasks, defences and attacks;
- analyses and their jobs: the contracts, the read-only views of what the runner hands them
  (`AnalysisInputs`, `JobInputs`, `SpecView`, ...) and the pipeline's stages for a job, named by
  the spec's entries (`encode`, `train_decoder`, `generate`, `score`);
- executors: what one assembles and accounts jobs with (`run_encoder_job`, or its halves
  `start_job` and `finish_job`; the analyses' planned jobs, `planned_jobs`, `run_planned_job`
  and `with_records`; the `Outcome` each job returns, the `Execution` an executor returns,
  `account`, `resolve_device`) and the core's
  (`LocalExecutor`, `RayExecutor`);
- the report and results: the report's plain data (`Section`, `Table`, `Figures`), its number
  formatting (`fmt`, `fmt_p`, `fmt_interval`, `fmt_span`, `join_names`), `load_results` (a
  run's results.json read back, typed);
- the error classes (`HarnessError`, `DataError`, `CacheMiss`, ...);
- the helpers the first-party plugins use: downloads that retry and resume (`fetch`), text
  preparation as SentEval's scripts do it (Moses and PTB tokenisation, quotes), word vectors
  (`train_skipgram`), the words token F1 counts (`words`), the cache's root, declared-model
  names, row cosines, and the quickstart
  corpus' generator (the module `synthetic`).

Each name loads its module on first use (PEP 562, `harness.lazy`): importing this module imports
nothing of the harness but `harness.lazy`, so a plugin's registration stays cheap, and a name
loads only what it needs (`Options` no torch, `RayExecutor` the Ray executor). Type checkers read
the same names from the imports under `TYPE_CHECKING` (tests/test_architecture.py checks that
they match `EXPORTS`).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from harness.lazy import lazy_exports

THEMES: dict[str, dict[str, tuple[str, ...]]] = {
    "registering a plugin": {
        "registry.hookspecs": ("Register", "RegisterCommand", "hookimpl"),
        "registry.commands": ("command",),
        "protocols": ("KINDS", "Availability", "ComponentInfo", "Factory", "PluginFailure",
                      "plural"),
    },
    "encoders and decoders": {
        "protocols": ("BuildContext", "ConditionalLanguageModel", "DeclaringEncoder",
                      "DecoderOptions", "Encoder", "Options", "PositionalEncoder",
                      "ResumableFit", "Settings", "StandardisedInputs", "SubwordVocabulary",
                      "TrainableEncoder", "TrainingOptions", "VersionedFit", "declared_model",
                      "fit_version", "fits_resumably", "is_positional",
                      "wants_vector_statistics"),
    },
    "metrics": {
        "protocols": ("METRIC_NEEDS", "ChanceLevelMetric", "DecoderLikelihood",
                      "EncoderAwareMetric", "InputEncoding", "Metric", "ProportionMetric",
                      "SignedMetric", "UnconditionalLikelihood", "chance_score",
                      "checked_needs", "has_chance_level", "higher_is_better",
                      "metric_signature", "proportion_counts", "required_fields",
                      "unrelated_pairing", "value_range"),
    },
    "downstream tasks": {
        "protocols": ("CombinedColumns", "DownstreamTask", "Encode", "Examples",
                      "GeneratedTask", "PreparedData", "ScoreSpread", "SeedAware",
                      "SeedBatched", "TaskData", "TaskResult", "chance_level", "is_seeded",
                      "over_seeds"),
    },
    "defences and attacks": {
        "protocols": ("BudgetedDefence", "Defence", "defence_budget", "Attack", "AttackInputs",
                      "Decode", "Inversion", "Query", "Ranker", "ThreatModel", "threat_model",
                      "inversion_problem", "inversion_texts", "ranking_problem",
                      "ungranted_use"),
    },
    "analyses and their jobs": {
        "protocols": ("Analysis", "Job", "AnalysisParts", "JobRecord",
                      "PlannedAnalysis", "resolve_ref", "AnalysisInputs", "CacheView",
                      "CorpusView", "DecoderView", "EntryView", "ExecutionView", "JobInputs", "OutcomeView",
                      "PositionsView", "RunContextView", "SpecView", "VocabView",
                      "DescriptionView", "PairView", "RecordedSpecView", "ScoreView"),
        "executors.toolkit": ("encode", "generate", "score", "train_decoder"),
    },
    "executors": {
        "protocols": ("Executor",),
        "executors": ("Execution", "account"),
        "executors.jobs": ("Outcome", "finish_job", "run_encoder_job", "start_job"),
        "executors.plan": ("planned_jobs", "run_planned_job", "with_records"),
        "executors.local": ("LocalExecutor",),
        "executors.ray": ("RayExecutor",),
        "util.devices": ("resolve_device",),
    },
    "the report and results": {
        "protocols": ("Figures", "ResultsView", "Section", "Table"),
        "report.elements": ("fmt", "fmt_interval", "fmt_p", "fmt_span", "join_names"),
        "results.model": ("load_results",),
    },
    "errors": {
        "errors": ("CacheMiss", "DataError", "HarnessError", "PluginError", "SpecError",
                   "UnavailableComponentError", "UnknownComponentError"),
    },
    "helpers of the first-party plugins": {
        "data.fetch": ("fetch",),
        "data.preprocess": ("moses_lowercase", "moses_tokenize", "ptb_file", "ptb_prepared",
                            "quotes_stripped", "strip_quotes"),
        "results.declarations": ("directory_model", "pooled_vectors"),
        "text.skipgram": ("train_skipgram",),
        "text.words": ("Tokenize", "words"),
        "util.cache": ("default_root",),
        "util.vectors": ("row_cosines", "unit_rows"),
    },
}
"""What this module re-exports, by theme: theme -> module under `harness` -> its names.
`__all__` lists them in this order."""


def _by_module(themes: dict[str, dict[str, tuple[str, ...]]]) -> dict[str, tuple[str, ...]]:
    """Module -> its names, over every theme."""
    merged: dict[str, tuple[str, ...]] = {}
    for modules in themes.values():
        for module, names in modules.items():
            merged[module] = (*merged.get(module, ()), *names)
    return merged


EXPORTS = _by_module(THEMES)
"""Module under `harness` -> the names of it this module re-exports (`THEMES`, merged)."""

MODULES: dict[str, str] = {"synthetic": "synthetic"}
"""Name -> module under `harness` re-exported whole: the quickstart corpus' generator, whose
word lists and constructions the synthetic tasks build on."""

_exported, _names = lazy_exports("harness", {name: module for module, names in EXPORTS.items()
                                             for name in names})
__all__ = [name for modules in THEMES.values() for names in modules.values() for name in names]
__all__ += list(MODULES)


def __getattr__(name: str) -> Any:
    """The exported `name`, its module imported on first use."""
    if name in MODULES:
        return import_module(f"harness.{MODULES[name]}")
    if name not in _names:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _exported(name)


if TYPE_CHECKING:
    from harness import synthetic as synthetic
    from harness.data.fetch import fetch as fetch
    from harness.data.preprocess import moses_lowercase as moses_lowercase
    from harness.data.preprocess import moses_tokenize as moses_tokenize
    from harness.data.preprocess import ptb_file as ptb_file
    from harness.data.preprocess import ptb_prepared as ptb_prepared
    from harness.data.preprocess import quotes_stripped as quotes_stripped
    from harness.data.preprocess import strip_quotes as strip_quotes
    from harness.errors import CacheMiss as CacheMiss
    from harness.errors import DataError as DataError
    from harness.errors import HarnessError as HarnessError
    from harness.errors import PluginError as PluginError
    from harness.errors import SpecError as SpecError
    from harness.errors import UnavailableComponentError as UnavailableComponentError
    from harness.errors import UnknownComponentError as UnknownComponentError
    from harness.executors import Execution as Execution
    from harness.executors import account as account
    from harness.executors.jobs import Outcome as Outcome
    from harness.executors.jobs import finish_job as finish_job
    from harness.executors.jobs import run_encoder_job as run_encoder_job
    from harness.executors.jobs import start_job as start_job
    from harness.executors.local import LocalExecutor as LocalExecutor
    from harness.executors.plan import planned_jobs as planned_jobs
    from harness.executors.plan import run_planned_job as run_planned_job
    from harness.executors.plan import with_records as with_records
    from harness.executors.ray import RayExecutor as RayExecutor
    from harness.executors.toolkit import encode as encode
    from harness.executors.toolkit import generate as generate
    from harness.executors.toolkit import score as score
    from harness.executors.toolkit import train_decoder as train_decoder
    from harness.protocols import *  # noqa: F403 - every contract (EXPORTS["protocols"])
    from harness.registry.commands import command as command
    from harness.registry.hookspecs import Register as Register
    from harness.registry.hookspecs import RegisterCommand as RegisterCommand
    from harness.registry.hookspecs import hookimpl as hookimpl
    from harness.report.elements import fmt as fmt
    from harness.report.elements import fmt_interval as fmt_interval
    from harness.report.elements import fmt_p as fmt_p
    from harness.report.elements import fmt_span as fmt_span
    from harness.report.elements import join_names as join_names
    from harness.results.declarations import directory_model as directory_model
    from harness.results.declarations import pooled_vectors as pooled_vectors
    from harness.results.model import load_results as load_results
    from harness.text.skipgram import train_skipgram as train_skipgram
    from harness.text.words import Tokenize as Tokenize
    from harness.text.words import words as words
    from harness.util.cache import default_root as default_root
    from harness.util.devices import resolve_device as resolve_device
    from harness.util.vectors import row_cosines as row_cosines
    from harness.util.vectors import unit_rows as unit_rows
