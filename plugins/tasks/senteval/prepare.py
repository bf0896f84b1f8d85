"""Downloading and preparing each group of SentEval's `get_transfer_data.bash`, as it does.

One function per group of the script (`prepare_sst`, `prepare_sts`, ...), each given a
`Workspace`: the data directory, where downloads go and the sources' base URLs. The text
preprocessing is the script's (`harness.plugin`'s text preparation): the PTB sed script for
MR/CR/SUBJ/MPQA, quotes removed from TREC, the Moses tokenizer (sacremoses, no Perl) for STS
(lower-cased), STS-B (lower-cased) and SICK. Data files are written atomically, so a killed run
never leaves a half-written one. `download` runs these and verifies what they leave.

The addresses (`SOURCES`, `STS_ARCHIVES`) follow facebookresearch/SentEval's
data/downstream/get_transfer_data.bash as on its main branch since its files left the
`s3.amazonaws.com/senteval` bucket (SentEval issue #59, February 2019): MR/CR/SUBJ/MPQA's
archive and MRPC's two files come from `dl.fbaipublicfiles.com/senteval/senteval_data`. The
copy of that version we read carried no commit id; the version before it, commit 2a7c3da8,
differs from it only in those addresses (and COCO's, not fetched here). File names, archive
layouts and preprocessing did not change, so neither did what each group here does.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from harness.plugin import (
    DataError,
    fetch,
    moses_lowercase,
    moses_tokenize,
    ptb_file,
    strip_quotes,
)

from .layout import STS_SUBSETS, STS_YEARS

STS_BASE = "http://ixa2.si.ehu.es/stswiki/images"
"""Base URL of the STS wiki's files (STS12-16 and STS-B)."""


class StsArchive(NamedTuple):
    """An STS year's test set: URL path under `STS_BASE`, archive, its top directory, and the
    prefix of its files (renamed `STS.*` where it differs)."""

    path: str
    name: str
    directory: str
    prefix: str = "STS"


STS_ARCHIVES: dict[str, StsArchive] = dict(zip(STS_YEARS, (
    StsArchive("4/40", "STS2012-en-test.zip", "test-gold"),
    StsArchive("2/2f", "STS2013-en-test.zip", "test-gs"),
    StsArchive("8/8c", "STS2014-en-test.zip", "sts-en-test-gs-2014"),
    StsArchive("d/da", "STS2015-en-test.zip", "test_evaluation_task2a"),
    StsArchive("9/98", "STS2016-en-test.zip", "sts2016-english-with-gs-v1.0", "STS2016"),
), strict=True))
"""STS year -> its archive, in the order of the task table's years."""

SENTEVAL_FILES = "https://dl.fbaipublicfiles.com/senteval/senteval_data"
"""SentEval's own copies (MR/CR/SUBJ/MPQA's archive, MRPC); once https://s3.amazonaws.com/senteval."""

SOURCES: dict[str, str] = {
    "TREC": "http://cogcomp.cs.illinois.edu/Data/QA/QC",
    "SICK": "http://alt.qcri.org/semeval2014/task1/data/uploads",
    "BINCLASSIF": SENTEVAL_FILES,
    "SSTbin": "https://raw.githubusercontent.com/PrincetonML/SIF/master/data",
    "SSTfine": "https://raw.githubusercontent.com/AcademiaSinicaNLPLab/sentiment_dataset/master/data",
    "STSBenchmark": f"{STS_BASE}/4/48",
    **{year: f"{STS_BASE}/{archive.path}" for year, archive in STS_ARCHIVES.items()},
    "MRPC": SENTEVAL_FILES,
}
"""Source name -> base URL, as in get_transfer_data.bash; `base_urls` may replace any of them."""

