"""Benchmark specs: YAML -> validated, typed `Spec`, with errors that name file:line and field.

One concern per module: `schema` (what a spec may say), `positions` (YAML read with lines, located
errors), `overrides` (`--set`), `resolve` (paths and components resolved once), `load`
(`load_spec`), `preflight` (what keeps a spec from running on this machine).
"""

from __future__ import annotations

from harness.spec.load import load_spec
from harness.spec.overrides import apply_overrides
from harness.spec.preflight import preflight, refuse
from harness.spec.schema import (
    ENCODE_BATCH_SIZE,
    AnalysisEntry,
    Component,
    CorpusSection,
    DefenceEntry,
    DiagnosticsSection,
    DownstreamSection,
    EncodeSection,
    Entry,
    ExecutorEntry,
    GenerationSection,
    Normalise,
    ReferenceSection,
    ReportSection,
    Source,
    Spec,
    SpecDocument,
    TableSpec,
    VocabSection,
    encode_batch_size,
)

__all__ = [
    "ENCODE_BATCH_SIZE", "AnalysisEntry", "Component", "DefenceEntry", "Entry", "CorpusSection",
    "DiagnosticsSection", "DownstreamSection", "EncodeSection",
    "ExecutorEntry", "GenerationSection", "Normalise",
    "ReferenceSection", "ReportSection", "Source", "Spec", "SpecDocument", "TableSpec", "VocabSection",
    "apply_overrides", "encode_batch_size", "load_spec", "preflight", "refuse",
]
