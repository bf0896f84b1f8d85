"""A tiny copy of SentEval's data/downstream, written by the tests, with the real files' quirks.

`write_senteval_fixture(root)` writes every task's files in the layout get_transfer_data.bash
leaves (same names, encodings and field layouts) and returns the number of examples each split
must load. Quirks reproduced: latin-1 bytes and a NEL byte (0x85) inside an MR line, a UTF-8 BOM
(on a latin-1 SUBJ file and a UTF-8 SST file), empty lines in CR (one inside, one at the end),
CRLF line ends and a header line in MRPC and SICK's test file, STS gold files whose empty lines
mark unscored pairs, an STS-B line with extra fields. Other test modules import it.
"""

from __future__ import annotations

from pathlib import Path

POSITIVE = ("good", "great", "fine", "lovely", "superb")
NEGATIVE = ("bad", "awful", "poor", "dull", "weak")
TREC = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
SICK_JUDGMENTS = ("CONTRADICTION", "NEUTRAL", "ENTAILMENT")
STS_SUBSETS = {
    "STS12": ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"),
    "STS13": ("FNWN", "headlines", "OnWN"),
    "STS14": ("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"),
    "STS15": ("answers-forums", "answers-students", "belief", "headlines", "images"),
    "STS16": ("answer-answer", "headlines", "plagiarism", "postediting", "question-question"),
}
STS_LINES = 8
UNSCORED = (2, 5)  # 0-based lines with an empty gold score in STS15 and STS16


def _sentence(words: tuple[str, ...], i: int) -> str:
    return f"the film {i} was {words[i % len(words)]} and {words[(i + 2) % len(words)]} ."


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _text(lines: list[str], encoding: str = "utf-8", newline: str = "\n") -> bytes:
    return "".join(line + newline for line in lines).encode(encoding)