BINARY_SOURCES = {  # file in the zip -> file in data/downstream
    "data/rt10662/rt-polarity.pos": "MR/rt-polarity.pos",
    "data/rt10662/rt-polarity.neg": "MR/rt-polarity.neg",
    "data/customerr/custrev.pos": "CR/custrev.pos",
    "data/customerr/custrev.neg": "CR/custrev.neg",
    "data/subj/subj.subjective": "SUBJ/subj.subjective",
    "data/subj/subj.objective": "SUBJ/subj.objective",
    "data/mpqa/mpqa.pos": "MPQA/mpqa.pos",
    "data/mpqa/mpqa.neg": "MPQA/mpqa.neg",
}


@dataclass
class Workspace:
    """What the preparation steps share: the data directory, downloads and source URLs."""

    root: Path
    downloads: Path
    base_urls: Mapping[str, str]
    progress: bool

    def get(self, source: str, name: str) -> Path:
        """Return the downloaded file `name` of `source` (downloading it if needed)."""
        url = f"{self.base_urls[source].rstrip('/')}/{name}"
        return fetch(url, self.downloads / source / name.replace("/", "_"), progress=self.progress)


def _write(path: Path, data: bytes) -> None:
    """Write `path` atomically (a killed run never leaves a half-written data file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    temporary.replace(path)


def _lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _column(line: bytes, index: int) -> bytes:
    """Return field `index` as `cut -f` does: a line without a tab is printed whole."""
    parts = line.split(b"\t")
    if len(parts) == 1:
        return line
    return parts[index] if index < len(parts) else b""


def _tokenized_columns(lines: list[bytes], indices: Iterable[int],
                       lowercase: bool) -> list[list[bytes]]:
    """Return each column of `indices` run through Moses (`cut -fN | tokenizer.perl [| lc]`)."""
    columns = []
    for index in indices:
        texts = (moses_tokenize(_column(line, index).decode("utf-8", "replace")) for line in lines)
        columns.append([(moses_lowercase(t) if lowercase else t).encode("utf-8") for t in texts])
    return columns


def _paste(*columns: list[bytes]) -> bytes:
    return b"".join(b"\t".join(row) + b"\n" for row in zip(*columns))


def prepare_sst(workspace: Workspace) -> None:
    """Write SST/binary and SST/fine: SentEval's SST-2 and SST-5 files, as downloaded."""
    for split in ("train", "dev", "test"):
        binary = workspace.get("SSTbin", f"sentiment-{split}")
        _write(workspace.root / "SST" / "binary" / f"sentiment-{split}", binary.read_bytes())
        fine = workspace.get("SSTfine", f"stsa.fine.{split}")
        _write(workspace.root / "SST" / "fine" / f"sentiment-{split}", fine.read_bytes())


