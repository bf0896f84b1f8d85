"""SentEval's sixteen tasks in one table: names, directories, files, procedures, line counts.

Every other module takes SentEval's task names from `TASKS`: the downloader (`harness data
senteval`, `harness.data.senteval`) and the first-party task plugin (plugins/tasks/), which
registers each row under its lower-cased name and maps `reader` and `procedure` to its loader and
evaluation class. Pure Python, so registering the tasks stays cheap.

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
class SentEvalTask:
    """One SentEval task: where its data lies, how it is read and evaluated, what it measures.

    `description` is the one line `harness list` shows. `reader` and `procedure` are keys the
    task plugin maps to a loader and an evaluation class; `download` names the group of
    `harness data senteval` that prepares the files. `lines` holds the expected line count of
    each file (empty where only `total`, over all files, is known); `subsets` the subsets of an
    STS year.
    """

    name: str
    directory: tuple[str, ...]
    files: tuple[str, ...]
    description: str
    reader: str
    procedure: str
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


def _binary(name: str, files: tuple[str, str], total: int, description: str) -> SentEvalTask:
    """A cross-validated binary task: `files` are (file of label 1, file of label 0)."""
    return SentEvalTask(name, (name,), files, description, reader="binary",
                        procedure="cross-validated", download="BINARY", total=total)


def _sts(year: str, pairs: Mapping[str, int], description: str) -> SentEvalTask:
    """An STS year from its subsets' line counts (the input and gold files of a subset align)."""
    kinds = ("input", "gs")
    return SentEvalTask(year, ("STS", f"{year}-en-test"),
                        tuple(f"STS.{kind}.{subset}.txt" for subset in pairs for kind in kinds),
                        description, reader="sts", procedure="similarity", download=year,
                        lines=tuple(count for count in pairs.values() for _ in kinds),
                        subsets=tuple(pairs))


_ROWS: tuple[SentEvalTask, ...] = (
    _binary("MR", ("rt-polarity.pos", "rt-polarity.neg"), 10662,
            "movie review sentiment, binary; nested k-fold logistic regression (SentEval)"),
    _binary("CR", ("custrev.pos", "custrev.neg"), 3775,
            "product review sentiment, binary; nested k-fold logistic regression (SentEval)"),
    # SentEval labels the objective sentences 1 and the subjective ones 0.
    _binary("SUBJ", ("subj.objective", "subj.subjective"), 10000,
            "subjective vs objective, binary; nested k-fold logistic regression (SentEval)"),
    _binary("MPQA", ("mpqa.pos", "mpqa.neg"), 10606,
            "opinion polarity, binary; nested k-fold logistic regression (SentEval)"),
    SentEvalTask("SST2", ("SST", "binary"), tuple(SST_FILES.values()),
                 "Stanford sentiment treebank, binary; dev-selected logistic regression (SentEval)",
                 reader="sst-binary", procedure="split", download="SST", lines=(67349, 872, 1821)),
    SentEvalTask("SST5", ("SST", "fine"), tuple(SST_FILES.values()),
                 "Stanford sentiment treebank, 5 classes; dev-selected logistic regression",
                 reader="sst-fine", procedure="split", download="SST", lines=(8544, 1101, 2210)),
    SentEvalTask("TREC", ("TREC",), tuple(TREC_FILES.values()),
                 "question type, 6 classes; k-fold on train, then test (SentEval)",
                 reader="trec", procedure="train-test", download="TREC", lines=(5452, 500)),
    SentEvalTask("MRPC", ("MRPC",), tuple(MRPC_FILES.values()),
                 "paraphrase detection on [|u-v|, u*v]; accuracy and F1 (SentEval)",
                 reader="mrpc", procedure="paraphrase", download="MRPC", lines=(4077, 1726)),
    SentEvalTask("SICK-E", ("SICK",), tuple(SICK_FILES.values()),
                 "entailment, 3 classes on [|u-v|, u*v]; dev-selected (SentEval)",
                 reader="sick-entailment", procedure="split", download="SICK", lines=SICK_LINES),
    SentEvalTask("SICK-R", ("SICK",), tuple(SICK_FILES.values()),
                 "relatedness 1-5, Tai et al. (2015) model; Pearson r (SentEval)",
                 reader="sick-relatedness", procedure="relatedness", download="SICK",
                 lines=SICK_LINES),
    SentEvalTask("STSB", ("STS", "STSBenchmark"), tuple(STSB_FILES.values()),
                 "STS benchmark 0-5, Tai et al. (2015) model; Pearson r (SentEval)",
                 reader="sts-benchmark", procedure="relatedness", download="STSB",
                 lines=(5749, 1500, 1379)),
    _sts("STS12", {"MSRpar": 750, "MSRvid": 750, "SMTeuroparl": 459, "surprise.OnWN": 750,
                   "surprise.SMTnews": 399},
         "semantic similarity 2012, cosine; Pearson/Spearman over 5 subsets (SentEval)"),
    # SentEval's STS13 lacks the SMT subset (never public).
    _sts("STS13", {"FNWN": 189, "headlines": 750, "OnWN": 561},
         "semantic similarity 2013 (no SMT), cosine; Pearson/Spearman over 3 subsets"),
    _sts("STS14", {"deft-forum": 450, "deft-news": 300, "headlines": 750, "images": 750,
                   "OnWN": 750, "tweet-news": 750},
         "semantic similarity 2014, cosine; Pearson/Spearman over 6 subsets (SentEval)"),
    _sts("STS15", {"answers-forums": 2000, "answers-students": 1500, "belief": 2000,
                   "headlines": 1500, "images": 1500},
         "semantic similarity 2015, cosine; Pearson/Spearman over 5 subsets (SentEval)"),
    _sts("STS16", {"answer-answer": 1572, "headlines": 1498, "plagiarism": 1271,
                   "postediting": 3287, "question-question": 1555},
         "semantic similarity 2016, cosine; Pearson/Spearman over 5 subsets (SentEval)"),
)

TASKS: dict[str, SentEvalTask] = {task.name: task for task in _ROWS}
"""SentEval's spelling of each task (the reference tables' column) -> its row, in table order."""

LAYOUT: dict[str, tuple[str, ...]] = {name: task.directory for name, task in TASKS.items()}
"""SentEval task name -> its directory under `data/downstream`."""

BINARY_FILES: dict[str, tuple[str, ...]] = {
    name: task.files for name, task in TASKS.items() if task.reader == "binary"}
"""Binary task -> (file of label 1, file of label 0)."""

STS_SUBSETS: dict[str, tuple[str, ...]] = {
    name: task.subsets for name, task in TASKS.items() if task.reader == "sts"}
"""STS year -> its subsets, in SentEval's order."""

STS_YEARS: tuple[str, ...] = tuple(STS_SUBSETS)
"""STS12 ... STS16: the years whose mean is the `STS` column of Vec2Sent's Table 5."""


def relative_files(task: SentEvalTask) -> tuple[str, ...]:
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
