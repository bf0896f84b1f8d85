"""A fake plugin registering an executor with an option (its factory is called here)."""

from pydantic import Field

from harness.protocols import Options
from harness.registry.hookspecs import hookimpl


class InlineOptions(Options):
    label: str = Field("inline", description="a name for the log")


class InlineExecutor:
    def __init__(self, label: str) -> None:
        self.label = label

    def device(self, requested: str) -> str:
        return "cpu"

    def run(self, ctx, corpus, vocab):
        raise NotImplementedError  # never run here


@hookimpl
def register_executors(register):
    register("fake-inline", lambda options, context: InlineExecutor(options.label),
             options=InlineOptions, description="a fake executor")
