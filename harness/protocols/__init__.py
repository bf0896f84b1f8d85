"""The contracts between the core and its plugins, on the ground floor of the harness: one
address for all of them (`from harness.protocols import Encoder, Metric, Analysis, ...`).

- `components`: encoders, decoders, the options base classes, what a factory receives;
- `metric`: metrics, their optional parts and what they may be handed;
- `task`: downstream tasks, their data and results;
- `analysis`: analyses over a run's results;
- `parts`: what an analysis brings besides its class (spec section, results fields, checks);
- `defence`: transforms of an encoder's vectors that a store applies against inversion;
- `attack`: what reads text back from the vectors, and its threat model;
- `executor`: executors, which carry out a run's jobs;
- `registered`: the kinds, factories, availability and registered metadata;
- `report`: the sections, tables and figures an analysis returns, the results it reads them from;
- `views`: read-only views of what the runner hands executors and analyses;
- `records`: read-only views of the records a run's results hold (scores, pairs, encoders).

Protocols are `runtime_checkable`: any object with the right methods is used without being
registered. Optional parts are small protocols or documented attributes with defaults, read
only through the functions beside them, so each has one declaration and one reader. Nothing
here imports the rest of the harness, or anything heavy: numpy and torch appear in annotations
only.
"""

from harness.protocols.analysis import Analysis, Job, JobRecord, PlannedAnalysis
from harness.protocols.attack import (
    Attack,
    AttackInputs,
    Decode,
    Inversion,
    Query,
    Ranker,
    ThreatModel,
    inversion_problem,
    inversion_texts,
    ranking_problem,
    threat_model,
    ungranted_use,
)
from harness.protocols.components import (
    BuildContext,
    ConditionalLanguageModel,
    DeclaringEncoder,
    DecoderOptions,
    Encoder,
    Options,
    PositionalEncoder,
    ResumableFit,
    Settings,
    StandardisedInputs,
    SubwordVocabulary,
    TrainableEncoder,
    TrainingOptions,
    VersionedFit,
    declared_model,
    fit_version,
    fits_resumably,
    is_positional,
    wants_vector_statistics,
)
from harness.protocols.defence import BudgetedDefence, Defence, defence_budget
from harness.protocols.executor import Executor
from harness.protocols.metric import (
    METRIC_NEEDS,
    ChanceLevelMetric,
    DecoderLikelihood,
    EncoderAwareMetric,
    InputEncoding,
    Metric,
    ProportionMetric,
    SignedMetric,
    UnconditionalLikelihood,
    chance_score,
    checked_needs,
    has_chance_level,
    higher_is_better,
    metric_signature,
    proportion_counts,
    required_fields,
    unrelated_pairing,
    value_range,
)
from harness.protocols.parts import AnalysisParts, resolve_ref
from harness.protocols.records import DescriptionView, PairView, RecordedSpecView, ScoreView
from harness.protocols.registered import (
    KINDS,
    Availability,
    ComponentInfo,
    Factory,
    PluginFailure,
    plural,
)
from harness.protocols.report import Figures, ResultsView, Section, Table
from harness.protocols.task import (
    CombinedColumns,
    DownstreamTask,
    Encode,
    Examples,
    GeneratedTask,
    PreparedData,
    ScoreSpread,
    SeedAware,
    SeedBatched,
    TaskData,
    TaskResult,
    chance_level,
    is_seeded,
    over_seeds,
)
from harness.protocols.views import (
    AnalysisInputs,
    CacheView,
    CorpusView,
    DecoderView,
    EntryView,
    ExecutionView,
    JobInputs,
    OutcomeView,
    PositionsView,
    RunContextView,
    SpecView,
    VocabView,
)

__all__ = [
    "KINDS", "METRIC_NEEDS", "Analysis", "AnalysisInputs", "Job", "AnalysisParts",
    "Attack", "AttackInputs", "Availability", "BudgetedDefence", "BuildContext", "CacheView",
    "ChanceLevelMetric", "CombinedColumns", "ComponentInfo", "ConditionalLanguageModel",
    "CorpusView", "Decode", "DecoderLikelihood", "DecoderView", "DecoderOptions", "Defence",
    "DownstreamTask", "Encode", "Encoder", "EncoderAwareMetric", "EntryView", "Examples",
    "ExecutionView", "Executor", "Factory", "Figures", "GeneratedTask", "InputEncoding",
    "Inversion", "JobInputs", "JobRecord", "Metric", "Options", "OutcomeView", "PlannedAnalysis",
    "PluginFailure", "PositionalEncoder", "PositionsView", "PreparedData", "ProportionMetric", "Query",
    "Ranker", "ranking_problem",
    "ResultsView",
    "ResumableFit", "RunContextView", "ScoreSpread", "Section", "SeedAware", "SeedBatched",
    "Settings",
    "SignedMetric", "SpecView", "StandardisedInputs", "SubwordVocabulary", "Table",
    "TaskData", "TaskResult", "ThreatModel", "TrainableEncoder", "TrainingOptions",
    "UnconditionalLikelihood", "VersionedFit", "VocabView", "chance_level", "chance_score",
    "checked_needs",
    "DeclaringEncoder", "DescriptionView", "PairView", "RecordedSpecView", "ScoreView",
    "declared_model", "defence_budget", "fit_version", "fits_resumably", "has_chance_level",
    "higher_is_better", "inversion_problem", "inversion_texts", "is_positional", "is_seeded",
    "metric_signature", "over_seeds", "plural", "value_range",
    "proportion_counts", "required_fields", "resolve_ref", "threat_model", "ungranted_use",
    "unrelated_pairing", "wants_vector_statistics",
]
