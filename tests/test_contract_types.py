"""The data crossing the plugin boundary is typed on the ground floor: the analysis and executor
protocols name the views of what the runner hands them (`harness.protocols.views`) and the report's
data (`harness.protocols.report`), never `Any`, and the runner's own types have every member
the views declare."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness import protocols
from harness.analyses.run import AnalysisRun
from harness.executors import Execution
from harness.executors.jobs import Outcome
from harness.results.model import RunResults
from harness.spec import Component, Spec
from harness.stages.base import RunContext
from harness.stages.corpus import Corpus
from harness.stages.vocab import Vocab
from harness.util.cache import Cache

TYPED = [(protocols.Analysis, "run"), (protocols.Analysis, "sections"),
         (protocols.Analysis, "figures"), (protocols.PlannedAnalysis, "jobs"),
         (protocols.PlannedAnalysis, "run_job"), (protocols.Executor, "run")]
"""The protocol methods whose inputs and outputs cross the boundary."""

VIEWS = [(protocols.AnalysisInputs, AnalysisRun),
         (protocols.RunContextView, RunContext), (protocols.CacheView, Cache),
         (protocols.CorpusView, Corpus), (protocols.VocabView, Vocab),
         (protocols.OutcomeView, Outcome), (protocols.ExecutionView, Execution),
         (protocols.SpecView, Spec), (protocols.EntryView, Component),
         (protocols.ResultsView, RunResults)]
"""Each view and the runner's type that meets it."""


def mentions_any(hint: Any) -> bool:
    """Whether `Any` is the hint or appears anywhere inside it (`Mapping[str, Any]`)."""
    return hint is Any or any(mentions_any(arg) for arg in typing.get_args(hint))


def members(view: type) -> dict[str, Any]:
    """A view's declared members, by name: its properties, methods and attributes, those of
    the views it extends included."""
    found: dict[str, Any] = {}
    for klass in reversed([k for k in view.__mro__ if k.__module__.startswith("harness.")]):
        found.update(dict.fromkeys(inspect.get_annotations(klass)))
        found.update({name: value for name, value in vars(klass).items()
                      if not name.startswith("_")})
    return found


def concrete_member(cls: type, name: str) -> tuple[bool, Any]:
    """(whether `cls` has member `name`, its class attribute or None): a class attribute, a
    property, a dataclass field or a pydantic field."""
    annotated = any(name in inspect.get_annotations(klass) for klass in cls.__mro__)
    return hasattr(cls, name) or annotated, inspect.getattr_static(cls, name, None)


@pytest.mark.parametrize(("protocol", "method"), TYPED,
                         ids=[f"{p.__name__}.{m}" for p, m in TYPED])
def test_the_protocols_carry_no_any(protocol: type, method: str) -> None:
    function = getattr(protocol, method)
    hints = typing.get_type_hints(function)
    parameters = [name for name in inspect.signature(function).parameters if name != "self"]
    assert set(parameters) | {"return"} == set(hints), f"annotate every parameter of {method}"
    untyped = {name: hint for name, hint in hints.items() if mentions_any(hint)}
    assert untyped == {}, f"{protocol.__name__}.{method} names Any: {untyped}"


@pytest.mark.parametrize(("view", "concrete"), VIEWS, ids=[v.__name__ for v, _ in VIEWS])
def test_the_runners_types_have_every_member_their_view_declares(view: type,
                                                                 concrete: type) -> None:
    """A property or attribute of the view is a field, property or attribute of the type; a
    method of the view is a method there, taking the view's parameters by their names."""
    declared = members(view)
    assert declared, f"{view.__name__} declares nothing"
    for name, value in declared.items():
        present, found = concrete_member(concrete, name)
        assert present, f"{concrete.__name__} lacks {name!r}, which {view.__name__} declares"
        if inspect.isfunction(value):
            assert inspect.isfunction(found), f"{concrete.__name__}.{name} is not a method"
            wanted = list(inspect.signature(value).parameters)
            given = inspect.signature(found).parameters
            assert [p for p in wanted if p not in given] == [], f"{concrete.__name__}.{name}"
        else:
            assert not inspect.isfunction(found), (
                f"{concrete.__name__}.{name} is a method; {view.__name__} reads it as a value")


def test_the_report_data_is_the_ground_floors() -> None:
    """`harness.report.elements` re-exports the ground floor's `Section` and `Table`."""
    from harness.report import elements

    assert elements.Section is protocols.Section and elements.Table is protocols.Table
    section = protocols.Section("Title", tables=[protocols.Table("", ["a"], [["1"]])])
    assert section.text == [] and section.figures == [] and section.kind == ""
    assert protocols.Figures == Mapping[str, bytes]


def test_the_example_plugin_is_typed_against_the_views(monkeypatch: pytest.MonkeyPatch) -> None:
    """The example plugin, which imports only `harness.plugin`, annotates its executor and its
    analysis with the views: no `Any` reaches a plugin author who copies it."""
    import importlib

    folder = Path(__file__).parent / "plugins" / "example-plugin"
    monkeypatch.syspath_prepend(str(folder))  # read from the tree, installed or not
    gap = importlib.import_module("v2s_example_plugin.gap")
    processes = importlib.import_module("v2s_example_plugin.processes")
    methods = [processes.ProcessesExecutor.run, gap.LengthGapAnalysis.run,
               gap.LengthGapAnalysis.sections, gap.LengthGapAnalysis.figures]
    for method in methods:
        hints = typing.get_type_hints(method)
        assert not any(mentions_any(hint) for hint in hints.values()), method.__qualname__
    assert typing.get_type_hints(gap.LengthGapAnalysis.run)["run"] is protocols.AnalysisInputs
