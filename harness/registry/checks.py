"""What a component's registration promises but only building it would otherwise test: option
defaults that their own declared types refuse, and the modules its factory imports.

Pydantic does not validate a field's default, and a factory imports its implementation only
when a run builds it (registration stays cheap). So a plugin whose options class declares
`dim: int = "big"`, or whose factory imports a module that is missing or broken, registers
cleanly and fails only when a run reaches it, often with a message about something else.
`harness validate` and `harness run` (through `harness.spec.preflight`) and the conformance kit
(`harness.testing.check_registration`) call `component_problems`, so such a plugin fails there,
naming the plugin, the component and the option or module.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import textwrap
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import TypeAdapter, ValidationError

from harness.protocols import ComponentInfo, Options


def invalid_defaults(options: type[Options]) -> list[str]:
    """One message per option whose default its own type and constraints refuse."""
    problems = []
    for name, field in options.model_fields.items():
        if field.is_required():
            continue
        default = field.get_default(call_default_factory=True)
        # the declared type with its constraints (ge=0, max_length=...), as pydantic checks
        # a value given for the field
        annotation = (Annotated.__class_getitem__((field.annotation, *field.metadata))
                      if field.metadata else field.annotation)
        try:
            TypeAdapter(annotation).validate_python(default)
        except ValidationError as exc:
            reason = "; ".join(error["msg"] for error in exc.errors())
            problems.append(f"option `{name}` has the default {default!r}, which its own type "
                            f"refuses ({reason}); fix the default in {options.__name__}")
    return problems


def factory_imports(factory: Callable[..., Any]) -> list[str]:
    """The modules `factory` imports in its body (its source's import statements, relative
    ones resolved against the module defining it); [] where its source cannot be read."""
    module = getattr(factory, "__module__", None) or ""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(factory)))
    except (OSError, TypeError, SyntaxError):
        return []
    defining = importlib.import_module(module) if module else None
    package = module if hasattr(defining, "__path__") else module.rpartition(".")[0]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            relative = "." * node.level + (node.module or "")
            names.append(importlib.util.resolve_name(relative, package) if node.level
                         else relative)
    return list(dict.fromkeys(names))


def unimportable(factory: Callable[..., Any]) -> list[str]:
    """One message per module the factory imports that fails to import here."""
    problems = []
    for name in factory_imports(factory):
        try:
            importlib.import_module(name)
        except Exception as exc:  # a missing module, or one that fails as it runs
            problems.append(f"its factory imports {name}, which fails here: "
                            f"{type(exc).__name__}: {exc}")
    return problems


def component_problems(info: ComponentInfo, options: Options | None = None) -> list[str]:
    """What is wrong with a registered component before it is ever built, each message
    starting "plugin 'p': kind 'name': ". Its factory's imports are checked only where its
    availability check, given `options`, lets it run: a component that says it needs a package
    this machine lacks is reported as unavailable instead."""
    problems = invalid_defaults(info.options)
    if info.status(options) == "ok":
        problems += unimportable(info.factory)
    return [f"plugin {info.plugin!r}: {info.kind} {info.name!r}: {p}" for p in problems]
