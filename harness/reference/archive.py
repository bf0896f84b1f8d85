"""The per-sentence statistics a run directory keeps: `statistics.zip`.

Every paired test across encoders (rankings, gains over the floor, the leaderboard's tie
groups) reads each encoder's per-sentence statistics, one (n, k) array per decoder seed and
metric. The run writes them beside results.json, with what a run that joins this one must
share and cannot rebuild bit for bit, so that `harness bundle` and `harness leaderboard` need
the run directory only, not the cache it ran on.

Members (a zip of `.npy` files, deflated; docs/results.md):

- `statistics/DECODER/METRIC/ENCODER/I.npy`: the statistics of the I-th decoder seed (the
  signature's `decoders.DECODER.seeds` gives the seeds in that order);
- `chance/METRIC/ENCODER.npy`: the statistics at the encoder's chance level, where the metric
  has one (cosine);
- `shared/vocab/KEY/...`: the vocabulary artifact (the sentencepiece model and its subword
  vectors) under its cache key;
- `shared/nll/KEY/...`: the test sentences' NLLs under each unconditional model (`info`), under
  the cache key of the artifact that holds them;
- `index.json`: where each of the above lies (`ArchiveIndex`).
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.results.records import Record

STATISTICS_ARCHIVE = "statistics.zip"
INDEX = "index.json"


class SharedArtifact(Record):
    """A cache artifact a joined run shares with its reference: its stage, key, the members
    that hold its files, and for an unconditional model's NLLs, the decoder and seed."""

    stage: str
    key: str
    members: list[str] = []
    decoder: str | None = None
    seed: int | None = None


class ArchiveIndex(Record):
    """`index.json`: decoder -> metric -> encoder -> the member of each seed's statistics;
    metric -> encoder -> the member of the chance-level statistics; the shared artifacts."""

    statistics: dict[str, dict[str, dict[str, list[str]]]] = {}
    chance: dict[str, dict[str, str]] = {}
    shared: list[SharedArtifact] = []


Statistics = dict[tuple[str, str], dict[str, list[np.ndarray]]]
"""(decoder, metric) -> encoder -> the per-sentence statistics of each seed."""
Chance = dict[str, dict[str, np.ndarray]]
"""metric -> encoder -> the per-sentence statistics at the encoder's chance level."""


EXACT_TYPES = (np.dtype(np.uint8), np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.float32))
"""The narrower types a statistics array is stored as when it holds its values exactly (counts
and 0/1 outcomes mostly): a bundle of 30 encoders x 3 seeds stays a few MB."""


def compact(array: np.ndarray) -> np.ndarray:
    """`array` as the narrowest of `EXACT_TYPES` that holds every value exactly, else as is;
    read back as float64 (`Archive.array`), it is the same array bit for bit."""
    array = np.asarray(array)
    for dtype in EXACT_TYPES:
        with np.errstate(invalid="ignore", over="ignore"):  # NaN or too large: not exact
            narrow = array.astype(dtype)
        if np.array_equal(narrow.astype(array.dtype), array, equal_nan=True):
            return narrow
    return array


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, compact(array), allow_pickle=False)
    return buffer.getvalue()


def artifact_files(directory: Path) -> dict[str, bytes]:
    """Relative path -> content of every file of a cache artifact's directory."""
    return {file.relative_to(directory).as_posix(): file.read_bytes()
            for file in sorted(p for p in directory.rglob("*") if p.is_file())}


def write_archive(path: Path, statistics: Statistics, chance: Chance,
                  shared: Iterable[tuple[SharedArtifact, Mapping[str, bytes]]] = (),
                  extra: Mapping[str, bytes] | None = None) -> None:
    """Write `path` atomically: every encoder's statistics and chance-level statistics, and
    each shared artifact (its stage, key, decoder and seed; its files, relative path ->
    content); `extra` adds members (a bundle's manifest)."""
    index = ArchiveIndex()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for (decoder, metric), by_encoder in statistics.items():
            for encoder, seeds in by_encoder.items():
                members = []
                for i, array in enumerate(seeds):
                    member = f"statistics/{decoder}/{metric}/{encoder}/{i}.npy"
                    archive.writestr(member, _npy(array))
                    members.append(member)
                index.statistics.setdefault(decoder, {}).setdefault(metric, {})[encoder] = members
        for metric, by_encoder in chance.items():
            for encoder, array in by_encoder.items():
                member = f"chance/{metric}/{encoder}.npy"
                archive.writestr(member, _npy(array))
                index.chance.setdefault(metric, {})[encoder] = member
        for artifact, files in shared:
            members = []
            for name, data in files.items():
                member = f"shared/{artifact.stage}/{artifact.key}/{name}"
                archive.writestr(member, data)
                members.append(member)
            index.shared.append(artifact.model_copy(update={"members": members}))
        archive.writestr(INDEX, index.model_dump_json(indent=1))
        for member, data in (extra or {}).items():
            archive.writestr(member, data)
    os.replace(tmp, path)


class Archive:
    """A `statistics.zip` (or a bundle, which holds the same members) opened for reading."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.zip = zipfile.ZipFile(path)
            self.index = ArchiveIndex.model_validate_json(self.zip.read(INDEX))
        except (OSError, zipfile.BadZipFile, KeyError, ValueError) as exc:
            from harness.errors import HarnessError

            raise HarnessError(f"{path}: not a statistics archive or bundle of v2s-harness "
                               f"({exc}); make one with `harness run` or `harness bundle`"
                               ) from None

    def array(self, member: str) -> np.ndarray:
        """The statistics stored as `member`, as float64 (as the score stage wrote them)."""
        return np.load(io.BytesIO(self.zip.read(member)), allow_pickle=False).astype(np.float64)

    def read_json(self, member: str) -> Any:
        """The JSON stored as `member`."""
        return json.loads(self.zip.read(member))

    def statistics(self, encoders: Sequence[str] | None = None) -> Statistics:
        """(decoder, metric) -> encoder -> the statistics of each seed (of `encoders` only,
        when given)."""
        return {(decoder, metric): {encoder: [self.array(m) for m in members]
                                    for encoder, members in by_encoder.items()
                                    if encoders is None or encoder in encoders}
                for decoder, by_metric in self.index.statistics.items()
                for metric, by_encoder in by_metric.items()}

    def chance(self, encoders: Sequence[str] | None = None) -> Chance:
        """metric -> encoder -> the chance-level statistics (of `encoders` only, when given)."""
        return {metric: {encoder: self.array(member) for encoder, member in by_encoder.items()
                         if encoders is None or encoder in encoders}
                for metric, by_encoder in self.index.chance.items()}

    def files(self, artifact: SharedArtifact) -> dict[str, bytes]:
        """Relative path -> content of every file of a shared artifact."""
        prefix = f"shared/{artifact.stage}/{artifact.key}/"
        return {member[len(prefix):]: self.zip.read(member) for member in artifact.members}

    def install(self, artifact: SharedArtifact, directory: Path) -> None:
        """Write the files of a shared artifact into `directory` (a cache artifact's partial
        directory)."""
        for name, data in self.files(artifact).items():
            target = directory / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    def close(self) -> None:
        """Close the file."""
        self.zip.close()
