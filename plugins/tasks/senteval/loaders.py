"""Task loaders: one function per task family, reading SentEval's `data/downstream` layout.

The layout, file names, encodings and field positions are those of SentEval's task classes
(senteval/binary.py, sst.py, trec.py, mrpc.py, sick.py, sts.py) over the files its
`data/downstream/get_transfer_data.bash` writes. Sentences are SentEval's tokens (`str.split()`)
joined by single spaces; SentEval's own preprocessing (PTB sed for MR/CR/SUBJ/MPQA, Moses and
lower-casing for STS) happened when the data was prepared.

Every problem raises `DataError` with one line naming the file (and line) and what is wrong.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.downstream.base import Examples, TaskData
from harness.downstream.reading import fetch_hint, fields, integer, number, read_lines, tokens
from harness.errors import DataError

LAYOUT: dict[str, tuple[str, ...]] = {
    "MR": ("MR",), "CR": ("CR",), "SUBJ": ("SUBJ",), "MPQA": ("MPQA",),
    "SST2": ("SST", "binary"), "SST5": ("SST", "fine"), "TREC": ("TREC",), "MRPC": ("MRPC",),
    "SICK-E": ("SICK",), "SICK-R": ("SICK",), "STSB": ("STS", "STSBenchmark"),
    "STS12": ("STS", "STS12-en-test"), "STS13": ("STS", "STS13-en-test"),
    "STS14": ("STS", "STS14-en-test"), "STS15": ("STS", "STS15-en-test"),
    "STS16": ("STS", "STS16-en-test"),
}
"""SentEval task name -> its directory under `data/downstream`."""

BINARY_FILES: dict[str, tuple[str, str]] = {
    "MR": ("rt-polarity.pos", "rt-polarity.neg"),
    "CR": ("custrev.pos", "custrev.neg"),
    # SentEval labels the objective sentences 1 and the subjective ones 0.
    "SUBJ": ("subj.objective", "subj.subjective"),
    "MPQA": ("mpqa.pos", "mpqa.neg"),
}
"""Binary task -> (file of label 1, file of label 0)."""

STS_SUBSETS: dict[str, tuple[str, ...]] = {
    "STS12": ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"),
    # SentEval's STS13 lacks the SMT subset (never public).
    "STS13": ("FNWN", "headlines", "OnWN"),
    "STS14": ("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"),
    "STS15": ("answers-forums", "answers-students", "belief", "headlines", "images"),
    "STS16": ("answer-answer", "headlines", "plagiarism", "postediting", "question-question"),
}

SST_SPLITS = ("train", "dev", "test")
TREC_CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
SICK_CLASSES = ("CONTRADICTION", "NEUTRAL", "ENTAILMENT")
SICK_FILES = {"train": "SICK_train.txt", "dev": "SICK_trial.txt", "test": "SICK_test_annotated.txt"}
STSB_FILES = {"train": "sts-train.csv", "dev": "sts-dev.csv", "test": "sts-test.csv"}
MRPC_FILES = {"train": "msr_paraphrase_train.txt", "test": "msr_paraphrase_test.txt"}
TREC_FILES = {"train": "train_5500.label", "test": "TREC_10.label"}


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
    if task in BINARY_FILES:
        return [directory / name for name in BINARY_FILES[task]]
    if task in ("SST2", "SST5"):
        return [directory / f"sentiment-{split}" for split in SST_SPLITS]
    if task == "TREC":
        return [directory / name for name in TREC_FILES.values()]
    if task == "MRPC":
        return [directory / name for name in MRPC_FILES.values()]
    if task in ("SICK-E", "SICK-R"):
        return [directory / name for name in SICK_FILES.values()]
    if task == "STSB":
        return [directory / name for name in STSB_FILES.values()]
    return [directory / f"STS.{kind}.{subset}.txt"
            for subset in STS_SUBSETS[task] for kind in ("input", "gs")]


def _classes(labels: list[int]) -> np.ndarray:
    return np.asarray(labels, dtype=np.int64)


def load_binary(directory: Path, task: str, hint: str | None = None) -> TaskData:
    """Return MR/CR/SUBJ/MPQA as one split `all` (SentEval cross-validates them).

    Files are latin-1, one sentence per line; empty lines are kept as empty sentences, as
    SentEval does (CR has 3,775 lines of which 4 are empty).
    """
    hint = hint or fetch_hint(directory.parent)
    positive, negative = (directory / name for name in BINARY_FILES[task])
    pos = [tokens(line) for line in read_lines(positive, encoding="latin-1", hint=hint)]
    neg = [tokens(line) for line in read_lines(negative, encoding="latin-1", hint=hint)]
    examples = Examples(first=tuple(pos + neg), labels=_classes([1] * len(pos) + [0] * len(neg)))
    return TaskData(name=task, splits={"all": examples}, files=(positive, negative),
                    classes=("0", "1"))


def load_sst(directory: Path, n_classes: int, hint: str | None = None, *,
             name: str | None = None) -> TaskData:
    """Return SST-2 (`sentence<TAB>label`) or SST-5 (`label sentence`) train/dev/test splits.

    The files are UTF-8. As SentEval asserts, labels run from 0 to `n_classes - 1` in each split.
    """
    hint = hint or fetch_hint(directory.parent.parent)
    name = name or ("SST2" if n_classes == 2 else "SST5")
    splits: dict[str, Examples] = {}
    paths = [directory / f"sentiment-{split}" for split in SST_SPLITS]
    for split, path in zip(SST_SPLITS, paths):
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


def load_trec(directory: Path, hint: str | None = None) -> TaskData:
    """Return TREC train (5,452 questions) and test (500): `COARSE:fine question`, latin-1."""
    hint = hint or fetch_hint(directory.parent)
    splits: dict[str, Examples] = {}
    for split, filename in TREC_FILES.items():
        path = directory / filename
        sentences: list[str] = []
        labels: list[int] = []
        for line_number, line in enumerate(read_lines(path, encoding="latin-1", hint=hint), 1):
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
    return TaskData(name="TREC", splits=splits,
                    files=tuple(directory / name for name in TREC_FILES.values()),
                    classes=TREC_CLASSES)


def _header(lines: list[str], path: Path, expected: str) -> list[str]:
    """Return the lines after the header, refusing a file whose first line is data."""
    first = lines[0].split("\t")[0].strip()
    if first.lstrip("-").replace(".", "", 1).isdigit():
        raise DataError(f"{path}:1: expected the header line '{expected}', found data; SentEval "
                        "skips the first line, so a missing header would lose an example")
    return lines[1:]


def load_mrpc(directory: Path, hint: str | None = None) -> TaskData:
    """Return MRPC train (4,076 pairs) and test (1,725): UTF-8, header line, CRLF.

    Fields: Quality, #1 ID, #2 ID, #1 String, #2 String; the label is Quality (1 = paraphrase).
    """
    hint = hint or fetch_hint(directory.parent)
    splits: dict[str, Examples] = {}
    for split, filename in MRPC_FILES.items():
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
    return TaskData(name="MRPC", splits=splits,
                    files=tuple(directory / name for name in MRPC_FILES.values()),
                    classes=("0", "1"))


def load_sick(directory: Path, target: str, hint: str | None = None, *,
              name: str | None = None) -> TaskData:
    """Return SICK train/trial/test pairs with relatedness scores or entailment classes.

    `target` is "relatedness" (SICK-R: float scores 1-5) or "entailment" (SICK-E: CONTRADICTION,
    NEUTRAL, ENTAILMENT as 0, 1, 2). Files: header line, tab-separated pair_ID, sentence_A,
    sentence_B, relatedness_score, entailment_judgment; the trial file is the dev split.
    """
    hint = hint or fetch_hint(directory.parent)
    name = name or ("SICK-R" if target == "relatedness" else "SICK-E")
    splits: dict[str, Examples] = {}
    for split, filename in SICK_FILES.items():
        path = directory / filename
        lines = _header(read_lines(path, encoding="utf-8", hint=hint), path,
                        "pair_ID<TAB>sentence_A<TAB>sentence_B<TAB>relatedness_score<TAB>"
                        "entailment_judgment")
        first, second = [], []
        labels: list[float] | list[int] = []
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
                    files=tuple(directory / name for name in SICK_FILES.values()), classes=classes)


def load_sts_benchmark(directory: Path, hint: str | None = None) -> TaskData:
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
    return TaskData(name="STSB", splits=splits,
                    files=tuple(directory / name for name in STSB_FILES.values()))


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


def load_task(task: str, root: Path) -> TaskData:
    """Return SentEval task `task` (MR, ..., STS16) read from the downstream directory `root`."""
    directory = task_directory(root, task)
    hint = fetch_hint(resolve_root(root))
    if task in BINARY_FILES:
        return load_binary(directory, task, hint)
    if task in ("SST2", "SST5"):
        return load_sst(directory, 2 if task == "SST2" else 5, hint)
    if task == "TREC":
        return load_trec(directory, hint)
    if task == "MRPC":
        return load_mrpc(directory, hint)
    if task in ("SICK-E", "SICK-R"):
        return load_sick(directory, "relatedness" if task == "SICK-R" else "entailment", hint)
    if task == "STSB":
        return load_sts_benchmark(directory, hint)
    if task in STS_SUBSETS:
        return load_sts(directory, task, hint)
    raise DataError(f"unknown SentEval task {task!r}; known: {', '.join(LAYOUT)}")
