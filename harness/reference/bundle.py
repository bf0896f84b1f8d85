"""Reference bundles: one file with a run's rows that another run joins (`harness bundle`).

A bundle is a zip holding the members of the run's statistics archive
(`harness.reference.archive`: every encoder's per-sentence statistics per decoder seed and
metric, the chance-level statistics, the shared vocabulary and unconditional NLLs) and
`bundle.json`, the manifest (`BundleManifest`, docs/results.md "Bundles"): the schema tag, the
run's name, its protocol signature and provenance, the spec it ran, and per encoder what it is,
its encoder x decoder rows (scores, intervals, training) and its downstream task results with
their seeds. Only the rows the run computed itself are bundled: a run that joined another
bundle leaves that bundle's rows to it.
"""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import Any

from pydantic import Field

from harness.errors import HarnessError
from harness.protocols import TaskResult
from harness.reference.archive import STATISTICS_ARCHIVE, Archive, write_archive
from harness.results.model import (
    EncoderDescription,
    PairResult,
    Provenance,
    RunResults,
    load_results,
)
from harness.results.records import Record
from harness.results.signature import Signature
from harness.util.cache import file_digest

BUNDLE_SCHEMA = "v2s-harness/bundle/1"
MANIFEST = "bundle.json"
ID_DIGITS = 12
"""Hex digits of a bundle's sha256 in its id (`NAME@DIGITS`), which marks its rows."""


class BundledEncoder(Record):
    """One encoder of a bundle: what it is (`description`), its encoder x decoder rows, and
    its downstream results per task (scores with the seeds they were computed at)."""

    description: EncoderDescription | None = None
    runs: list[PairResult] = []
    downstream: dict[str, TaskResult] = {}


class BundleManifest(Record):
    """`bundle.json`: the schema tag, the bundled run's name, signature, provenance and spec
    record, and its encoders in the run's order."""

    schema_tag: str = Field(BUNDLE_SCHEMA, alias="schema")
    name: str
    signature: Signature
    provenance: Provenance = Provenance()
    spec: dict[str, Any] = {}
    encoders: dict[str, BundledEncoder] = {}


class Bundle:
    """A bundle file opened for reading: its manifest, statistics archive, sha256 and id."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.archive = Archive(path)
        if MANIFEST not in self.archive.zip.namelist():
            raise HarnessError(f"{path}: a statistics archive, not a bundle (it has no "
                               f"{MANIFEST}); make a bundle with `harness bundle RUN_DIR "
                               "--out FILE`")
        manifest = self.archive.read_json(MANIFEST)
        schema = manifest.get("schema")
        if schema != BUNDLE_SCHEMA:
            raise HarnessError(f"{path}: bundle schema {schema!r}, this harness reads "
                               f"{BUNDLE_SCHEMA!r}; make the bundle again with this version's "
                               "`harness bundle`")
        self.manifest = BundleManifest.model_validate(manifest)
        self.sha256 = file_digest(path)

    @property
    def id(self) -> str:
        """`NAME@DIGITS`: the bundled run's name and the bundle's sha256's first digits."""
        return f"{self.manifest.name}@{self.sha256[:ID_DIGITS]}"

    @property
    def signature(self) -> Signature:
        """The bundled run's protocol signature."""
        return self.manifest.signature


SPEC_KEYS = ("name", "seed", "corpus", "vocab", "encode", "decoders", "generation", "metrics",
             "downstream", "comparison")
"""The sections of the bundled run's spec a bundle keeps: those that decide its numbers and how
they are compared (the analyses' sections stay with the run)."""


def portable(value: Any) -> Any:
    """`value` with every absolute path in it cut to its file name: a bundle is read on other
    machines, and says nothing of where its run's files lay."""
    if isinstance(value, dict):
        return {key: portable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [portable(item) for item in value]
    if isinstance(value, str) and PurePath(value).is_absolute():
        return PurePath(value).name
    return value


def own_encoders(results: RunResults) -> list[str]:
    """The encoders whose rows a run computed itself (not a joined bundle's), in its order."""
    joined = set(results.reference.encoders) if results.reference is not None else set()
    names = [r.encoder for r in results.runs] + list(results.encoders or {})
    names += list(results.downstream_details or {})
    return [name for name in dict.fromkeys(names) if name not in joined]


def make_bundle(run_dir: Path, out: Path) -> BundleManifest:
    """Write the bundle of the run in `run_dir` to `out` (module docstring); return its
    manifest. The run must have a signature and a statistics archive (a run of this
    version writes both)."""
    results = load_results(run_dir)
    if results.signature is None:
        raise HarnessError(f"{run_dir}: results.json has no protocol signature (a run of an "
                           "older version); run the spec again, from its cache, to bundle it")
    path = run_dir / STATISTICS_ARCHIVE
    if not path.is_file():
        raise HarnessError(f"{run_dir}: no {STATISTICS_ARCHIVE} (a run of an older version, or "
                           "a table run); run the spec again, from its cache, to bundle it")
    archive = Archive(path)
    own = own_encoders(results)
    if not own:
        raise HarnessError(f"{run_dir}: the run computed no encoder's rows itself; nothing to "
                           "bundle")
    details = results.downstream_details or {}
    descriptions = {name: EncoderDescription.model_validate(portable(d.model_dump(mode="json")))
                    for name, d in (results.encoders or {}).items()}
    encoders = {name: BundledEncoder(
        description=descriptions.get(name),
        runs=[r for r in results.runs if r.encoder == name],
        downstream=details.get(name, {})) for name in own}
    spec = {key: value for key, value in results.spec.model_dump(mode="json").items()
            if key in SPEC_KEYS}
    provenance = Provenance.model_validate(
        portable(results.provenance.model_copy(update={"cache": None}).model_dump(mode="json")))
    manifest = BundleManifest(name=results.spec.name or run_dir.name,
                              signature=results.signature, provenance=provenance,
                              spec=portable(spec), encoders=encoders)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_archive(out, archive.statistics(own), archive.chance(own),
                  [(artifact, archive.files(artifact)) for artifact in archive.index.shared],
                  extra={MANIFEST: manifest.model_dump_json(by_alias=True, indent=1).encode()})
    archive.close()
    return manifest
