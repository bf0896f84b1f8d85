"""Checks of the spec's `probes:` section beyond its schema (`harness.analyses.probes.spec`): analogy
files resolved when the spec is read (made absolute, required to exist), probes refused in a
spec without decoders, and malformed analogy files listed by preflight, before any training."""

from __future__ import annotations

from pathlib import Path

from harness.analyses.probes.spec import probes_settings
from harness.errors import HarnessError, SpecError
from harness.spec.positions import Positions
from harness.spec.schema import Spec


def resolve_probes(spec: Spec, positions: Positions, spec_folder: Path) -> Spec:
    """The spec with its analogy files made absolute; raise for a missing one, and for probes
    in a spec without decoders."""
    section = probes_settings(spec)
    if section.active and not spec.decoders:
        raise positions.error("probes decode with trained decoders; the spec has none "
                              "(add `decoders:` or remove `probes:`)", ("probes",))
    sources = []
    for index, source in enumerate(section.analogies):
        if source.path is not None:
            loc = ("probes", "analogies", index, "path")
            path = source.path if source.path.is_absolute() else (
                positions.base(loc, spec_folder) / source.path)
            if not path.is_file():
                raise positions.error(f"file not found: {path}", loc)
            source = source.model_copy(update={"path": path})
        sources.append(source)
    if not sources:
        return spec
    return spec.with_section("probes", section.model_copy(update={"analogies": sources}))


def probe_problems(spec: Spec) -> list[SpecError]:
    """Analogy files that are there but malformed: found before any training."""
    from harness.analyses.probes.analogies import read_analogy_set

    problems = []
    for index, source in enumerate(probes_settings(spec).analogies):
        if source.path is not None and source.path.is_file():
            try:
                read_analogy_set(source.path, source.form)
            except HarnessError as exc:
                problems.append(spec.positions.error(str(exc),
                                                     ("probes", "analogies", index, "path")))
    return problems