def _extract_zip(archive: Path, target: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(target)
    except zipfile.BadZipFile:
        archive.unlink()
        raise DataError(f"{archive}: not a zip archive (a broken download?); deleted, run "
                        "again to download it anew") from None


def prepare_sts(workspace: Workspace, year: str) -> None:
    """Write STS/<year>-en-test: the year's archive, pairs Moses-tokenized and lower-cased."""
    source = STS_ARCHIVES[year]
    archive = workspace.get(year, source.name)
    sts = workspace.root / "STS"
    with tempfile.TemporaryDirectory(dir=_mkdir(sts), prefix=f".{year}-") as scratch:
        _extract_zip(archive, Path(scratch))
        extracted = Path(scratch) / source.directory
        if not extracted.is_dir():
            raise DataError(f"{archive}: no directory {source.directory}/ inside; the "
                            "archive is not the one SentEval's script expects")
        for subset in STS_SUBSETS[year]:
            if source.prefix != "STS":
                for kind in ("input", "gs"):
                    old = extracted / f"{source.prefix}.{kind}.{subset}.txt"
                    if old.exists():
                        old.replace(extracted / f"STS.{kind}.{subset}.txt")
            inputs = extracted / f"STS.input.{subset}.txt"
            if not inputs.exists():
                raise DataError(f"{archive}: {source.directory}/{inputs.name} missing")
            lines = _lines(inputs.read_bytes())
            inputs.write_bytes(_paste(*_tokenized_columns(lines, (0, 1), True)))
        final = sts / f"{year}-en-test"
        if final.exists():
            shutil.rmtree(final)
        extracted.replace(final)


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def prepare_stsb(workspace: Workspace) -> None:
    """Write STS/STSBenchmark: fields 1-5 kept, the pair Moses-tokenized and lower-cased."""
    archive = workspace.get("STSBenchmark", "Stsbenchmark.tar.gz")
    sts = workspace.root / "STS"
    with tempfile.TemporaryDirectory(dir=_mkdir(sts), prefix=".STSB-") as scratch:
        try:
            with tarfile.open(archive, "r:gz") as bundle:
                bundle.extractall(scratch, filter="data")
        except (tarfile.TarError, OSError, EOFError):
            archive.unlink()
            raise DataError(f"{archive}: not a gzipped tar archive (a broken download?); "
                            "deleted, run again to download it anew") from None
        extracted = Path(scratch) / "stsbenchmark"
        for split in ("train", "dev", "test"):
            path = extracted / f"sts-{split}.csv"
            if not path.exists():
                raise DataError(f"{archive}: stsbenchmark/{path.name} missing")
            lines = _lines(path.read_bytes())
            kept = [b"\t".join(line.split(b"\t")[:5]) for line in lines]  # cut -f1,2,3,4,5
            first, second = _tokenized_columns(lines, (5, 6), True)
            path.write_bytes(_paste(kept, first, second))
        final = sts / "STSBenchmark"
        if final.exists():
            shutil.rmtree(final)
        extracted.replace(final)


def prepare_trec(workspace: Workspace) -> None:
    """Write TREC's two files with every backquote and apostrophe removed."""
    for split in ("train_5500", "TREC_10"):
        source = workspace.get("TREC", f"{split}.label")
        _write(workspace.root / "TREC" / f"{split}.label", strip_quotes(source.read_bytes()))


def prepare_sick(workspace: Workspace) -> None:
    """Write SICK's three files: the pair Moses-tokenized, ids and judgments kept."""
    for split in ("train", "trial", "test_annotated"):
        archive = workspace.get("SICK", f"sick_{split}.zip")
        with tempfile.TemporaryDirectory(dir=_mkdir(workspace.root / "SICK"),
                                         prefix=".sick-") as scratch:
            _extract_zip(archive, Path(scratch))
            source = Path(scratch) / f"SICK_{split}.txt"
            if not source.exists():
                raise DataError(f"{archive}: SICK_{split}.txt missing")
            header, *rows = _lines(source.read_bytes())
            ids = [_column(row, 0) for row in rows]
            judgments = [b"\t".join(row.split(b"\t")[3:5]) for row in rows]  # cut -f4,5
            first, second = _tokenized_columns(rows, (1, 2), False)
            _write(workspace.root / "SICK" / f"SICK_{split}.txt",
                   header + b"\n" + _paste(ids, first, second, judgments))


def prepare_binary(workspace: Workspace) -> None:
    """Write MR, CR, SUBJ and MPQA from one archive, through `cat -v` and the PTB sed script."""
    archive = workspace.get("BINCLASSIF", "datasmall_NB_ACL12.zip")
    try:
        with zipfile.ZipFile(archive) as bundle:
            for inside, target in BINARY_SOURCES.items():
                try:
                    data = bundle.read(inside)
                except KeyError:
                    raise DataError(f"{archive}: {inside} missing") from None
                _write(workspace.root / target, ptb_file(data))
    except zipfile.BadZipFile:
        archive.unlink()
        raise DataError(f"{archive}: not a zip archive (a broken download?); deleted, run again "
                        "to download it anew") from None


def prepare_mrpc(workspace: Workspace) -> None:
    """Write MRPC's two files, as downloaded."""
    for split in ("train", "test"):
        source = workspace.get("MRPC", f"msr_paraphrase_{split}.txt")
        _write(workspace.root / "MRPC" / f"msr_paraphrase_{split}.txt", source.read_bytes())
