"""SentEval's files as their sources release them are read as SentEval's script prepares them:
MR/CR/SUBJ/MPQA through `cat -v` and the PTB sed script, TREC without quotes; prepared files are
read as they are (never prepared twice)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from harness.data.preprocess import ptb_file, ptb_prepared, ptb_tokenize, quotes_stripped
from harness_plugins.tasks.senteval.loaders import load_task

RELEASED_MR = [
    "it's a \"funny\" film, isn't it?",
    "the rock is destined to be the 21st century's new conan...",
    "simply put--a mess (and i mean it)",
]
RELEASED_MR_NEGATIVE = ["can't stand it; won't watch again!", "a caf\xe9 scene"]


@pytest.mark.parametrize(("line", "prepared"), [
    ("it's good, really.", False),
    ("it 's good , really . ", True),
    ('say "hi"', False),
    ("say `` hi '' ", True),
    ("can't", False),
    ("ca n't", True),
    ("a--b", False),
    ("a -- b", True),
    ("wait...", False),
    ("wait ... ", True),
    ("the doctor realizes it' 's a love virus . ", True),  # the script's own output
    ("caf\xe9", False),
    ("cafM-i", True),
    ("a good film.", False),  # the script splits a line's final period off
    ("a good film . ", True),
    ("it'd 've ", True),  # the script's output for "it'd've": its later rule split "'ve" off
    ("it's\tfine", True),  # the contraction rules need a space after: the script leaves it
])
def test_ptb_prepared_by_hand(line: str, prepared: bool) -> None:
    assert ptb_prepared(line.encode("latin-1")) is prepared


def test_the_scripts_output_always_counts_as_prepared() -> None:
    for line in RELEASED_MR + RELEASED_MR_NEGATIVE:
        raw = line.encode("latin-1") + b"\n"
        assert not ptb_prepared(raw)
        assert ptb_prepared(ptb_file(raw)) and ptb_prepared(ptb_file(ptb_file(raw)))


def test_a_prepared_file_with_crlf_line_ends_counts_as_prepared() -> None:
    prepared = ptb_file(b"it's good, really.\nsay \"hi\"\n")
    assert ptb_prepared(prepared.replace(b"\n", b"\r\n"))


def test_trec_quotes_by_hand() -> None:
    assert not quotes_stripped(b"DESC:def What is `` AIDS '' ?\n")
    assert quotes_stripped(b"DESC:def What is  AIDS  ?\n")


def write_mr(root: Path, positive: list[bytes], negative: list[bytes]) -> Path:
    (root / "MR").mkdir(parents=True)
    (root / "MR" / "rt-polarity.pos").write_bytes(b"".join(line + b"\n" for line in positive))
    (root / "MR" / "rt-polarity.neg").write_bytes(b"".join(line + b"\n" for line in negative))
    return root


def test_released_mr_is_read_as_prepared_and_prepared_mr_as_it_is(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    positive = [line.encode("latin-1") for line in RELEASED_MR]
    negative = [line.encode("latin-1") for line in RELEASED_MR_NEGATIVE]
    with caplog.at_level(logging.WARNING):
        released = load_task("MR", write_mr(tmp_path / "released", positive, negative))
    prepared = load_task("MR", write_mr(tmp_path / "prepared",
                                        [ptb_file(line + b"\n")[:-1] for line in positive],
                                        [ptb_file(line + b"\n")[:-1] for line in negative]))
    expected = tuple(" ".join(ptb_tokenize(line).split()) for line in RELEASED_MR) + (
        "ca n't stand it ; wo n't watch again !", "a cafM-i scene")
    assert released.splits["all"].first == prepared.splits["all"].first == expected
    assert expected[0] == "it 's a `` funny '' film , is n't it ?"
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 2 and all("as its source releases it" in m for m in warned)
    assert warned[0].startswith(str(tmp_path / "released" / "MR" / "rt-polarity.pos"))


def test_released_trec_loses_its_quotes(tmp_path: Path) -> None:
    (tmp_path / "TREC").mkdir()
    (tmp_path / "TREC" / "train_5500.label").write_bytes(
        b"DESC:def What is `` AIDS '' ?\nHUM:ind Who 's there ?\n")
    (tmp_path / "TREC" / "TREC_10.label").write_bytes(b"NUM:date When did it end ?\n")
    data = load_task("TREC", tmp_path)
    assert data.splits["train"].first == ("What is AIDS ?", "Who s there ?")
    assert data.splits["test"].first == ("When did it end ?",)
