"""Expected line counts of the files SentEval's `get_transfer_data.bash` leaves in data/downstream.

`harness data senteval` checks every prepared file against these, so an empty or truncated
download is caught at once rather than as a crash or a silently wrong score later. Counts are
lines as `reading.read_lines` splits them (`wc -l` for files ending in a newline), header lines
included. MR, CR, SUBJ and MPQA are checked by their total over the two files: these are the
example counts SentEval documents (Conneau & Kiela 2018, Table 1), empty lines included.

SST/binary/sentiment-train is SentEval's phrase-level SST-2 training set (67,349 lines, "67k" in
SentEval's table); some redistributed copies hold the 6,920 sentence-level training examples
instead.
"""

from __future__ import annotations

_STS_LINES: dict[str, dict[str, int]] = {
    "STS12": {"MSRpar": 750, "MSRvid": 750, "SMTeuroparl": 459, "surprise.OnWN": 750,
              "surprise.SMTnews": 399},
    "STS13": {"FNWN": 189, "headlines": 750, "OnWN": 561},
    "STS14": {"deft-forum": 450, "deft-news": 300, "headlines": 750, "images": 750, "OnWN": 750,
              "tweet-news": 750},
    "STS15": {"answers-forums": 2000, "answers-students": 1500, "belief": 2000, "headlines": 1500,
              "images": 1500},
    "STS16": {"answer-answer": 1572, "headlines": 1498, "plagiarism": 1271, "postediting": 3287,
              "question-question": 1555},
}

LINES: dict[str, int] = {
    "SST/binary/sentiment-train": 67349,
    "SST/binary/sentiment-dev": 872,
    "SST/binary/sentiment-test": 1821,
    "SST/fine/sentiment-train": 8544,
    "SST/fine/sentiment-dev": 1101,
    "SST/fine/sentiment-test": 2210,
    "TREC/train_5500.label": 5452,
    "TREC/TREC_10.label": 500,
    "MRPC/msr_paraphrase_train.txt": 4077,
    "MRPC/msr_paraphrase_test.txt": 1726,
    "SICK/SICK_train.txt": 4501,
    "SICK/SICK_trial.txt": 501,
    "SICK/SICK_test_annotated.txt": 4928,
    "STS/STSBenchmark/sts-train.csv": 5749,
    "STS/STSBenchmark/sts-dev.csv": 1500,
    "STS/STSBenchmark/sts-test.csv": 1379,
    **{f"STS/{year}-en-test/STS.{kind}.{subset}.txt": count
       for year, subsets in _STS_LINES.items() for subset, count in subsets.items()
       for kind in ("input", "gs")},
}
"""File (relative to data/downstream) -> expected number of lines."""

TOTALS: dict[str, tuple[tuple[str, str], int]] = {
    "MR": (("MR/rt-polarity.pos", "MR/rt-polarity.neg"), 10662),
    "CR": (("CR/custrev.pos", "CR/custrev.neg"), 3775),
    "SUBJ": (("SUBJ/subj.objective", "SUBJ/subj.subjective"), 10000),
    "MPQA": (("MPQA/mpqa.pos", "MPQA/mpqa.neg"), 10606),
}
"""Binary task -> (its two files, expected lines over both)."""


def count_lines(data: bytes) -> int:
    """Return the number of lines in `data`: newlines, plus one for an unterminated last line."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
