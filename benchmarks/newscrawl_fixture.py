"""Write News-Crawl-like `news.YEAR.en.shuffled.gz` files, offline, for a small run of the paper's
spec on a CPU (README: "The paper's protocol, small").

Each file holds sentences of the quickstart's synthetic English (`harness.synthetic`) mixed with
longer lines of 15 tokens or more, which `harness data newscrawl` drops as the paper's
`awk 'NF<15'` does, in the shuffled one-sentence-per-line layout of the WMT files.

    python benchmarks/newscrawl_fixture.py --out /tmp/newscrawl --lines 4000
    harness data newscrawl --year 2007 --lines 3000 --dir /tmp/newscrawl \
        --url /tmp/newscrawl/news.2007.en.shuffled.gz
"""

from __future__ import annotations

import argparse
import gzip
import random
from pathlib import Path

from harness.synthetic import generate_sentences

YEARS = {2007: 1, 2008: 2}
"""Year -> the seed of its sentences (the two years' files differ)."""

LONG_SHARE = 0.2
"""Share of lines with 15 tokens or more: two or three sentences run together."""


def news_lines(count: int, seed: int) -> list[str]:
    """`count` lines: synthetic sentences, a `LONG_SHARE` of them joined into long lines."""
    rng = random.Random(seed)
    pool = generate_sentences("quickstart", 3 * count, seed)
    lines, used = [], 0
    while len(lines) < count:
        if rng.random() < LONG_SHARE:
            parts = []
            while len(" ".join(parts).split()) < 15:
                parts.append(pool[used % len(pool)])
                used += 1
            lines.append(" ".join(parts))
        else:
            lines.append(pool[used % len(pool)])
            used += 1
    return lines


def write_fixture(directory: Path, lines: int) -> list[Path]:
    """Write `news.YEAR.en.shuffled.gz` for each year of `YEARS` into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for year, seed in YEARS.items():
        path = directory / f"news.{year}.en.shuffled.gz"
        text = "".join(line + "\n" for line in news_lines(lines, seed)).encode("utf-8")
        path.write_bytes(gzip.compress(text, mtime=0))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="directory for the .gz files")
    parser.add_argument("--lines", type=int, default=4000, help="lines per file")
    args = parser.parse_args(argv)
    for path in write_fixture(args.out, args.lines):
        print(path)


if __name__ == "__main__":
    main()
