"""Task loaders read SentEval's layout with its quirks, and name the file and line on errors."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from test_downstream_fixtures import write_senteval_fixture

from harness.errors import DataError
from harness_plugins.tasks.senteval.layout import LAYOUT, resolve_root, task_directory, task_files
from harness_plugins.tasks.senteval.loaders import load_task


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    return tmp_path / "downstream"


@pytest.fixture()
def sizes(root: Path) -> dict[str, dict[str, int]]:
    return write_senteval_fixture(root)


def test_every_task_reads_its_exact_counts(root: Path, sizes: dict) -> None:
    assert set(sizes) == set(LAYOUT)
    for task in LAYOUT:
        assert load_task(task, root).sizes() == sizes[task], task


def test_files_lists_what_the_loader_reads(root: Path, sizes: dict) -> None:
    for task in LAYOUT:
        listed = task_files(task, task_directory(root, task))
        assert all(path.is_file() for path in listed), task
        assert list(load_task(task, root).files) == listed, task


def test_latin1_line_with_nel_byte_stays_one_sentence(root: Path, sizes: dict) -> None:
    data = load_task("MR", root).splits["all"]
    # A file as released (latin-1, NEL byte 0x85 inside a line) is read as SentEval's
    # `cat -v` prepares it: "\xe9" becomes "M-i", NEL "M-^E", and the line stays one sentence.
    assert data.first[3] == "a cafM-i scene M-^E truly good ."
    assert data.labels.tolist() == [1] * 30 + [0] * 30


def test_empty_lines_are_kept_as_empty_sentences(root: Path, sizes: dict) -> None:
    data = load_task("CR", root).splits["all"]
    assert data.first[10] == "" and data.first[-1] == ""
    assert len(data) == 60


def test_byte_order_marks_are_dropped(root: Path, sizes: dict) -> None:
    subj = load_task("SUBJ", root).splits["all"]
    assert subj.first[0] == "the film 0 is set in good town ."
    assert subj.labels[0] == 1  # SentEval labels the objective file 1
    sst = load_task("SST2", root).splits["train"]
    assert sst.first[0] == "the film 0 was bad and poor ." and sst.labels[0] == 0


def test_trec_latin1_and_coarse_classes(root: Path, sizes: dict) -> None:
    data = load_task("TREC", root)
    assert data.classes == ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
    train = data.splits["train"]
    assert train.first[7] == "What is a cr\xe8me ?" and train.labels[7] == 1
    assert np.bincount(train.labels).tolist() == [10] * 6


def test_mrpc_header_and_crlf(root: Path, sizes: dict) -> None:
    train = load_task("MRPC", root).splits["train"]
    assert train.first[0] == "The man 0 said it." and train.second[0] == "Rain fell."
    assert train.labels[:4].tolist() == [0, 1, 0, 1]


def test_sick_relatedness_and_entailment_from_the_same_files(root: Path, sizes: dict) -> None:
    related = load_task("SICK-R", root).splits["test"]
    assert related.labels[:5].tolist() == [1.0, 2.2, 3.4, 4.6, 5.0]
    entail = load_task("SICK-E", root).splits["test"]  # CRLF file: no "\r" in the judgment
    assert entail.labels[:3].tolist() == [0, 1, 2]
    assert related.first[0] == "A man is playing 0"


def test_sts_unscored_pairs_are_dropped(root: Path, sizes: dict) -> None:
    subset = load_task("STS15", root).splits["headlines"]
    kept = [i for i in range(8) if i not in (2, 5)]
    assert subset.labels.tolist() == pytest.approx([i * 0.6 for i in kept])
    assert subset.first[0] == "a dog runs 0 ." and subset.second[1] == "a dog runs 1 ."


def test_sts_benchmark_fields(root: Path, sizes: dict) -> None:
    train = load_task("STSB", root).splits["train"]
    assert train.labels[:3].tolist() == [0.0, 1.0, 2.0]
    assert train.first[0] == "a man plays 0 ." and train.second[0] == "a person plays 0 ."


def test_senteval_data_directory_is_accepted(tmp_path: Path) -> None:
    write_senteval_fixture(tmp_path / "data" / "downstream")
    assert resolve_root(tmp_path / "data") == tmp_path / "data" / "downstream"
    assert load_task("TREC", tmp_path / "data").sizes() == {"train": 60, "test": 12}


def _error(task: str, root: Path) -> str:
    with pytest.raises(DataError) as caught:
        load_task(task, root)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_missing_file_names_it_and_the_download_command(root: Path, sizes: dict) -> None:
    (root / "MR" / "rt-polarity.pos").unlink()
    assert _error("MR", root) == (f"{root}/MR/rt-polarity.pos: missing; run "
                                  f"`harness data senteval --dir {root}`")


def test_empty_file_is_a_broken_download(root: Path, sizes: dict) -> None:
    (root / "SST" / "fine" / "sentiment-dev").write_bytes(b"")
    message = _error("SST5", root)
    assert message.startswith(f"{root}/SST/fine/sentiment-dev: empty")
    assert f"harness data senteval --dir {root}" in message


def test_malformed_line_names_file_and_line(root: Path, sizes: dict) -> None:
    path = root / "SST" / "binary" / "sentiment-dev"
    lines = path.read_text().split("\n")
    lines[2] = "no tab here"
    path.write_text("\n".join(lines))
    assert _error("SST2", root) == (f"{path}:3: expected 2 tab-separated fields (sentence, "
                                    "label), found 1")


def test_label_out_of_range(root: Path, sizes: dict) -> None:
    path = root / "SST" / "fine" / "sentiment-test"
    path.write_text(path.read_text() + "7 a film .\n")
    assert _error("SST5", root) == f"{path}:26: label 7 outside 0..4"


def test_invalid_utf8_names_the_line(root: Path, sizes: dict) -> None:
    path = root / "SICK" / "SICK_trial.txt"
    data = path.read_bytes().split(b"\n")
    data[4] = data[4] + b"\xff"
    path.write_bytes(b"\n".join(data))
    assert _error("SICK-R", root).startswith(f"{path}:5: not valid utf-8")


def test_sts_gold_and_input_must_align(root: Path, sizes: dict) -> None:
    gold = root / "STS" / "STS13-en-test" / "STS.gs.OnWN.txt"
    gold.write_text("\n".join(gold.read_text().split("\n")[:5]) + "\n")
    assert _error("STS13", root).startswith(f"{gold}: 5 lines but STS.input.OnWN.txt has 8")


def test_trec_unknown_class(root: Path, sizes: dict) -> None:
    path = root / "TREC" / "TREC_10.label"
    path.write_text("XYZ:other what ?\n")
    assert _error("TREC", root).startswith(f"{path}:1: unknown class 'XYZ'")


def test_mrpc_without_header_is_refused(root: Path, sizes: dict) -> None:
    path = root / "MRPC" / "msr_paraphrase_test.txt"
    path.write_bytes(path.read_bytes().split(b"\r\n", 1)[1])
    assert _error("MRPC", root).startswith(f"{path}:1: expected the header line")


def test_non_numeric_score(root: Path, sizes: dict) -> None:
    path = root / "STS" / "STSBenchmark" / "sts-dev.csv"
    lines = path.read_text().split("\n")
    lines[1] = lines[1].replace("1.000", "high", 1)
    path.write_text("\n".join(lines))
    assert _error("STSB", root) == f"{path}:2: score 'high' is not a number"


REAL_COUNTS = {
    "MR": {"all": 10662}, "CR": {"all": 3775}, "SUBJ": {"all": 10000}, "MPQA": {"all": 10606},
    "SST5": {"train": 8544, "dev": 1101, "test": 2210},
    "TREC": {"train": 5452, "test": 500}, "MRPC": {"train": 4076, "test": 1725},
    "SICK-E": {"train": 4500, "dev": 500, "test": 4927},
    "SICK-R": {"train": 4500, "dev": 500, "test": 4927},
    "STSB": {"train": 5749, "dev": 1500, "test": 1379},
    "STS12": {"MSRpar": 750, "MSRvid": 750, "SMTeuroparl": 459, "surprise.OnWN": 750,
              "surprise.SMTnews": 399},
    "STS13": {"FNWN": 189, "headlines": 750, "OnWN": 561},
    "STS14": {"deft-forum": 450, "deft-news": 300, "headlines": 750, "images": 750, "OnWN": 750,
              "tweet-news": 750},
    "STS15": {"answers-forums": 375, "answers-students": 750, "belief": 375, "headlines": 750,
              "images": 750},
    "STS16": {"answer-answer": 254, "headlines": 249, "plagiarism": 230, "postediting": 244,
              "question-question": 209},
}
"""Examples SentEval loads from its data (Conneau & Kiela 2018, Table 1; STS: scored pairs)."""


@pytest.mark.skipif("HARNESS_SENTEVAL_DIR" not in os.environ,
                    reason="set HARNESS_SENTEVAL_DIR to a SentEval data/downstream directory")
def test_real_senteval_counts() -> None:
    root = Path(os.environ["HARNESS_SENTEVAL_DIR"])
    for task, counts in REAL_COUNTS.items():
        assert load_task(task, root).sizes() == counts, task
    sst2 = load_task("SST2", root).sizes()
    # SentEval's own SST-2 training file is phrase-level (67,349); sentence-level copies hold 6,920.
    assert sst2["dev"] == 872 and sst2["test"] == 1821 and sst2["train"] in (67349, 6920)
