"""SentEval's tasks through the harness with sbert, over classifier seeds: each task's score at
the first seed, its mean, standard deviation, minimum and maximum over the seeds, and the
official SentEval figure beside it where one is given.

    OMP_NUM_THREADS=1 python benchmarks/perf/senteval_fidelity.py \\
        --data-dir ../shared/data/senteval/downstream --tasks MR,TREC,MRPC --seeds 5 \\
        --official MR=76.61,TREC=89.8,MRPC=71.59 --text as-given --json /tmp/fidelity.json

The encoder is the `sbert` plugin's bundled all-MiniLM-L6-v2 (`SentenceBertEncoder`), run as a
run runs it for a pretrained encoder: task text as the files give it. Each distinct sentence is
encoded once and kept in `--vectors DIR` (one `.npz` per `--text`), so a second call with other
tasks, seeds or configuration only fits classifiers. Each task is evaluated as a run evaluates
it: `senteval_task(name).evaluate(..., seed=s)` at `--seed` (SentEval's default, 1111) and the
`--seeds` - 1 seeds after it (once for a task that trains nothing), combined by
`harness.protocols.over_seeds` (the first seed's result with the spread over all).

`--text senteval` first prepares a copy of `--data-dir` the way SentEval's
`get_transfer_data.bash` prepares the released files (`harness.data.preprocess`): `cat -v` and
the Penn Treebank sed script for MR, CR, SUBJ and MPQA, backquotes and apostrophes removed from
TREC; the other tasks' files are copied as they are. The loaders now read released files as
SentEval prepares them ([downstream](docs/downstream.md), "Files as their sources release
them"), so `--text as-given` reads the same text as `--text senteval`; the figures in
docs/performance.md that compare the two were measured before that change.

Prints one line per task: task, metric, score at the first seed, mean +- sd [min, max] over
the seeds and each seed's score, the official figure and the differences; `--json PATH` writes
all of it, rewritten after each task.

`--batches 32` encodes each task's sentences as SentEval hands them to a batcher instead: in its
order, 32 at a time (its default `batch_size`), each batch padded to its longest sentence. The
same model with other padding gives vectors that differ in rounding only; the scores show how
far such float-level differences move a task.

`--fold-seed N` draws the nested k-fold's folds (MR, CR, SUBJ, MPQA) at `random_state=N`
instead of SentEval's constant 1111: how far another split of the same data (such as another
scikit-learn version's) moves a score.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from senteval_common import CachedEncoder  # noqa: E402

from harness.data.preprocess import ptb_file, strip_quotes  # noqa: E402
from harness.protocols import is_seeded, over_seeds  # noqa: E402
from harness_plugins.tasks.senteval.tasks import FAMILIES, senteval_task  # noqa: E402

PTB_FILES = ("MR/rt-polarity.pos", "MR/rt-polarity.neg", "CR/custrev.pos", "CR/custrev.neg",
             "SUBJ/subj.subjective", "SUBJ/subj.objective", "MPQA/mpqa.pos", "MPQA/mpqa.neg")
TREC_FILES = ("TREC/train_5500.label", "TREC/TREC_10.label")


class SentEvalBatches:
    """sbert's vectors of one task as SentEval's example batcher computes them: each split's
    examples in SentEval's order, `size` at a time (for pairs, every first sentence, then every
    second), one forward pass per batch, padded to its longest sentence. A sentence that occurs
    twice keeps the vector of its last batch (the harness looks vectors up by sentence)."""

    def __init__(self, cached: CachedEncoder, directory: Path, size: int) -> None:
        self.cached, self.directory, self.size = cached, directory, size
        self.vectors: dict[str, np.ndarray] = {}
        self.seconds = 0.0

    def prepare(self, task: object, data_dir: Path, text: str) -> None:
        """Compute (or read) the vectors of `task`'s sentences in SentEval's batches."""
        from sentence_transformers import SentenceTransformer

        from harness_plugins.tasks.senteval.tasks import senteval_order

        path = self.directory / f"sbert-{text}-batches{self.size}-{task.name}.npz"
        if path.exists():
            with np.load(path, allow_pickle=False) as stored:
                self.vectors = dict(zip(stored["sentences"].tolist(), stored["vectors"]))
            return
        started = time.perf_counter()
        model = SentenceTransformer(str(self.cached.encoder.local), device="cpu",
                                    local_files_only=True)
        self.vectors = {}
        for examples in task.load(data_dir).splits.values():
            order = senteval_order(examples)
            for side in (examples.first, examples.second):
                if side is None:
                    continue
                sentences = [side[i] or "." for i in order]
                for start in range(0, len(sentences), self.size):
                    batch = sentences[start:start + self.size]
                    vectors = model.encode(batch, batch_size=len(batch), convert_to_numpy=True,
                                           show_progress_bar=False)
                    self.vectors.update(zip(batch, vectors))
        self.seconds += time.perf_counter() - started
        path.parent.mkdir(parents=True, exist_ok=True)
        sentences = list(self.vectors)
        np.savez(path, sentences=np.array(sentences, dtype=str),
                 vectors=np.stack([self.vectors[s] for s in sentences]))

    def __call__(self, sentences: list[str]) -> np.ndarray:
        return np.stack([self.vectors[s] for s in sentences])


def senteval_prepared(source: Path, target: Path) -> Path:
    """Copy `source` to `target`, MR/CR/SUBJ/MPQA and TREC prepared as SentEval's script does."""
    shutil.copytree(source, target, copy_function=shutil.copyfile)
    for directory in [target, *(p for p in target.rglob("*") if p.is_dir())]:
        directory.chmod(0o755)  # copytree copies a read-only source's directory modes
    for name in PTB_FILES:
        (target / name).write_bytes(ptb_file((source / name).read_bytes()))
    for name in TREC_FILES:
        (target / name).write_bytes(strip_quotes((source / name).read_bytes()))
    return target


