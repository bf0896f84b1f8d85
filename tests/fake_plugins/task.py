"""A fake plugin registering a downstream task (its factory is never called here)."""

from harness.registry.hookspecs import hookimpl


@hookimpl
def register_tasks(register):
    register("fake-task", lambda options, context: object(), description="a fake task")
