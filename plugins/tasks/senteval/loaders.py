"""Task loaders: one function per SentEval file format, reading its `data/downstream` layout.

The layout, file names, encodings and field positions are those of SentEval's task classes
(senteval/binary.py, sst.py, trec.py, mrpc.py, sick.py, sts.py) over the files its
`data/downstream/get_transfer_data.bash` writes; directories and file names come from the task
table (`layout`), whose `reader` of each task keys `READERS`. Sentences are
SentEval's tokens (`str.split()`) joined by single spaces. SentEval's own preprocessing (PTB sed
for MR/CR/SUBJ/MPQA, quotes removed from TREC, Moses and lower-casing for STS) happened when the
data was prepared; MR/CR/SUBJ/MPQA and TREC files as their sources release them (not through it)
are recognised and prepared on reading (`reading.PREPARATIONS`), so a score does not depend on
which copy of the data a user has.

Every problem raises `DataError` with one line naming the file (and line) and what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from harness.plugin import DataError, Examples, TaskData

from .layout import (
    BINARY_FILES,
    MRPC_FILES,
    SICK_FILES,
    SST_FILES,
    STS_SUBSETS,
    STSB_FILES,
    TREC_FILES,
    resolve_root,
    task_directory,
)
from .reading import fetch_hint, fields, integer, number, read_lines, tokens
from .table import TASKS

TREC_CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
SICK_CLASSES = ("CONTRADICTION", "NEUTRAL", "ENTAILMENT")


def _classes(labels: list[int]) -> np.ndarray:
    return np.asarray(labels, dtype=np.int64)


def load_binary(directory: Path, name: str, hint: str | None = None) -> TaskData:
    """Return MR/CR/SUBJ/MPQA as one split `all` (SentEval cross-validates them).

    Files are latin-1, one sentence per line; empty lines are kept as empty sentences, as
    SentEval does (CR has 3,775 lines of which 4 are empty).
    """
    hint = hint or fetch_hint(directory.parent)
    positive, negative = (directory / file for file in BINARY_FILES[name])
    pos, neg = ([tokens(line) for line in read_lines(path, encoding="latin-1", hint=hint,
                                                      preparation="ptb")]
                for path in (positive, negative))
    examples = Examples(first=tuple(pos + neg), labels=_classes([1] * len(pos) + [0] * len(neg)))
    return TaskData(name=name, splits={"all": examples}, files=(positive, negative),
                    classes=("0", "1"))


def load_sst(directory: Path, name: str, n_classes: int, hint: str | None = None) -> TaskData:
    """Return SST-2 (`sentence<TAB>label`) or SST-5 (`label sentence`) train/dev/test splits.

    The files are UTF-8. As SentEval asserts, labels run from 0 to `n_classes - 1` in each split.
    """
    hint = hint or fetch_hint(directory.parent.parent)
    splits: dict[str, Examples] = {}
    paths = [directory / file for file in SST_FILES.values()]
    for split, path in zip(SST_FILES, paths):
        sentences: list[str] = []
        labels: list[int] = []
        for line_number, line in enumerate(read_lines(path, encoding="utf-8", hint=hint), 1):
            line = line.strip()
            if n_classes == 2:
                sentence, label = fields(line, path, line_number, 2, "sentence, label")[:2]
            else:
                label, space, sentence = line.partition(" ")
                if not space:
                    raise DataError(f"{path}:{line_number}: expected 'label sentence', "
                                    f"found {line[:40]!r}")
            value = integer(label, path, line_number, "label")
            if not 0 <= value < n_classes:
                raise DataError(f"{path}:{line_number}: label {value} outside 0..{n_classes - 1}")
            sentences.append(tokens(sentence))
            labels.append(value)
        if max(labels) != n_classes - 1:
            raise DataError(f"{path}: labels go up to {max(labels)} but {name} has {n_classes} "
                            "classes; is this the right file?")
        splits[split] = Examples(first=tuple(sentences), labels=_classes(labels))
    return TaskData(name=name, splits=splits, files=tuple(paths),
                    classes=tuple(str(c) for c in range(n_classes)))


def load_trec(directory: Path, name: str, hint: str | None = None) -> TaskData:
    """Return TREC train (5,452 questions) and test (500): `COARSE:fine question`, latin-1."""
    hint = hint or fetch_hint(directory.parent)
    splits: dict[str, Examples] = {}
    for split, filename in TREC_FILES.items():
        path = directory / filename
        sentences: list[str] = []
        labels: list[int] = []
        lines = read_lines(path, encoding="latin-1", hint=hint, preparation="quotes")
        for line_number, line in enumerate(lines, 1):
            coarse, colon, rest = line.strip().partition(":")
            _, space, question = rest.partition(" ")
            if not colon or not space:
                raise DataError(f"{path}:{line_number}: expected 'COARSE:fine question', "
                                f"found {line[:40]!r}")
            if coarse not in TREC_CLASSES:
                raise DataError(f"{path}:{line_number}: unknown class {coarse!r}; expected one "
                                f"of {', '.join(TREC_CLASSES)}")
            sentences.append(tokens(question))
            labels.append(TREC_CLASSES.index(coarse))
        splits[split] = Examples(first=tuple(sentences), labels=_classes(labels))
    return TaskData(name=name, splits=splits,
                    files=tuple(directory / file for file in TREC_FILES.values()),
                    classes=TREC_CLASSES)


def _header(lines: list[str], path: Path, expected: str) -> list[str]:
    """Return the lines after the header, refusing a file whose first line is data."""
    first = lines[0].split("\t")[0].strip()
    if first.lstrip("-").replace(".", "", 1).isdigit():
        raise DataError(f"{path}:1: expected the header line '{expected}', found data; SentEval "
                        "skips the first line, so a missing header would lose an example")
    return lines[1:]


def load_mrpc(directory: Path, name: str, hint: str | None = None, *,
              splits_read: tuple[str, ...] = tuple(MRPC_FILES)) -> TaskData:
    """Return MRPC train (4,076 pairs) and test (1,725): UTF-8, header line, CRLF.

    Fields: Quality, #1 ID, #2 ID, #1 String, #2 String; the label is Quality (1 = paraphrase).
    `splits_read`: the splits read, of `train` and `test` (MRPC-retrieval reads only `test`).
    """
    hint = hint or fetch_hint(directory.parent)
    splits: dict[str, Examples] = {}
    for split, filename in MRPC_FILES.items():
        if split not in splits_read:
            continue
        path = directory / filename
        lines = _header(read_lines(path, encoding="utf-8", hint=hint), path,
                        "Quality<TAB>#1 ID<TAB>#2 ID<TAB>#1 String<TAB>#2 String")
        first, second, labels = [], [], []
        for line_number, line in enumerate(lines, 2):
            parts = fields(line.strip(), path, line_number, 5,
                           "Quality, #1 ID, #2 ID, #1 String, #2 String")
            label = integer(parts[0], path, line_number, "Quality")
            if label not in (0, 1):
                raise DataError(f"{path}:{line_number}: Quality {label} is neither 0 nor 1")
            first.append(tokens(parts[3]))
            second.append(tokens(parts[4]))
            labels.append(label)
        splits[split] = Examples(first=tuple(first), second=tuple(second), labels=_classes(labels))
    return TaskData(name=name, splits=splits,
                    files=tuple(directory / file for split, file in MRPC_FILES.items()
                                if split in splits_read),
                    classes=("0", "1"))


def load_sick(directory: Path, name: str, target: str, hint: str | None = None) -> TaskData:
    """Return SICK train/trial/test pairs with relatedness scores or entailment classes.

    `target` is "relatedness" (SICK-R: float scores 1-5) or "entailment" (SICK-E: CONTRADICTION,
    NEUTRAL, ENTAILMENT as 0, 1, 2). Files: header line, tab-separated pair_ID, sentence_A,
    sentence_B, relatedness_score, entailment_judgment; the trial file is the dev split.
    """
    hint = hint or fetch_hint(directory.parent)
    splits: dict[str, Examples] = {}
    for split, filename in SICK_FILES.items():
        path = directory / filename
        lines = _header(read_lines(path, encoding="utf-8", hint=hint), path,
                        "pair_ID<TAB>sentence_A<TAB>sentence_B<TAB>relatedness_score<TAB>"
                        "entailment_judgment")
        first, second = [], []
        labels: list[float] = []  # float scores (relatedness) or int class ids (entailment)
        for line_number, line in enumerate(lines, 2):
            parts = fields(line.strip(), path, line_number, 5,
                           "pair_ID, sentence_A, sentence_B, relatedness_score, "
                           "entailment_judgment")
            if target == "relatedness":
                labels.append(number(parts[3], path, line_number, "relatedness_score"))
            else:
                judgment = parts[4].strip()
                if judgment not in SICK_CLASSES:
                    raise DataError(f"{path}:{line_number}: entailment_judgment {judgment!r} is "
                                    f"not one of {', '.join(SICK_CLASSES)}")
                labels.append(SICK_CLASSES.index(judgment))
            first.append(tokens(parts[1]))
            second.append(tokens(parts[2]))
        dtype = np.float64 if target == "relatedness" else np.int64
        splits[split] = Examples(first=tuple(first), second=tuple(second),
                                 labels=np.asarray(labels, dtype=dtype))
    classes = SICK_CLASSES if target == "entailment" else ()
    return TaskData(name=name, splits=splits,
                    files=tuple(directory / file for file in SICK_FILES.values()), classes=classes)


def load_sts_benchmark(directory: Path, name: str, hint: str | None = None) -> TaskData:
    """Return STS-B train (5,749), dev (1,500), test (1,379): score in field 5, pair in 6 and 7."""
    hint = hint or fetch_hint(directory.parent.parent)
    splits: dict[str, Examples] = {}
    for split, filename in STSB_FILES.items():
        path = directory / filename
        first, second, scores = [], [], []
        for line_number, line in enumerate(read_lines(path, encoding="utf-8", hint=hint), 1):
            parts = fields(line.strip(), path, line_number, 7,
                           "genre, file, year, id, score, sentence 1, sentence 2")
            scores.append(number(parts[4], path, line_number, "score"))
            first.append(tokens(parts[5]))
            second.append(tokens(parts[6]))
        splits[split] = Examples(first=tuple(first), second=tuple(second),
                                 labels=np.asarray(scores, dtype=np.float64))
    return TaskData(name=name, splits=splits,
                    files=tuple(directory / file for file in STSB_FILES.values()))


def load_sts(directory: Path, year: str, hint: str | None = None) -> TaskData:
    """Return one split per subset of STS12-16, unscored pairs (empty gold line) dropped.

    `STS.input.<subset>.txt` holds tab-separated pairs, `STS.gs.<subset>.txt` one gold score
    per line, aligned line by line; both UTF-8 (tokenized and lower-cased when prepared).
    """
    hint = hint or fetch_hint(directory.parent.parent)
    splits: dict[str, Examples] = {}
    files: list[Path] = []
    for subset in STS_SUBSETS[year]:
        inputs = directory / f"STS.input.{subset}.txt"
        gold = directory / f"STS.gs.{subset}.txt"
        files += [inputs, gold]
        pairs = read_lines(inputs, encoding="utf-8", hint=hint)
        golds = read_lines(gold, encoding="utf-8", hint=hint)
        if len(pairs) != len(golds):
            raise DataError(f"{gold}: {len(golds)} lines but {inputs.name} has {len(pairs)}; the "
                            f"files must align line by line ({hint})")
        first, second, scores = [], [], []
        for line_number, (pair, score) in enumerate(zip(pairs, golds), 1):
            if not score.strip():
                continue  # unscored pair: SentEval drops it
            parts = fields(pair, inputs, line_number, 2, "sentence 1, sentence 2")
            scores.append(number(score, gold, line_number, "gold score"))
            first.append(tokens(parts[0]))
            second.append(tokens(parts[1]))
        if not scores:
            raise DataError(f"{gold}: no scored pair (every gold line is empty); {hint}")
        splits[subset] = Examples(first=tuple(first), second=tuple(second),
                                  labels=np.asarray(scores, dtype=np.float64))
    return TaskData(name=year, splits=splits, files=tuple(files))


Reader = Callable[[Path, str, str], TaskData]
"""(task directory, task name, what to do about a missing file) -> the task's data."""

READERS: dict[str, Reader] = {
    "binary": load_binary,
    "sst-binary": lambda directory, name, hint: load_sst(directory, name, 2, hint),
    "sst-fine": lambda directory, name, hint: load_sst(directory, name, 5, hint),
    "trec": load_trec,
    "mrpc": load_mrpc,
    "sick-entailment": lambda directory, name, hint: load_sick(directory, name, "entailment", hint),
    "sick-relatedness": lambda directory, name, hint: load_sick(directory, name, "relatedness",
                                                                 hint),
    "sts-benchmark": load_sts_benchmark,
    "sts": load_sts,
}
"""The task table's `reader` -> the loader of that file format."""


def load_task(task: str, root: Path) -> TaskData:
    """Return SentEval task `task` (MR, ..., STS16) read from the downstream directory `root`."""
    if task not in TASKS:
        raise DataError(f"unknown SentEval task {task!r}; known: {', '.join(TASKS)}")
    return READERS[TASKS[task].reader](task_directory(root, task), task,
                                       fetch_hint(resolve_root(root)))
