"""`check_registration`: a plugin module registers valid components, exactly as the loader
registers an entry point."""

from __future__ import annotations

import inspect
import warnings
from typing import Any

from pydantic import ValidationError

from harness.protocols import ComponentInfo, Options
from harness.registry.checks import component_problems
from harness.testing.failures import fail

HOOKIMPL = "from harness.plugin import hookimpl"
"""Where a plugin imports the marker of its hooks."""


def check_registration(plugin_module: Any, name: str = "plugin-under-test") -> list[ComponentInfo]:
    """Return what `plugin_module` registers, after checking it registers valid components.

    Registers the module with a fresh plugin manager exactly as `harness.registry.loader.load_registry`
    does for an entry point: misspelt hook names are refused (pluggy's `check_pending`), each hook
    is called with a `register` callback whose arguments are validated by
    `harness.registry.components.make_info`, and a hook that raises fails the plugin. Then checks that
    something was registered and that each availability check, called as `harness list` calls
    it, returns None or a message. A function named like a hook but not marked `@hookimpl` is
    never called by the loader: it fails the check when nothing was registered, and is warned
    about (`UserWarning`) when another hook registered something. A component a spec cannot
    list by bare name (a required option without a default, `bare_name_problems`) is warned
    about too, naming the plugin, the component and the option. Whether factories stay cheap
    to register (no heavy imports) is not checkable here.
    """
    import pluggy

    from harness.registry import hookspecs
    from harness.registry.components import Registry
    from harness.registry.loader import register_plugin

    manager = pluggy.PluginManager("harness")
    manager.add_hookspecs(hookspecs)
    registry = Registry()
    error = register_plugin(manager, registry, plugin_module, name)
    if error:
        raise fail(f"plugin {name!r} failed to register: {error}",
                   "`harness list` would show it under failed plugins; fix the hook or the "
                   "arguments it passes to register(...)")
    infos = list(registry)
    hooks = sorted([*hookspecs.HOOK_FOR_KIND.values(), hookspecs.COMMAND_HOOK])
    marked = {impl.function.__name__ for hook in hooks
              for impl in getattr(manager.hook, hook).get_hookimpls() if impl.plugin_name == name}
    unmarked = [h for h in hooks if callable(getattr(plugin_module, h, None)) and h not in marked]
    if not infos and not registry.commands:  # a plugin may add only commands
        advice = (f"decorate {', '.join(unmarked)} with @hookimpl ({HOOKIMPL})" if unmarked
                  else f"implement one of {', '.join(hooks)} with @hookimpl ({HOOKIMPL}) and "
                  "call register(name, factory, ...)")
        raise fail(f"plugin {name!r} registers no component", advice)
    if unmarked:
        warnings.warn(f"plugin {name!r}: {', '.join(unmarked)} "
                      f"{'is' if len(unmarked) == 1 else 'are'} not marked @hookimpl, so the "
                      f"loader never calls it; decorate it with @hookimpl ({HOOKIMPL})",
                      UserWarning, stacklevel=2)
    for info in infos:
        _check_info(info)
    problems = [problem for info in infos for problem in component_problems(info)]
    if problems:
        raise fail("; ".join(problems), "a run would fail when it builds the component; give "
                   "every option a default of its own type, and make the modules the factory "
                   "imports importable (or report them missing from availability())")
    for info in infos:
        for message in bare_name_problems(info):
            warnings.warn(message, UserWarning, stacklevel=2)
    return infos


def bare_name_problems(info: ComponentInfo) -> list[str]:
    """One line per reason a spec that lists the component by bare name (no options) is
    refused, as `harness validate` refuses it: its options class validated from no options,
    as the core resolves a bare-name entry (`harness.spec.resolve`). Mostly a required option
    without a default. A spec that sets the option is accepted, so `check_registration`
    warns of these (`UserWarning`) rather than failing: a plugin may require an option on
    purpose and document that every spec must set it."""
    try:
        info.options.model_validate({})
    except ValidationError as exc:
        where = f"plugin {info.plugin!r}: {info.kind} {info.name!r}"
        found = []
        for error in exc.errors():
            option = ".".join(str(part) for part in error["loc"]) or "(the options)"
            if error["type"] == "missing":
                found.append(f"{where}: option `{option}` is required and has no default, so "
                             f"a spec that lists {info.name!r} by bare name is refused "
                             f"(`harness validate`: {option}: required field is missing); "
                             f"give `{option}` a default in {info.options.__name__}, or "
                             "document that a spec must set it")
            else:
                message = " ".join(str(error["msg"]).split())
                found.append(f"{where}: with no options given, {info.options.__name__} "
                             f"refuses `{option}` ({message}), so a spec that lists "
                             f"{info.name!r} by bare name is refused; make the defaults valid "
                             "together, or document which options a spec must set")
        return found
    return []


def _check_info(info: ComponentInfo) -> None:
    """Raise if a registered component's metadata would misbehave in `harness list` or a run."""
    label = f"{info.kind} {info.name!r}"
    if info.availability is not None:
        try:
            reason = info.unavailable_reason()  # as `harness list` calls it
        except Exception as exc:
            raise fail(f"{label}: availability() raised {type(exc).__name__}: {exc}",
                       "return None when the component can run, else a message saying what "
                       "to install or download") from exc
        if reason is not None and (not isinstance(reason, str) or not reason.strip()):
            raise fail(f"{label}: availability() returned {reason!r}",
                       "return None, or a non-empty message such as 'pip install foo'")
    if not info.description:
        raise fail(f"{label} has no description", "pass description='...' to register: "
                   "`harness list` shows it")
    if not issubclass(info.options, Options):
        raise fail(f"{label}: options is not an Options subclass",
                   "subclass harness.protocols.Options")
    try:
        info.options.model_json_schema()
    except Exception as exc:
        raise fail(f"{label}: its options class has no JSON schema ({exc})",
                   "use plain JSON-compatible field types (int, float, str, bool, lists, "
                   "Literal)") from exc
    try:
        parameters = inspect.signature(info.factory).parameters
    except (TypeError, ValueError):
        return  # builtins and some C callables have no signature; nothing more to check
    positional = [p for p in parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    if len(positional) < 2 and not any(p.kind is p.VAR_POSITIONAL for p in positional):
        raise fail(f"{label}: factory {getattr(info.factory, '__name__', info.factory)!r} "
                   f"takes {len(positional)} positional argument(s)",
                   "the core calls factory(options, context): accept both")
