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

from harness.errors import SpecError
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
    except yaml.YAMLError:
        value = raw
    return tuple(int(p) if p.isdigit() else p for p in key.split(".")), value


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> set[Loc]:
    """Apply `a.b=v` overrides to `data` in place (values parsed as YAML); return the paths
    set. `data` is the spec file's freshly read YAML, not a validated spec."""
    changed: set[Loc] = set()
    for text in overrides:
        loc, value = parse_override(text)
        target: Any = data
        for depth, part in enumerate(loc[:-1]):
            nxt = loc[depth + 1]
            if isinstance(target, list) and isinstance(part, int) and part < len(target):
                if isinstance(target[part], str):  # bare component name -> mapping with options
                    target[part] = {"name": target[part]}
                target = target[part]
            elif isinstance(target, dict):
                child = target.get(part)
                if isinstance(child, str) and not isinstance(nxt, int):
                    child = {"name": child}  # a bare name (`executor: ray`) -> a mapping
                    target[part] = child
                elif not isinstance(child, (dict, list)):
                    child = [] if isinstance(nxt, int) else {}
                    target[part] = child
                target = child
            else:
                raise SpecError(f"{text!r}: cannot descend into {dotted(loc[:depth + 1])}",
                                file="--set", field=dotted(loc))
        last = loc[-1]
        if isinstance(target, list) and isinstance(last, int) and last < len(target):
            target[last] = value
        elif isinstance(target, dict):
            target[last] = value
        else:
            raise SpecError(f"{text!r}: no such list item", file="--set",
                            field=dotted(loc))
        changed.add(loc)
    return changed