def parse_official(text: str) -> dict[str, float]:
    """Return task -> figure from "MR=76.61,TREC=89.8"."""
    official = {}
    for item in filter(None, text.split(",")):
        task, equals, value = item.partition("=")
        if not equals:
            raise SystemExit(f"--official: expected TASK=NUMBER, got {item!r}")
        official[task.strip()] = float(value)
    return official


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data/senteval/downstream"))
    parser.add_argument("--tasks", default="MR,TREC,MRPC", help="comma-separated SentEval tasks")
    parser.add_argument("--seeds", type=int, default=5, help="classifier seeds per task")
    parser.add_argument("--seed", type=int, default=1111, help="the first seed")
    parser.add_argument("--config", default="prototyping", choices=["prototyping", "literature"])
    parser.add_argument("--text", default="as-given", choices=["as-given", "senteval"])
    parser.add_argument("--official", default="", help="TASK=NUMBER,... to compare with")
    parser.add_argument("--batches", type=int, default=0,
                        help="encode in SentEval's batches of this size, in its order (0: "
                             "every distinct sentence once, batched by length, as a run does)")
    parser.add_argument("--fold-seed", type=int, default=None,
                        help="draw MR/CR/SUBJ/MPQA's folds at this random_state instead of "
                             "SentEval's 1111 (how much another fold split moves a score)")
    parser.add_argument("--vectors", type=Path, default=Path("/tmp/senteval-fidelity-vectors"))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.tasks.split(",") if name.strip()]
    unknown = [name for name in names if name not in FAMILIES]
    if unknown:
        raise SystemExit(f"--tasks: unknown {', '.join(unknown)}; known: {', '.join(FAMILIES)}")
    official = parse_official(args.official)
    if args.fold_seed is not None:
        from harness_plugins.tasks.senteval import evaluation

        evaluation.INNER_KFOLD_SEED = args.fold_seed

    import torch

    torch.set_num_threads(1)
    scratch = Path(tempfile.mkdtemp(prefix="senteval-fidelity-"))
    try:
        data_dir = (senteval_prepared(args.data_dir, scratch / "downstream")
                    if args.text == "senteval" else args.data_dir)
        cached = CachedEncoder(args.vectors / f"sbert-{args.text}.npz")
        batched = SentEvalBatches(cached, args.vectors, args.batches) if args.batches else None
        encode = batched or cached
        rows = []
        for name in names:
            started = time.perf_counter()
            encoded_before = encode.seconds
            task = senteval_task(name)
            if batched is not None:
                batched.prepare(task, data_dir, args.text)
            count = args.seeds if is_seeded(task) else 1
            result = over_seeds([task.evaluate(encode, data_dir, config=args.config, seed=seed)
                                 for seed in range(args.seed, args.seed + count)])
            spread = result.spread
            row = {"task": name, "metric": result.metric, "text": args.text,
                   "batches": args.batches, "fold_seed": args.fold_seed,
                   "config": args.config, "seed": result.seed, "score": result.score,
                   "spread": spread.to_json() if spread is not None else None,
                   "official": official.get(name),
                   "encode_seconds": round(encode.seconds - encoded_before, 1),
                   "seconds": round(time.perf_counter() - started, 1)}
            rows.append(row)
            line = f"{name:7} {result.metric:8} seed {result.seed}: {result.score:8.4g}"
            if spread is not None:
                line += (f"  mean {spread.mean:.4g} +- {spread.sd:.2g} "
                         f"[{spread.min:.4g}, {spread.max:.4g}] over {list(spread.seeds)}: "
                         f"{list(spread.values)}")
            if name in official:
                line += f"  official {official[name]:.4g} (seed {result.seed} - official: " \
                        f"{result.score - official[name]:+.3g}"
                if spread is not None:
                    line += f", mean - official: {spread.mean - official[name]:+.3g}"
                line += ")"
            print(line + f"  {row['seconds']} s", flush=True)
            if args.json is not None:  # after each task: a run cut short keeps what it found
                args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
