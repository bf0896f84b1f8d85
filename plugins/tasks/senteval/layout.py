"""SentEval's data layout: where `data/downstream/get_transfer_data.bash` leaves each of the
sixteen tasks' files, and how many lines each must have.

The downloader (`harness data senteval`, `download`) prepares and checks these
files; the SentEval task plugin (plugins/tasks/senteval/, which holds the task table: what each
task measures, how it is read and evaluated) reads them. Pure Python.

Directories and file names are those SentEval's `data/downstream/get_transfer_data.bash` leaves
and its task classes read (senteval/binary.py, sst.py, trec.py, mrpc.py, sick.py, sts.py).

The expected line counts (`LINES`, `TOTALS`) are what `harness data senteval` checks every
prepared file against, so an empty or truncated download is caught at once rather than as a
crash or a silently wrong score later. Counts are lines as the loaders split them (`wc -l` for
files ending in a newline), header lines included. MR, CR, SUBJ and MPQA are checked by their
total over the two files: the example counts SentEval documents (Conneau & Kiela 2018, Table 1),
empty lines included. SST/binary/sentiment-train is SentEval's phrase-level SST-2 training set
(67,349 lines, "67k" in SentEval's table); some redistributed copies hold the 6,920
sentence-level training examples instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TaskLayout:
    """Where one SentEval task's data lies: its directory under `data/downstream`, its files
    in reading order, the group of `harness data senteval` that prepares them (`download`),
    the expected line count of each file (`lines`; empty where only `total`, over all files, is
    known) and the subsets of an STS year."""

    name: str
    directory: tuple[str, ...]
    files: tuple[str, ...]
    download: str
    lines: tuple[int, ...] = ()
    total: int | None = None
    subsets: tuple[str, ...] = ()


SST_FILES = {"train": "sentiment-train", "dev": "sentiment-dev", "test": "sentiment-test"}
TREC_FILES = {"train": "train_5500.label", "test": "TREC_10.label"}
MRPC_FILES = {"train": "msr_paraphrase_train.txt", "test": "msr_paraphrase_test.txt"}
SICK_FILES = {"train": "SICK_train.txt", "dev": "SICK_trial.txt", "test": "SICK_test_annotated.txt"}
STSB_FILES = {"train": "sts-train.csv", "dev": "sts-dev.csv", "test": "sts-test.csv"}
"""Split -> file name, in reading order, of each train/dev/test layout."""

SICK_LINES = (4501, 501, 4928)


def _binary(name: str, files: tuple[str, str], total: int) -> TaskLayout:
    """A binary task: `files` are (file of label 1, file of label 0)."""
    return TaskLayout(name, (name,), files, download="BINARY", total=total)


def _sts(year: str, pairs: Mapping[str, int]) -> TaskLayout:
    """An STS year from its subsets' line counts (the input and gold files of a subset align)."""
    kinds = ("input", "gs")
    return TaskLayout(year, ("STS", f"{year}-en-test"),
                      tuple(f"STS.{kind}.{subset}.txt" for subset in pairs for kind in kinds),
                      download=year, lines=tuple(count for count in pairs.values() for _ in kinds),
                      subsets=tuple(pairs))


