"""`harness data senteval --dir DIR`: download and prepare SentEval's downstream data.

Replicates SentEval's `data/downstream/get_transfer_data.bash` (URLs as there) with the Python
standard library: downloads, unzips/untars, renames, and the same text preprocessing
(`harness.downstream.preprocess`). SNLI and COCO, which the script also fetches, are not tasks of
this harness and are skipped.

What the script lacks, and users lose hours to: every prepared file is checked to be non-empty
and to have its expected number of lines (`harness.downstream.expected`); downloads resume
(`NAME.part`, continued with an HTTP Range request when the server supports it, restarted
otherwise); a group whose files already check out is skipped, so a rerun finishes what a broken
or interrupted run left. Downloads live in `DIR/.downloads/<source>/` until their group is
prepared and verified.
"""

from __future__ import annotations

import http.client
import shutil
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness.downstream.expected import LINES, TOTALS, count_lines
from harness.downstream.loaders import LAYOUT, STS_SUBSETS
from harness.downstream.preprocess import MosesTokenizer, ptb_file, strip_quotes
from harness.errors import DataError, HarnessError

SOURCES: dict[str, str] = {
    "TREC": "http://cogcomp.cs.illinois.edu/Data/QA/QC",
    "SICK": "http://alt.qcri.org/semeval2014/task1/data/uploads",
    "BINCLASSIF": "https://s3.amazonaws.com/senteval/senteval_data",
    "SSTbin": "https://raw.githubusercontent.com/PrincetonML/SIF/master/data",
    "SSTfine": "https://raw.githubusercontent.com/AcademiaSinicaNLPLab/sentiment_dataset/master/data",
    "STSBenchmark": "http://ixa2.si.ehu.es/stswiki/images/4/48",
    "STS12": "http://ixa2.si.ehu.es/stswiki/images/4/40",
    "STS13": "http://ixa2.si.ehu.es/stswiki/images/2/2f",
    "STS14": "http://ixa2.si.ehu.es/stswiki/images/8/8c",
    "STS15": "http://ixa2.si.ehu.es/stswiki/images/d/da",
    "STS16": "http://ixa2.si.ehu.es/stswiki/images/9/98",
    "MRPC": "https://s3.amazonaws.com/senteval/senteval_data",
    "MOSES": "https://raw.githubusercontent.com/moses-smt/mosesdecoder/master/scripts",
}
"""Source name -> base URL, as in get_transfer_data.bash; `base_urls` may replace any of them."""

STS_ARCHIVES = {"STS12": "STS2012-en-test.zip", "STS13": "STS2013-en-test.zip",
                "STS14": "STS2014-en-test.zip", "STS15": "STS2015-en-test.zip",
                "STS16": "STS2016-en-test.zip"}
STS_ARCHIVE_DIRS = {"STS12": "test-gold", "STS13": "test-gs", "STS14": "sts-en-test-gs-2014",
                    "STS15": "test_evaluation_task2a", "STS16": "sts2016-english-with-gs-v1.0"}
MOSES_FILES = ("tokenizer/tokenizer.perl", "share/nonbreaking_prefixes/nonbreaking_prefix.en")
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
CHUNK = 1 << 16


# --- Downloading ------------------------------------------------------------------------------


