"""Skip-gram fastText vectors (Bojanowski et al. 2017), trained in a fresh process.

Within one Python process, fasttext 0.9.3's results depend on the models trained before it
(the same call drifts after a few repetitions and can silently diverge), while a fresh process
with one thread gives the same vectors every time; so training runs in a child process.
Both the subword vocabulary (harness.text.subwords) and word-vector encoders use it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import DataError

DIVERGED = 1e3  # no coordinate of a sane skip-gram vector comes near this
FASTTEXT_EOS = "</s>"


def write_corpus(lines: Iterable[str], path: Path) -> int:
    """Write the non-blank `lines`, stripped, one per line, to `path` (fastText's input);
    return how many were written. Streams: only the line at hand is held."""
    count = 0
    with Path(path).open("w", encoding="utf-8") as handle:
        for line in lines:
            if line.strip():
                handle.write(line.strip() + "\n")
                count += 1
    return count


def train_skipgram(lines: Iterable[str] | Path, *, dim: int, epochs: int, min_count: int = 1,
                   minn: int = 3, maxn: int = 6, bucket: int = 200_000, threads: int = 1,
                   words: Sequence[str] | None = None
                   ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Return (words, counts, vectors) of skip-gram vectors trained on whitespace-token `lines`.

    `lines` is an iterable of lines (written to a temporary file by `write_corpus`, streaming)
    or the path of a file in `write_corpus`'s form, which fastText reads as it is.
    With `words` given, vectors are returned for exactly those strings (fastText composes
    vectors of unseen ones from character n-grams; counts are 0 for them); otherwise for the
    model's vocabulary (words seen `min_count` times), in its frequency order.
    """
    with tempfile.TemporaryDirectory() as directory:
        if isinstance(lines, Path):
            text = lines
            if not text.is_file() or text.stat().st_size == 0:
                raise DataError(f"fastText: the corpus {text} has no words")
        else:
            text = Path(directory) / "corpus.txt"
            if write_corpus(lines, text) == 0:
                raise DataError("fastText: the corpus has no words")
        arguments = {"text": str(text), "out": str(Path(directory) / "vectors.npz"),
                     "dim": dim, "epochs": epochs, "min_count": min_count, "minn": minn,
                     "maxn": maxn, "bucket": bucket, "threads": threads,
                     "words": None if words is None else list(words)}
        request = Path(directory) / "request.json"
        request.write_text(json.dumps(arguments), encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "harness.text.skipgram", str(request)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise DataError(f"fastText training failed: {last}")
        with np.load(arguments["out"]) as saved:
            return (json.loads(str(saved["words"])), saved["counts"].copy(),
                    saved["vectors"].copy())


def _fit(path: str, *, dim: int, epochs: int, min_count: int, minn: int, maxn: int,
         bucket: int, threads: int) -> Any:
    """Return a skip-gram model; a run that diverges is retried at half the learning rate.

    fastText's linearly decaying rate can diverge on tiny corpora, with "Encountered NaN" or
    with huge vectors; each retry halves the starting rate (fastText's default, 0.05). Raises
    DataError when the last attempt diverges too.
    """
    import fasttext

    lr = 0.05
    for _ in range(4):
        try:
            model = fasttext.train_unsupervised(
                path, model="skipgram", dim=dim, epoch=epochs, lr=lr, minCount=min_count,
                thread=threads, bucket=bucket, minn=minn, maxn=maxn, verbose=0)
        except RuntimeError as exc:
            if "NaN" not in str(exc):
                raise
        else:
            if np.all(np.abs(model.get_input_matrix()) < DIVERGED):
                return model
        lr /= 2
    raise DataError(f"skip-gram training diverged four times (learning rate "
                    f"down to {2 * lr:g}): the corpus is probably too small or too repetitive "
                    "for the vocabulary's `dim`/`epochs`; lower them or give more text")


def _child(request: Path) -> None:
    """Train as the request file says and save words, counts and vectors (child process)."""
    args = json.loads(request.read_text(encoding="utf-8"))
    model = _fit(args["text"], dim=args["dim"], epochs=args["epochs"],
                 min_count=args["min_count"], minn=args["minn"], maxn=args["maxn"],
                 bucket=args["bucket"], threads=args["threads"])
    vocabulary, frequencies = model.get_words(include_freq=True)
    frequency = dict(zip(vocabulary, frequencies))
    words = args["words"]
    if words is None:
        words = [w for w in vocabulary if w != FASTTEXT_EOS]
    vectors = np.stack([model.get_word_vector(w) for w in words]).astype(np.float32)
    counts = np.array([frequency.get(w, 0) for w in words], dtype=np.int64)
    np.savez(args["out"], words=np.array(json.dumps(words)), counts=counts, vectors=vectors)


if __name__ == "__main__":
    try:
        _child(Path(sys.argv[1]))
    except DataError as exc:  # the parent reports the last line of stderr
        print(exc, file=sys.stderr)
        sys.exit(1)