_ROWS: tuple[TaskLayout, ...] = (
    _binary("MR", ("rt-polarity.pos", "rt-polarity.neg"), 10662),
    _binary("CR", ("custrev.pos", "custrev.neg"), 3775),
    # SentEval labels the objective sentences 1 and the subjective ones 0.
    _binary("SUBJ", ("subj.objective", "subj.subjective"), 10000),
    _binary("MPQA", ("mpqa.pos", "mpqa.neg"), 10606),
    TaskLayout("SST2", ("SST", "binary"), tuple(SST_FILES.values()), download="SST",
               lines=(67349, 872, 1821)),
    TaskLayout("SST5", ("SST", "fine"), tuple(SST_FILES.values()), download="SST",
               lines=(8544, 1101, 2210)),
    TaskLayout("TREC", ("TREC",), tuple(TREC_FILES.values()), download="TREC",
               lines=(5452, 500)),
    TaskLayout("MRPC", ("MRPC",), tuple(MRPC_FILES.values()), download="MRPC",
               lines=(4077, 1726)),
    TaskLayout("SICK-E", ("SICK",), tuple(SICK_FILES.values()), download="SICK",
               lines=SICK_LINES),
    TaskLayout("SICK-R", ("SICK",), tuple(SICK_FILES.values()), download="SICK",
               lines=SICK_LINES),
    TaskLayout("STSB", ("STS", "STSBenchmark"), tuple(STSB_FILES.values()), download="STSB",
               lines=(5749, 1500, 1379)),
    _sts("STS12", {"MSRpar": 750, "MSRvid": 750, "SMTeuroparl": 459, "surprise.OnWN": 750,
                   "surprise.SMTnews": 399}),
    # SentEval's STS13 lacks the SMT subset (never public).
    _sts("STS13", {"FNWN": 189, "headlines": 750, "OnWN": 561}),
    _sts("STS14", {"deft-forum": 450, "deft-news": 300, "headlines": 750, "images": 750,
                   "OnWN": 750, "tweet-news": 750}),
    _sts("STS15", {"answers-forums": 2000, "answers-students": 1500, "belief": 2000,
                   "headlines": 1500, "images": 1500}),
    _sts("STS16", {"answer-answer": 1572, "headlines": 1498, "plagiarism": 1271,
                   "postediting": 3287, "question-question": 1555}),
)

TASKS: dict[str, TaskLayout] = {task.name: task for task in _ROWS}
"""SentEval's spelling of each task (the reference tables' column) -> its layout, in SentEval's
order."""

LAYOUT: dict[str, tuple[str, ...]] = {name: task.directory for name, task in TASKS.items()}
"""SentEval task name -> its directory under `data/downstream`."""

BINARY_FILES: dict[str, tuple[str, ...]] = {
    name: task.files for name, task in TASKS.items() if task.download == "BINARY"}
"""Binary task -> (file of label 1, file of label 0)."""

STS_SUBSETS: dict[str, tuple[str, ...]] = {
    name: task.subsets for name, task in TASKS.items() if task.subsets}
"""STS year -> its subsets, in SentEval's order."""

STS_YEARS: tuple[str, ...] = tuple(STS_SUBSETS)
"""STS12 ... STS16."""


def relative_files(task: TaskLayout) -> tuple[str, ...]:
    """Return the task's files relative to `data/downstream`, as `a/b/file` strings."""
    return tuple("/".join((*task.directory, name)) for name in task.files)


LINES: dict[str, int] = {
    path: count for task in TASKS.values() for path, count in zip(relative_files(task), task.lines)}
"""File (relative to data/downstream) -> expected number of lines."""

TOTALS: dict[str, tuple[tuple[str, ...], int]] = {
    name: (relative_files(task), task.total) for name, task in TASKS.items()
    if task.total is not None}
"""Binary task -> (its two files, expected lines over both)."""


def count_lines(data: bytes) -> int:
    """Return the number of lines in `data`: newlines, plus one for an unterminated last line."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def resolve_root(data_dir: Path) -> Path:
    """Return SentEval's `downstream` directory given it or SentEval's `data` directory."""
    data_dir = Path(data_dir)
    nested = data_dir / "downstream"
    if nested.is_dir() and not any((data_dir / name).exists() for name in ("MR", "STS", "SST")):
        return nested
    return data_dir


def task_directory(root: Path, task: str) -> Path:
    """Return the directory of SentEval task `task` under the downstream directory `root`."""
    return resolve_root(root).joinpath(*LAYOUT[task])


def task_files(task: str, directory: Path) -> list[Path]:
    """Return the files SentEval task `task` reads from its directory `directory`."""
    return [directory / name for name in TASKS[task].files]
