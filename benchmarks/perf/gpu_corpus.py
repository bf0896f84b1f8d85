"""The corpus of the GPU benchmarks (benchmarks/perf/gpu.sh): real English sentences with fewer
than 15 whitespace tokens, as the paper filters its training data, and more of them than the
newstest sets alone hold (the training benchmark needs 155 batches of 128 besides 10,000 test
sentences).

First the WMT newstest English sentences (a `train.txt` and `test.txt` of one sentence per
line), then the sentences of SentEval's MR, CR, SUBJ, TREC and SST-2 training files in
SentEval's own layout; each sentence once, in that order, untouched otherwise.

    python benchmarks/perf/gpu_corpus.py NEWSTEST_DIR SENTEVAL_DOWNSTREAM_DIR OUT_FILE
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator
from pathlib import Path

MAX_TOKENS = 15  # fewer than this many whitespace tokens (Kerscher & Eger 2020, section 3)


def lines(path: Path, encoding: str = "utf-8") -> list[str]:
    """The lines of a file split at newlines only: SentEval's latin-1 files hold U+0085 (NEL)
    inside sentences, which `str.splitlines` would take for a line break."""
    return path.read_text(encoding=encoding).split("\n")


def senteval_sentences(root: Path) -> Iterator[str]:
    """The sentences of SentEval's MR, CR, SUBJ (latin-1 files, one per line), TREC (label, a
    space, the question) and SST-2 training (sentence, a tab, the label) files."""
    for name in ("MR/rt-polarity.pos", "MR/rt-polarity.neg", "CR/custrev.pos", "CR/custrev.neg",
                 "SUBJ/subj.objective", "SUBJ/subj.subjective"):
        yield from lines(root / name, "latin-1")
    for line in lines(root / "TREC/train_5500.label", "latin-1"):
        yield line.partition(" ")[2]
    for line in lines(root / "SST/binary/sentiment-train"):
        yield line.partition("\t")[0]


def short_unique(lines: Iterable[str]) -> list[str]:
    """Non-empty stripped lines with fewer than MAX_TOKENS tokens, each once, in order."""
    seen: dict[str, None] = {}
    for line in lines:
        line = line.strip()
        if line and len(line.split()) < MAX_TOKENS:
            seen.setdefault(line)
    return list(seen)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("newstest", type=Path, help="folder with train.txt and test.txt")
    parser.add_argument("senteval", type=Path, help="SentEval's data/downstream folder")
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    news = [line for name in ("train.txt", "test.txt") for line in lines(args.newstest / name)]
    sentences = short_unique([*news, *senteval_sentences(args.senteval)])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    print(f"{len(sentences)} sentences to {args.out}")


if __name__ == "__main__":
    main()
