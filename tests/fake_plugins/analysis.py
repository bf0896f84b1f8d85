"""A fake plugin registering an analysis that reads the downstream analysis's scores."""

from pydantic import Field

from harness.protocols import Options
from harness.registry.hookspecs import hookimpl


class CountOptions(Options):
    label: str = Field("count", description="a name for the field")


class CountAnalysis:
    def __init__(self, label: str) -> None:
        self.label = label

    def run(self, run):
        return {self.label: len(run.fields.get("downstream") or {})}

    def sections(self, results, figures):
        return []

    def figures(self, results):
        return {}


@hookimpl
def register_analyses(register):
    register("fake-count", lambda options, context: CountAnalysis(options.label),
             options=CountOptions, needs=("downstream",), description="a fake analysis")
