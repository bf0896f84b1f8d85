"""`--set KEY.PATH=VALUE`: overrides applied to a spec's data before it is validated.

Values are parsed as YAML (`--set generation.beam=1`, `--set encoders=[avg,hier]`); a bare
name becomes a mapping with `name:` when an override sets something under it
(`--set decoders.0.hidden=32` on `decoders: [mos-lstm]`, `--set executor.cpus=2` on
`executor: ray`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import yaml

from harness.errors import SpecError, close_names
from harness.spec.positions import Loc, dotted


def parse_override(text: str) -> tuple[Loc, Any]:
    """Return the path and the YAML-parsed value of one `KEY.PATH=VALUE` override."""
    if "=" not in text:
        raise SpecError(f"{text!r}: expected KEY.PATH=VALUE", file="--set")
    key, raw = text.split("=", 1)
    if not re.fullmatch(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*", key):
        raise SpecError(f"{text!r}: malformed key path", file="--set")
    try:
        value = yaml.safe_load(raw) if raw.strip() else raw
    except yaml.YAMLError as exc:
        if raw.lstrip()[:1] in ("[", "{"):  # meant as a YAML list or mapping: say where it breaks
            mark = getattr(exc, "problem_mark", None)
            where = f" at column {mark.column + 1}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or "malformed"
            raise SpecError(f"{text!r}: the value is not valid YAML{where}: {problem}",
                            file="--set", field=key) from None
        value = raw  # anything else that YAML cannot read is taken as the text it is
    return tuple(int(p) if p.isdigit() else p for p in key.split(".")), value


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> set[Loc]:
    """Apply `a.b=v` overrides to `data` in place (values parsed as YAML); return the paths
    set. `data` is the spec file's freshly read YAML, not a validated spec. A top-level
    `SECTION=null` removes the section, so that it takes its default (`downstream=null`: no
    downstream tasks)."""
    changed: set[Loc] = set()
    for text in overrides:
        loc, value = parse_override(text)
        target: Any = data
        for depth, part in enumerate(loc[:-1]):
            nxt = loc[depth + 1]
            if isinstance(target, list):
                _check_index(text, loc[:depth], target, part)
                if isinstance(target[part], str):  # bare component name -> mapping with options
                    target[part] = {"name": target[part]}
                target = target[part]
            elif isinstance(target, dict):
                child = target.get(part)
                if child is None and isinstance(nxt, int):
                    raise SpecError(f"{text!r}: the spec has no list {dotted(loc[:depth + 1])}"
                                    f"{_did_you_mean(part, target)}", file="--set",
                                    field=dotted(loc))
                if isinstance(child, str) and not isinstance(nxt, int):
                    child = {"name": child}  # a bare name (`executor: ray`) -> a mapping
                    target[part] = child
                elif child is not None and not isinstance(child, (dict, list, str)):
                    raise SpecError(f"{text!r}: {dotted(loc[:depth + 1])} is a single value "
                                    f"({child!r}), with no {nxt!r} inside", file="--set",
                                    field=dotted(loc))
                elif not isinstance(child, (dict, list)):
                    child = {}
                    target[part] = child
                target = child
            else:
                raise SpecError(f"{text!r}: {dotted(loc[:depth])} is a single value, with no "
                                f"{part!r} inside", file="--set", field=dotted(loc))
        last = loc[-1]
        if isinstance(target, list):
            _check_index(text, loc[:-1], target, last)
            target[last] = value
        elif value is None and len(loc) == 1:
            data.pop(last, None)
        else:
            target[last] = value
        changed.add(loc)
    return changed


def _check_index(text: str, where: Loc, items: list[Any], index: Any) -> None:
    """Refuse a list position that is not an index into `items`, saying how long it is."""
    if isinstance(index, int) and index < len(items):
        return
    count = f"{len(items)} entr{'y' if len(items) == 1 else 'ies'}"
    span = f" (0 to {len(items) - 1})" if items else ""
    raise SpecError(f"{text!r}: {dotted(where)} has {count}{span}, so {index!r} names none of "
                    "them", file="--set", field=dotted((*where, index)))


def _did_you_mean(key: Any, mapping: dict[str, Any]) -> str:
    close = close_names(str(key), map(str, mapping), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