def write_senteval_fixture(root: Path) -> dict[str, dict[str, int]]:
    """Write the fixture under `root` (a data/downstream); return task -> split -> examples."""
    sizes: dict[str, dict[str, int]] = {}

    # MR: latin-1; a NEL byte and an e-acute inside lines must not split them.
    pos = [_sentence(POSITIVE, i) for i in range(30)]
    neg = [_sentence(NEGATIVE, i) for i in range(30)]
    pos[3] = "a caf\xe9 scene \x85 truly good ."
    _write(root / "MR" / "rt-polarity.pos", _text(pos, "latin-1"))
    _write(root / "MR" / "rt-polarity.neg", _text(neg, "latin-1"))
    sizes["MR"] = {"all": 60}

    # CR: an empty line inside and one at the end of each file (as in the real copies).
    cr_pos = [_sentence(POSITIVE, i) for i in range(29)]
    cr_pos.insert(10, "")
    cr_neg = [_sentence(NEGATIVE, i) for i in range(29)] + [""]
    _write(root / "CR" / "custrev.pos", _text(cr_pos))
    _write(root / "CR" / "custrev.neg", _text(cr_neg))
    sizes["CR"] = {"all": 60}

    # SUBJ: latin-1 with a UTF-8 byte-order mark in front of the first file.
    objective = [f"the film {i} is set in {POSITIVE[i % 5]} town ." for i in range(30)]
    subjective = [f"i think film {i} is {NEGATIVE[i % 5]} ." for i in range(30)]
    _write(root / "SUBJ" / "subj.objective", b"\xef\xbb\xbf" + _text(objective, "latin-1"))
    _write(root / "SUBJ" / "subj.subjective", _text(subjective, "latin-1"))
    sizes["SUBJ"] = {"all": 60}

    _write(root / "MPQA" / "mpqa.pos", _text([POSITIVE[i % 5] for i in range(30)]))
    _write(root / "MPQA" / "mpqa.neg", _text([f"not {POSITIVE[i % 5]}" for i in range(30)]))
    sizes["MPQA"] = {"all": 60}

    # SST binary: sentence<TAB>label, a BOM in front of the training file.
    counts = {"train": 40, "dev": 20, "test": 20}
    for split, n in counts.items():
        lines = [f"{_sentence(POSITIVE if i % 2 else NEGATIVE, i)}\t{i % 2}" for i in range(n)]
        bom = b"\xef\xbb\xbf" if split == "train" else b""
        _write(root / "SST" / "binary" / f"sentiment-{split}", bom + _text(lines))
    sizes["SST2"] = dict(counts)
    fine = {"train": 50, "dev": 25, "test": 25}
    for split, n in fine.items():
        lines = [f"{i % 5} the film {i} rates {i % 5} stars ." for i in range(n)]
        _write(root / "SST" / "fine" / f"sentiment-{split}", _text(lines))
    sizes["SST5"] = dict(fine)

    # TREC: COARSE:fine question, latin-1 (a byte above 127 in one line).
    train = [f"{TREC[i % 6]}:other what is {TREC[i % 6].lower()} number {i} ?" for i in range(60)]
    train[7] = "DESC:def What is a cr\xe8me ?"
    test = [f"{TREC[i % 6]}:other what is {TREC[i % 6].lower()} {i} ?" for i in range(12)]
    _write(root / "TREC" / "train_5500.label", _text(train, "latin-1"))
    _write(root / "TREC" / "TREC_10.label", _text(test, "latin-1"))
    sizes["TREC"] = {"train": 60, "test": 12}

    # MRPC: header line, CRLF, UTF-8.
    header = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"
    for split, n in (("train", 40), ("test", 20)):
        rows = [header] + [f"{i % 2}\t{1000 + i}\t{2000 + i}\tThe man {i} said it.\t"
                           f"{'The man ' + str(i) + ' stated it.' if i % 2 else 'Rain fell.'}"
                           for i in range(n)]
        _write(root / "MRPC" / f"msr_paraphrase_{split}.txt", _text(rows, newline="\r\n"))
    sizes["MRPC"] = {"train": 40, "test": 20}

    # SICK: header; the test file has CRLF line ends like the real one.
    header = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment"
    scores = ("1.0", "2.2", "3.4", "4.6", "5.0")
    for name, n, newline in (("SICK_train.txt", 40, "\n"), ("SICK_trial.txt", 20, "\n"),
                             ("SICK_test_annotated.txt", 20, "\r\n")):
        rows = [header] + [f"{i + 1}\tA man is playing {i}\tA person plays {i % 7}\t"
                           f"{scores[i % 5]}\t{SICK_JUDGMENTS[i % 3]}" for i in range(n)]
        _write(root / "SICK" / name, _text(rows, newline=newline))
    sizes["SICK-R"] = sizes["SICK-E"] = {"train": 40, "dev": 20, "test": 20}

    # STS benchmark: 7 fields (one line with two more, as some real lines have).
    for split, n in (("train", 40), ("dev", 20), ("test", 20)):
        rows = [f"main-captions\tMSRvid\t2012test\t{i:04d}\t{(i % 6) * 1.0:.3f}\t"
                f"a man plays {i} .\ta person plays {i % 4} ." for i in range(n)]
        rows[0] += "\tsource1\tsource2"
        _write(root / "STS" / "STSBenchmark" / f"sts-{split}.csv", _text(rows))
    sizes["STSB"] = {"train": 40, "dev": 20, "test": 20}

    # STS12-16: tokenized lower-cased pairs; STS15/16 gold files have unscored (empty) lines.
    for year, subsets in STS_SUBSETS.items():
        sizes[year] = {}
        for subset in subsets:
            directory = root / "STS" / f"{year}-en-test"
            pairs = [f"a dog runs {i} .\ta dog {'runs' if i % 2 else 'sleeps'} {i} ."
                     for i in range(STS_LINES)]
            gold = [f"{(i * 0.6):.2f}" for i in range(STS_LINES)]
            if year in ("STS15", "STS16"):
                for i in UNSCORED:
                    gold[i] = ""
            _write(directory / f"STS.input.{subset}.txt", _text(pairs))
            _write(directory / f"STS.gs.{subset}.txt", _text(gold))
            sizes[year][subset] = STS_LINES - (len(UNSCORED) if year in ("STS15", "STS16") else 0)
    return sizes


def test_fixture_has_the_real_files_quirks(tmp_path: Path) -> None:
    write_senteval_fixture(tmp_path)
    mr = (tmp_path / "MR" / "rt-polarity.pos").read_bytes()
    assert b"\x85" in mr and b"\xe9" in mr  # latin-1, NEL inside a line
    assert (tmp_path / "SUBJ" / "subj.objective").read_bytes().startswith(b"\xef\xbb\xbf")
    assert (tmp_path / "SST" / "binary" / "sentiment-train").read_bytes().startswith(
        b"\xef\xbb\xbf")
    assert b"\n\n" in (tmp_path / "CR" / "custrev.pos").read_bytes()
    assert (tmp_path / "CR" / "custrev.neg").read_bytes().endswith(b".\n\n")
    mrpc = (tmp_path / "MRPC" / "msr_paraphrase_train.txt").read_bytes()
    assert mrpc.startswith(b"Quality\t") and mrpc.count(b"\r\n") == 41
    assert (tmp_path / "SICK" / "SICK_test_annotated.txt").read_bytes().count(b"\r\n") == 21
    gold = (tmp_path / "STS" / "STS16-en-test" / "STS.gs.headlines.txt").read_text().split("\n")
    assert gold[2] == "" and gold[5] == "" and gold[0] == "0.00"