class _Progress:
    """Prints a download's progress to stderr at most twice a second."""

    def __init__(self, label: str, enabled: bool) -> None:
        self.label, self.enabled, self.last = label, enabled, 0.0

    def __call__(self, done: int, total: int | None, final: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or (not final and now - self.last < 0.5):
            return
        self.last = now
        size = f"{done / 1e6:.1f}" + (f"/{total / 1e6:.1f}" if total else "")
        print(f"  {self.label}: {size} MB{' done' if final else ''}", file=sys.stderr, flush=True)


def fetch(url: str, destination: Path, *, progress: bool = False, timeout: float = 60.0) -> Path:
    """Download `url` to `destination`, resuming `destination.part`; return `destination`.

    An existing `destination` is a finished download and is kept. A partial one is continued
    with an HTTP Range request; a server that ignores Range sends the whole file, which then
    replaces the partial one. Raises `DataError` for an HTTP error, a truncated transfer (the
    partial file is kept for the next attempt) or an empty file.
    """
    if destination.exists():
        return destination
    destination.parent.mkdir(parents=True, exist_ok=True)
    part = destination.with_name(destination.name + ".part")
    start = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": "v2s-harness (harness data senteval)"}
    if start:
        headers["Range"] = f"bytes={start}-"
    report = _Progress(destination.name, progress)
    try:
        response = urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                          timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and start:  # the partial file is not a prefix the server knows
            part.unlink()
            return fetch(url, destination, progress=progress, timeout=timeout)
        raise DataError(f"{url}: HTTP {exc.code} {exc.reason}; the source may have moved (pass "
                        "another base URL)") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DataError(f"{url}: cannot connect ({reason}); check the network and run again "
                        "to resume") from None
    with response:
        resumed = start and response.status == 206
        length = response.headers.get("Content-Length")
        total = int(length) + (start if resumed else 0) if length is not None else None
        done = start if resumed else 0
        try:
            with open(part, "ab" if resumed else "wb") as out:
                while chunk := response.read(CHUNK):
                    out.write(chunk)
                    done += len(chunk)
                    report(done, total)
        except (OSError, http.client.HTTPException) as exc:
            raise DataError(f"{url}: transfer interrupted after {done} bytes "
                            f"({type(exc).__name__}); run again to resume") from None
    if total is not None and done < total:
        raise DataError(f"{url}: transfer interrupted after {done} of {total} bytes; run again "
                        "to resume")
    if done == 0:
        part.unlink()
        raise DataError(f"{url}: the server sent an empty file; the source may be broken")
    report(done, total, final=True)
    part.replace(destination)
    return destination


# --- Preparing: one function per group of get_transfer_data.bash ------------------------------


@dataclass
class _Context:
    """What the preparation steps share: the data directory, downloads and the Moses runner."""

    root: Path
    downloads: Path
    base_urls: Mapping[str, str]
    progress: bool
    _moses: MosesTokenizer | None = None

    def get(self, source: str, name: str) -> Path:
        """Return the downloaded file `name` of `source` (downloading it if needed)."""
        url = f"{self.base_urls[source].rstrip('/')}/{name}"
        return fetch(url, self.downloads / source / name.replace("/", "_"), progress=self.progress)

    def moses(self) -> MosesTokenizer:
        """Return the Moses tokenizer, fetched into DIR/.tools like the script's git clone."""
        if self._moses is None:
            scripts = self.root / ".tools" / "mosesdecoder" / "scripts"
            for name in MOSES_FILES:
                target = scripts / name
                if not target.exists():  # written whole or not at all: existing means complete
                    _write(target, self.get("MOSES", name).read_bytes())
            self._moses = MosesTokenizer(scripts / MOSES_FILES[0])
        return self._moses


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


def _tokenized_columns(context: _Context, lines: list[bytes], indices: Iterable[int],
                       lowercase: bool) -> list[list[bytes]]:
    """Return each column of `indices` run through Moses (`cut -fN | tokenizer.perl [| lc]`)."""
    columns = []
    for index in indices:
        texts = [_column(line, index).decode("utf-8", "replace") for line in lines]
        columns.append([t.encode("utf-8") for t in context.moses()(texts, lowercase=lowercase)])
    return columns


def _paste(*columns: list[bytes]) -> bytes:
    return b"".join(b"\t".join(row) + b"\n" for row in zip(*columns))


def _prepare_sst(context: _Context) -> None:
    for split in ("train", "dev", "test"):
        binary = context.get("SSTbin", f"sentiment-{split}")
        _write(context.root / "SST" / "binary" / f"sentiment-{split}", binary.read_bytes())
        fine = context.get("SSTfine", f"stsa.fine.{split}")
        _write(context.root / "SST" / "fine" / f"sentiment-{split}", fine.read_bytes())


def _extract_zip(archive: Path, target: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(target)
    except zipfile.BadZipFile:
        archive.unlink()
        raise DataError(f"{archive}: not a zip archive (a broken download?); deleted, run "
                        "again to download it anew") from None


def _prepare_sts(context: _Context, year: str) -> None:
    archive = context.get(year, STS_ARCHIVES[year])
    sts = context.root / "STS"
    with tempfile.TemporaryDirectory(dir=_mkdir(sts), prefix=f".{year}-") as scratch:
        _extract_zip(archive, Path(scratch))
        extracted = Path(scratch) / STS_ARCHIVE_DIRS[year]
        if not extracted.is_dir():
            raise DataError(f"{archive}: no directory {STS_ARCHIVE_DIRS[year]}/ inside; the "
                            "archive is not the one SentEval's script expects")
        for subset in STS_SUBSETS[year]:
            if year == "STS16":  # the 2016 archive names its files STS2016.*
                for kind in ("input", "gs"):
                    old = extracted / f"STS2016.{kind}.{subset}.txt"
                    if old.exists():
                        old.replace(extracted / f"STS.{kind}.{subset}.txt")
            inputs = extracted / f"STS.input.{subset}.txt"
            if not inputs.exists():
                raise DataError(f"{archive}: {STS_ARCHIVE_DIRS[year]}/{inputs.name} missing")
            lines = _lines(inputs.read_bytes())
            inputs.write_bytes(_paste(*_tokenized_columns(context, lines, (0, 1), True)))
        final = sts / f"{year}-en-test"
        if final.exists():
            shutil.rmtree(final)
        extracted.replace(final)


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _prepare_stsb(context: _Context) -> None:
    archive = context.get("STSBenchmark", "Stsbenchmark.tar.gz")
    sts = context.root / "STS"
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
            first, second = _tokenized_columns(context, lines, (5, 6), True)
            path.write_bytes(_paste(kept, first, second))
        final = sts / "STSBenchmark"
        if final.exists():
            shutil.rmtree(final)
        extracted.replace(final)


def _prepare_trec(context: _Context) -> None:
    for split in ("train_5500", "TREC_10"):
        source = context.get("TREC", f"{split}.label")
        _write(context.root / "TREC" / f"{split}.label", strip_quotes(source.read_bytes()))


def _prepare_sick(context: _Context) -> None:
    for split in ("train", "trial", "test_annotated"):
        archive = context.get("SICK", f"sick_{split}.zip")
        with tempfile.TemporaryDirectory(dir=_mkdir(context.root / "SICK"),
                                         prefix=".sick-") as scratch:
            _extract_zip(archive, Path(scratch))
            source = Path(scratch) / f"SICK_{split}.txt"
            if not source.exists():
                raise DataError(f"{archive}: SICK_{split}.txt missing")
            header, *rows = _lines(source.read_bytes())
            ids = [_column(row, 0) for row in rows]
            judgments = [b"\t".join(row.split(b"\t")[3:5]) for row in rows]  # cut -f4,5
            first, second = _tokenized_columns(context, rows, (1, 2), False)
            _write(context.root / "SICK" / f"SICK_{split}.txt",
                   header + b"\n" + _paste(ids, first, second, judgments))


def _prepare_binary(context: _Context) -> None:
    archive = context.get("BINCLASSIF", "datasmall_NB_ACL12.zip")
    try:
        with zipfile.ZipFile(archive) as bundle:
            for inside, target in BINARY_SOURCES.items():
                try:
                    data = bundle.read(inside)
                except KeyError:
                    raise DataError(f"{archive}: {inside} missing") from None
                _write(context.root / target, ptb_file(data))
    except zipfile.BadZipFile:
        archive.unlink()
        raise DataError(f"{archive}: not a zip archive (a broken download?); deleted, run again "
                        "to download it anew") from None


def _prepare_mrpc(context: _Context) -> None:
    for split in ("train", "test"):
        source = context.get("MRPC", f"msr_paraphrase_{split}.txt")
        _write(context.root / "MRPC" / f"msr_paraphrase_{split}.txt", source.read_bytes())


@dataclass(frozen=True)
class Group:
    """One unit of get_transfer_data.bash: what it prepares and which tasks that serves."""

    name: str
    tasks: tuple[str, ...]
    sources: tuple[str, ...]
    prepare: Callable[[_Context], None]

    def files(self) -> list[str]:
        """Return the files (relative to data/downstream) this group leaves."""
        directories = {"/".join(LAYOUT[task]) + "/" for task in self.tasks}
        binary = [f for task in self.tasks if task in TOTALS for f in TOTALS[task][0]]
        return binary + [f for f in LINES if any(f.startswith(d) for d in directories)]


GROUPS: tuple[Group, ...] = (
    Group("SST", ("SST2", "SST5"), ("SSTbin", "SSTfine"), _prepare_sst),
    *(Group(year, (year,), (year,), lambda context, year=year: _prepare_sts(context, year))
      for year in STS_ARCHIVES),
    Group("STSB", ("STSB",), ("STSBenchmark",), _prepare_stsb),
    Group("TREC", ("TREC",), ("TREC",), _prepare_trec),
    Group("SICK", ("SICK-E", "SICK-R"), ("SICK",), _prepare_sick),
    Group("BINARY", ("MR", "CR", "SUBJ", "MPQA"), ("BINCLASSIF",), _prepare_binary),
    Group("MRPC", ("MRPC",), ("MRPC",), _prepare_mrpc),
)


# --- Verifying and reporting ------------------------------------------------------------------


@dataclass(frozen=True)
class FileCheck:
    """One prepared file: its line count against the expected one, and what is wrong if any."""

    path: Path
    lines: int | None
    expected: int | None
    problem: str | None = None


@dataclass(frozen=True)
class GroupReport:
    """What happened to one group: `present` (already fine), `downloaded`, or `failed`."""

    name: str
    tasks: tuple[str, ...]
    status: str
    files: tuple[FileCheck, ...] = ()
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Return True when every file of the group checks out."""
        return self.status != "failed"

    def problems(self) -> list[str]:
        """Return one line per problem: the error, then each failing file."""
        lines = [self.error] if self.error else []
        return lines + [f"{check.path}: {check.problem}" for check in self.files if check.problem]


@dataclass(frozen=True)
class Report:
    """The outcome of `download_senteval`, per group of files."""

    directory: Path
    groups: tuple[GroupReport, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        """Return True when every requested group is present and verified."""
        return all(group.ok for group in self.groups)

    def problems(self) -> list[str]:
        """Return one line per problem over all groups."""
        return [line for group in self.groups for line in group.problems()]

    def summary(self) -> str:
        """Return a short table: group, tasks, status, files checked."""
        rows = [f"SentEval data in {self.directory}"]
        for group in self.groups:
            checked = sum(1 for c in group.files if c.problem is None)
            rows.append(f"  {group.name:<6} {','.join(group.tasks):<22} {group.status:<10} "
                        f"{checked}/{len(group.files)} files ok")
        rows += [f"  problem: {line}" for line in self.problems()]
        return "\n".join(rows)


def verify(root: Path, group: Group) -> tuple[FileCheck, ...]:
    """Return the checks of `group`'s files under `root`: present, non-empty, expected lines."""
    checks: list[FileCheck] = []
    counts: dict[str, int] = {}
    for name in group.files():
        path = root / name
        expected = LINES.get(name)
        if not path.is_file():
            checks.append(FileCheck(path, None, expected, "missing"))
            continue
        data = path.read_bytes()
        counts[name] = lines = count_lines(data)
        if not data.strip():
            checks.append(FileCheck(path, lines, expected, "empty (a broken download?)"))
        elif expected is not None and lines != expected:
            checks.append(FileCheck(path, lines, expected,
                                    f"{lines} lines, expected {expected}"))
        else:
            checks.append(FileCheck(path, lines, expected))
    for task in group.tasks:
        if task in TOTALS and all(name in counts for name in TOTALS[task][0]):
            files, expected_total = TOTALS[task]
            total = sum(counts[name] for name in files)
            if total != expected_total:
                problem = (f"{task} has {total} lines over {' + '.join(files)}, expected "
                           f"{expected_total}")
                checks = [replace(c, problem=problem) if c.path == root / files[0] else c
                          for c in checks]
    return tuple(checks)


def _groups_for(tasks: Iterable[str] | None) -> list[Group]:
    if tasks is None:
        return list(GROUPS)
    wanted = {task.upper() for task in tasks}
    known = {task for group in GROUPS for task in group.tasks}
    unknown = sorted(wanted - known)
    if unknown:
        raise HarnessError(f"unknown SentEval task(s) {', '.join(unknown)}; known: "
                           f"{', '.join(sorted(known))}")
    return [group for group in GROUPS if wanted & set(group.tasks)]


def download_senteval(directory: Path, *, tasks: Iterable[str] | None = None,
                      base_urls: Mapping[str, str] | None = None,
                      progress: bool = True) -> Report:
    """Download and prepare SentEval's data/downstream into `directory`; return the report.

    `tasks` limits the work to the groups serving those tasks (MR, SST2, SICK-R, ...; default
    all). `base_urls` replaces source base URLs (keys of `SOURCES`: mirrors, or a local server
    in tests). Groups whose files already verify are skipped; a failing group does not stop the
    others. Nothing is raised for download problems: they are in `Report.problems()`.
    """
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    context = _Context(root=root, downloads=root / ".downloads",
                       base_urls={**SOURCES, **(base_urls or {})}, progress=progress)
    reports = []
    for group in _groups_for(tasks):
        checks = verify(root, group)
        if all(check.problem is None for check in checks):
            reports.append(GroupReport(group.name, group.tasks, "present", checks))
            continue
        if progress:
            print(f"{group.name}: downloading and preparing", file=sys.stderr, flush=True)
        try:
            group.prepare(context)
        except DataError as exc:
            reports.append(GroupReport(group.name, group.tasks, "failed", verify(root, group),
                                       error=str(exc)))
            continue
        checks = verify(root, group)
        failed = any(check.problem for check in checks)
        # Verified or not, the group's downloads are spent: a bad archive must not be reused.
        for source in group.sources:
            shutil.rmtree(context.downloads / source, ignore_errors=True)
        reports.append(GroupReport(group.name, group.tasks, "failed" if failed else "downloaded",
                                   checks))
    if all(report.ok for report in reports):
        shutil.rmtree(context.downloads, ignore_errors=True)
        shutil.rmtree(root / ".tools", ignore_errors=True)
    return Report(directory=root, groups=tuple(reports))

