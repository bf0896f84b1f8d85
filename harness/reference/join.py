"""Joining a reference bundle: a run that names one (`reference:` in the spec, or
`harness run SPEC --reference FILE`) trains and scores only the spec's encoders the bundle
lacks, and every analysis sees the bundle's rows beside its own.

In the run's order:

1. `open_join` reads the bundle and the spec's `reference.rerun` (encoders of the spec to
   train again although the bundle has them: their bundled rows are labelled NAME@BUNDLE, so
   the two can be compared on the same sentences).
2. `install_shared` puts what a joined run must share with the reference and cannot rebuild
   bit for bit into the cache, under the keys the run computes for them: the vocabulary (a
   fastText model trained again is not the same) and the unconditional models' test NLLs
   (`info`). The retrieval distractors and the chance pairing are drawn from the spec's seed
   and rebuild identically (tests/test_reference.py).
3. `check_signature` refuses a bundle of another protocol before anything is trained: one
   line per differing field of the signatures (`harness.reference.signature`).
4. `joined_spec` keeps the spec's own encoders for the jobs and tells the spec the joined
   encoders' labels, registered names and controls (`Spec.joined`).
5. `reference_outcomes` turns each bundled encoder into the `Outcome` its job would
   have returned (rows marked with the bundle's id; statistics extracted into the cache once
   per bundle), which the runner puts before the run's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.executors.jobs import Outcome
from harness.reference.bundle import Bundle
from harness.results.model import JoinedReference
from harness.results.signature import Signature, describe_difference, differences
from harness.spec import Spec
from harness.stages.score import CHANCE_FILE, STATISTICS_FILE
from harness.util.cache import Cache

EXTRACT_VERSION = 1


@dataclass(frozen=True)
class Join:
    """A bundle a run joins: `labels` maps each bundled encoder to its label in the run (its
    name, or NAME@BUNDLE for one the run trains again, `rerun`)."""

    bundle: Bundle
    labels: dict[str, str]
    rerun: list[str]

    @property
    def record(self) -> JoinedReference:
        """What results.json says of the joined bundle."""
        return JoinedReference(file=self.bundle.path.name, sha256=self.bundle.sha256,
                               id=self.bundle.id, signature=self.bundle.signature.text,
                               provenance=self.bundle.manifest.provenance,
                               encoders={label: name for name, label in self.labels.items()},
                               rerun=self.rerun)


def open_join(spec: Spec) -> Join | None:
    """The bundle `spec` joins, or None; refuses a `reference.rerun` name that is not both in
    the bundle and among the spec's encoders."""
    if spec.reference is None:
        return None
    bundle = Bundle(Path(spec.reference.bundle))
    bundled = list(bundle.manifest.encoders)
    own = [e.name for e in spec.components("encoder")]
    for name in spec.reference.rerun:
        if name not in bundled:
            raise HarnessError(f"reference.rerun: {name!r} is not in bundle {bundle.path.name} "
                               f"(it has {', '.join(bundled)})")
        if name not in own:
            raise HarnessError(f"reference.rerun: {name!r} is not among the spec's encoders; "
                               "add it to `encoders:` to train it again")
    labels = {name: f"{name}@{bundle.manifest.name}" if name in spec.reference.rerun else name
              for name in bundled}
    clash = sorted(set(labels.values()) & (set(own) - set(spec.reference.rerun)) - set(bundled))
    if clash:
        raise HarnessError(f"reference: the label {clash[0]!r} of a bundled encoder is also an "
                           "encoder of the spec; rename neither, leave one out")
    return Join(bundle=bundle, labels=labels, rerun=list(spec.reference.rerun))


def install_shared(join: Join, cache: Cache) -> int:
    """Put the bundle's shared artifacts (vocabulary, unconditional NLLs) into `cache` where it
    lacks them; return how many it installed."""
    archive = join.bundle.archive
    installed = 0
    for artifact in archive.index.shared:
        installed += cache.install(artifact.stage, artifact.key,
                                   lambda directory, a=artifact: archive.install(a, directory))
    return installed


class SignatureMismatch(HarnessError):
    """A bundle made under another protocol: one line per differing field."""


def check_signature(join: Join, ours: Signature) -> None:
    """Refuse the bundle unless its signature is the run's (`SignatureMismatch`, naming every
    differing field with both values); a field `ours` lacks (`vocab.sha256` before the
    vocabulary is built) is not compared."""
    found = [(name, mine, theirs) for name, mine, theirs
             in differences(ours, join.bundle.signature) if name in ours.fields]
    if not found:
        return
    lines = [describe_difference(name, mine, theirs, our_side="this run",
                                 their_side="the bundle") for name, mine, theirs in found]
    raise SignatureMismatch(
        f"reference bundle {join.bundle.path.name} was made under another protocol "
        f"({len(found)} field{'s' if len(found) > 1 else ''} of the signature "
        f"differ{'' if len(found) > 1 else 's'}; the "
        "bundle's numbers cannot be compared with this run's):\n" + "\n".join(lines))


def joined_spec(join: Join, spec: Spec) -> Spec:
    """The spec the joined run's jobs and analyses read: its own encoders only (those the
    bundle lacks, and the re-run ones), and the joined encoders' labels, registered names and
    controls."""
    bundled = join.bundle.manifest.encoders
    own = [e for e in spec.components("encoder") if e.name not in bundled or e.name in join.rerun]
    encoders = {}
    for name, label in join.labels.items():
        description = bundled[name].description
        encoders[label] = (description.name if description is not None else name,
                           bool(description is not None and description.control))
    return spec.joined(encoders, own)


def reference_outcomes(join: Join, cache: Cache) -> list[Outcome]:
    """Each bundled encoder as the outcome of a job that ran elsewhere: its rows (relabelled,
    marked with the bundle's id), its downstream results and description, and the files of its
    statistics, extracted from the bundle into the cache once."""
    bundle = join.bundle
    archive = bundle.archive
    names = list(bundle.manifest.encoders)

    def extract(directory: Path) -> dict[str, Any]:
        chance = archive.index.chance
        for decoder, by_metric in archive.index.statistics.items():
            for metric, by_encoder in by_metric.items():
                for name, members in by_encoder.items():
                    for i, member in enumerate(members):
                        target = directory / str(names.index(name)) / decoder / metric / str(i)
                        target.mkdir(parents=True, exist_ok=True)
                        np.save(target / STATISTICS_FILE, archive.array(member))
                        if i == 0 and name in chance.get(metric, {}):
                            np.save(target / CHANCE_FILE, archive.array(chance[metric][name]))
        return {"bundle": bundle.id, "encoders": len(names)}

    root = cache.produce("bundle", {"version": EXTRACT_VERSION, "sha256": bundle.sha256},
                         extract, label=bundle.id)
    outcomes = []
    for index, (name, encoder) in enumerate(bundle.manifest.encoders.items()):
        label = join.labels[name]
        statistics = {
            decoder: {metric: [root / str(index) / decoder / metric / str(i) / STATISTICS_FILE
                               for i in range(len(by_encoder[name]))]
                      for metric, by_encoder in by_metric.items() if name in by_encoder}
            for decoder, by_metric in archive.index.statistics.items()}
        runs = [run.model_copy(update={"encoder": label, "bundle": bundle.id})
                for run in encoder.runs]
        outcomes.append(Outcome(
            encoder=label, runs=runs,
            statistics={d: m for d, m in statistics.items() if m},
            tasks=list(encoder.downstream.values()), device="",
            description=encoder.description))
    return outcomes
