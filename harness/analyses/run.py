"""What the runner hands every analysis (`AnalysisRun`) and the loop that runs the analyses a
spec asks for (`run_analyses`), in the spec's order (resolved so that an analysis comes after
those it `needs`)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from harness.errors import PluginError
from harness.executors import Execution
from harness.protocols import Analysis, JobRecord, Options
from harness.results.model import EncoderDescription, PairResult
from harness.spec import Entry
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.score import CHANCE_FILE
from harness.stages.vocab import Vocab

log = logging.getLogger("harness.run")

R = TypeVar("R", bound=JobRecord)

Statistics = dict[tuple[str, str], dict[str, list[np.ndarray]]]
"""(decoder, metric) -> encoder -> the per-sentence statistics of each seed, in the spec's
encoder order."""

Chance = dict[str, dict[str, np.ndarray]]
"""metric -> encoder -> the metric's per-sentence statistics at the encoder's chance level."""


@dataclass
class AnalysisRun:
    """A run after its jobs, as an analysis sees it: the context (spec, cache, device), the
    corpus and vocabulary, the jobs' `Execution`, the run directory, the analysis's own
    `options`, and `fields`, the results fields the analyses before it filled."""

    ctx: RunContext
    corpus: Corpus
    vocab: Vocab
    execution: Execution
    out: Path
    options: Options = field(default_factory=Options)
    fields: dict[str, Any] = field(default_factory=dict)
    analysis: str = ""
    """The spec's name of the analysis being run (`run_analyses` sets it, with `options`)."""

    @property
    def spec(self) -> Any:
        """The run's resolved `Spec`."""
        return self.ctx.spec

    @cached_property
    def runs(self) -> list[PairResult]:
        """Every encoder x decoder result of the jobs that succeeded."""
        return [run for outcome in self.execution.outcomes for run in outcome.runs]

    @cached_property
    def encoders(self) -> list[str]:
        """The run's encoders: a joined reference's first (`Spec.encoder_names`), then the
        spec's, in its order (failed jobs' included)."""
        return [name for name, _ in self.spec.encoder_names()]

    @cached_property
    def primary(self) -> str:
        """The decoder whose diagnostics are correlated and summarised: the spec's first."""
        return self.spec.decoders[0].name if self.spec.decoders else ""

    @cached_property
    def descriptions(self) -> dict[str, EncoderDescription]:
        """What each encoder whose job ran is (results.json `encoders`)."""
        return {o.encoder: o.description for o in self.execution.outcomes
                if o.description is not None}

    @cached_property
    def declared(self) -> dict[str, dict[str, Any]]:
        """The model each encoder declares it is: a table row counts only for the model that
        earned it."""
        return {name: description.declares for name, description in self.descriptions.items()}

    def records(self, kind: type[R]) -> list[R]:
        """What the jobs of the analysis being run returned, each read as `kind`, in the
        spec's order of the encoders (those whose jobs succeeded)."""
        if not self.analysis:
            raise RuntimeError("records() asked outside an analysis's run: run_analyses sets "
                               "which analysis is being run")
        order = {name: index for index, name in enumerate(self.encoders)}
        outcomes = sorted(self.execution.outcomes, key=lambda o: order.get(o.encoder, len(order)))
        return [kind.model_validate(record) for outcome in outcomes
                for record in outcome.analysis_records.get(self.analysis, [])]

    @cached_property
    def statistics(self) -> tuple[Statistics, Chance]:
        """Every job's per-sentence metric statistics, each file read once, and the
        chance-level statistics stored beside them (the same for every decoder and seed of an
        encoder)."""
        statistics: Statistics = {}
        chance: Chance = {}
        for outcome in self.execution.outcomes:
            for decoder, by_metric in outcome.statistics.items():
                for metric, paths in by_metric.items():
                    statistics.setdefault((decoder, metric), {})[outcome.encoder] = [
                        np.load(Path(path)) for path in paths]
                    beside = Path(paths[0]).with_name(CHANCE_FILE)
                    if outcome.encoder not in chance.get(metric, {}) and beside.exists():
                        chance.setdefault(metric, {})[outcome.encoder] = np.load(beside)
        return statistics, chance


def run_analyses(run: AnalysisRun, entries: list[Entry]) -> dict[str, Any]:
    """Every analysis of `entries` in order, each handed the fields the ones before it
    filled; the results fields they fill together (`results_fields`)."""
    filled: dict[str, Any] = {}
    owners: dict[str, Entry] = {}  # results field -> the analysis that filled it
    for entry in entries:
        analysis = run.ctx.build(entry)
        if not isinstance(analysis, Analysis):
            raise PluginError(entry.plugin, f"analysis {entry.name!r} lacks run, sections "
                                            "and figures (harness.protocols.Analysis)")
        run.options, run.analysis = entry.settings, entry.name
        found = results_fields(entry.name, analysis.run(run), plugin=entry.plugin)
        for key in found.keys() - {"analyses"}:
            if key in owners:
                owner = owners[key]
                raise PluginError(entry.plugin, f"analysis {entry.name!r} returned {key!r}, "
                                                f"which analysis {owner.name!r} (plugin "
                                                f"{owner.plugin!r}) filled already: an analysis "
                                                "may not replace another's results; rename the "
                                                "key to keep it under results.json "
                                                f"`analyses: {{{entry.name}: ...}}`")
            owners[key] = entry
        own = {**filled.get("analyses", {}), **found.pop("analyses", {})}
        filled.update(found)
        if own:
            filled["analyses"] = own
        run.fields = dict(filled)
    return filled


RUNNER_FIELDS = frozenset({"schema_tag", "spec", "provenance", "runs", "encoders", "published",
                           "examples", "failures", "analyses", "signature", "reference"})
"""The results fields the runner fills itself, which no analysis may return."""


def results_fields(name: str, found: Mapping[str, Any], *, plugin: str) -> dict[str, Any]:
    """What analysis `name` returned as results fields: a field `harness.results.model.RunResults`
    has by its name, which must hold that field's type; any other under
    `analyses: {name: {...}}`, as JSON. A field the runner fills (`RUNNER_FIELDS`), a value of
    the wrong type and one JSON cannot hold are refused naming the plugin and the key."""
    from pydantic import ValidationError

    from harness.results.model import RunResults

    known = RunResults.field_names()
    fields = {key: value for key, value in found.items() if key in known}
    for key, value in fields.items():
        if key in RUNNER_FIELDS:
            raise PluginError(plugin, f"analysis {name!r} returned {key!r}, a results field "
                                      "the runner fills itself: rename the key (any other name "
                                      f"is kept under results.json `analyses: {{{name}: ...}}`)")
        try:
            RunResults.model_validate({key: value})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"][1:])
            raise PluginError(plugin, f"analysis {name!r} returned {key!r}, a results field "
                                      f"(harness.results.model.RunResults.{key}) this value does not "
                                      f"fit ({first['msg']}{f' at {where}' if where else ''}):"
                                      " return that field's type, or rename the key to keep it "
                                      f"under results.json `analyses: {{{name}: ...}}`"
                              ) from None
    own = {key: value.model_dump(mode="json") if hasattr(value, "model_dump") else value
           for key, value in found.items() if key not in known}
    if own:
        try:
            json.dumps(own, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise PluginError(plugin, f"analysis {name!r} returned a field results.json "
                                      f"cannot hold: {exc}") from None
        fields["analyses"] = {name: own}
    return fields
