"""Speed of the `mover` metric against the released Vec2Sent MoverScore, side by side.

Both sides score the same reference/hypothesis pairs with the same backbone and the same token
vectors (every layer divided by its norm; min, mean and max over the last 5 layers):

- ours: `MoverScoreMetric.sentence_statistics`, which embeds every distinct sentence once in
  length-sorted batches (`--batch-size`, default the metric's 64) and solves one exact transport
  problem per pair on the reference x hypothesis block (POT's `ot.emd2`);
- released: the Vec2Sent release's `word_mover_score` (`evaluation/mover_score.py`) as a user runs
  it: the pairs in chunks of `--released-batch` (the release's default 256), the chunk's
  references embedded as one padded batch in their given order and its hypotheses as another,
  then one pair at a time: both token sets stacked and renormalised, the full (n + m) x (n + m)
  squared-distance matrix, and exact EMD by pyemd (the release's solver) when it is installed,
  else POT's `ot.emd2` on the n x m block (`--solver` forces one). Two details of the release are
  left out because they only slow it or move scores by ~1e-5: the per-token `load_ngram` loop
  (for unigrams it scales each vector by 1 / (1 + 1e-5) before the renormalisation) and the
  1e-5 added to the weight sums; both sides weigh tokens uniformly with masses summing to 1.

The pairs are synthetic (`synthetic_pairs`): 2 in 5 hypotheses repeat a reference (their own,
as an exact reconstruction does, or another), and ours embeds those once; with
`--distinct-hypotheses` every hypothesis is new, so both sides embed as many sentences.

Each side runs at 1 and 2 torch and BLAS threads (`--threads`) and at each batch size given
(`--batch-size 32,64,256`, `--released-batch 64,256`), `--repeats` times, the rounds interleaved
(each round runs every side in every setting), so that a machine whose load changes affects all
alike; medians are reported. Time is split into embedding (tokenising, the backbone's forward
passes, pooling) and the rest (distance matrices and transport). The headline
ratio compares each side in its own best setting. Before timing, the scores of every setting of
both sides are compared on every pair and must agree to `--tolerance`.

    python benchmarks/perf/mover.py [--pairs 1000] [--model minilm|bert-base-uncased]
                                    [--threads 1,2] [--batch-size 64] [--released-batch 256]
                                    [--repeats 3] [--solver auto|pyemd|pot]
                                    [--distinct-hypotheses]

Prints one JSON object. Timings exclude loading the backbone. `--model bert-base-uncased` (the
paper's backbone) needs it in the local Hugging Face cache; `minilm` is bundled and offline.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time
from collections.abc import Callable, Sequence

import numpy as np
import torch
from threadpoolctl import threadpool_limits

LAYERS = 5
RELEASE_EPS = 1e-6
"""The release adds this to the norms when it renormalises the stacked token vectors."""


def synthetic_pairs(count: int, seed: int, distinct: bool = False) -> tuple[list[str], list[str]]:
    """References from the quickstart generator and hypotheses that vary them five ways:
    the same sentence, shuffled, the last word dropped, another reference, reversed.

    With `distinct`, no hypothesis repeats a reference (the first word dropped instead of the
    same sentence, a further generated sentence instead of another reference), so ours embeds
    as many sentences as the release does.
    """
    from harness.synthetic import generate_sentences

    rng = random.Random(seed)
    generated = generate_sentences("quickstart", 2 * count if distinct else count, seed)
    references = generated[:count]
    hypotheses = []
    for i, sentence in enumerate(references):
        words = sentence.split()
        kind = i % 5
        if kind == 0:
            hypotheses.append(" ".join(words[1:]) if distinct else sentence)
        elif kind == 1:
            rng.shuffle(words)
            hypotheses.append(" ".join(words))
        elif kind == 2:
            hypotheses.append(" ".join(words[:-1]))
        elif kind == 3:
            hypotheses.append(generated[count + i] if distinct else references[(i + 11) % count])
        else:
            hypotheses.append(" ".join(reversed(words)))
    return references, hypotheses


def pick_solver(requested: str) -> str:
    """"pyemd" when asked for or (auto) importable, else "pot"."""
    if requested != "auto":
        return requested
    try:
        import pyemd  # noqa: F401
    except ImportError:
        return "pot"
    return "pyemd"


class Released:
    """The release's `word_mover_score` on a transformers backbone, uniform weights, unigrams."""

    def __init__(self, tokenizer, network, device: str, batch: int, solver: str) -> None:
        self.tokenizer, self.network, self.device = tokenizer, network, device
        self.batch, self.solver = batch, solver
        if solver == "pyemd":
            from pyemd import emd

            self._emd = emd
        else:
            import ot

            self._emd2 = ot.emd2

    def embed(self, sentences: Sequence[str]) -> tuple[torch.Tensor, list[int]]:
        """Pooled token vectors (B, T, 3H) of one padded batch, unsorted, and the lengths."""
        cls, sep = self.tokenizer.cls_token, self.tokenizer.sep_token
        ids = [self.tokenizer.convert_tokens_to_ids([cls, *self.tokenizer.tokenize(s), sep])
               for s in sentences]
        lengths = [len(row) for row in ids]
        width = max(lengths)
        pad = self.tokenizer.pad_token_id or 0
        padded = torch.full((len(ids), width), pad, dtype=torch.long)
        mask = torch.zeros((len(ids), width), dtype=torch.long)
        for row, tokens in enumerate(ids):
            padded[row, :len(tokens)] = torch.tensor(tokens)
            mask[row, :len(tokens)] = 1
        padded, mask = padded.to(self.device), mask.to(self.device)
        with torch.no_grad():
            out = self.network(padded, token_type_ids=torch.zeros_like(padded),
                               attention_mask=mask, output_hidden_states=True)
        last = torch.stack(out.hidden_states[-LAYERS:])
        last = last / torch.norm(last, dim=-1).unsqueeze(-1)
        pooled = torch.cat([last.min(0).values, last.mean(0), last.max(0).values], -1)
        return pooled, lengths

    def score(self, ref: torch.Tensor, hyp: torch.Tensor) -> float:
        """1 - EMD of one pair from its two (tokens, 3H) blocks, as the release computes it."""
        raw = torch.cat([ref, hyp], 0)
        raw = raw / (torch.norm(raw, dim=-1).unsqueeze(-1) + RELEASE_EPS)
        n, m = len(ref), len(hyp)
        if self.solver == "pyemd":
            squared = (raw ** 2).sum(1)
            distance = torch.clamp(squared.view(-1, 1) + squared.view(1, -1)
                                   - 2.0 * raw @ raw.T, 0.0)
            first = np.zeros(n + m)
            second = np.zeros(n + m)
            first[:n] = 1.0 / n
            second[n:] = 1.0 / m
            return 1.0 - self._emd(first, second, distance.double().cpu().numpy())
        left, right = raw[:n], raw[n:]
        distance = torch.clamp((left ** 2).sum(1).view(-1, 1) + (right ** 2).sum(1).view(1, -1)
                               - 2.0 * left @ right.T, 0.0)
        return 1.0 - float(self._emd2(np.full(n, 1.0 / n), np.full(m, 1.0 / m),
                                      distance.double().cpu().numpy()))

    def run(self, references: Sequence[str], hypotheses: Sequence[str]) -> tuple[np.ndarray,
                                                                                   float, float]:
        """Scores of every pair, seconds embedding, seconds in distances and transport."""
        scores = []
        embed_seconds = transport_seconds = 0.0
        for start in range(0, len(references), self.batch):
            tick = time.perf_counter()
            refs, ref_lengths = self.embed(references[start:start + self.batch])
            hyps, hyp_lengths = self.embed(hypotheses[start:start + self.batch])
            tock = time.perf_counter()
            for i, (n, m) in enumerate(zip(ref_lengths, hyp_lengths)):
                scores.append(self.score(refs[i, :n], hyps[i, :m]))
            embed_seconds += tock - tick
            transport_seconds += time.perf_counter() - tock
        return np.array(scores), embed_seconds, transport_seconds


def run_ours(metric, references: Sequence[str], hypotheses: Sequence[str]) -> tuple[np.ndarray,
                                                                                    float, float]:
    """Scores of every pair, seconds embedding (ids and forward passes), seconds for the rest."""
    spent = [0.0]

    def timed(function: Callable) -> Callable:
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - started
        return wrapper

    metric.token_ids = timed(type(metric).token_ids.__get__(metric))
    metric.token_embeddings = timed(type(metric).token_embeddings.__get__(metric))
    try:
        started = time.perf_counter()
        scores = metric.sentence_statistics(references, hypotheses)[:, 0]
        total = time.perf_counter() - started
    finally:
        del metric.token_ids, metric.token_embeddings
    return scores, spent[0], total - spent[0]


def commit() -> str:
    """The harness commit measured (`harness.results.provenance.git_commit`: `-dirty` when the tree had
    uncommitted changes), "unknown" when nothing knows it."""
    from harness.results.provenance import git_commit

    return git_commit() or "unknown"


def integers(text: str) -> list[int]:
    """"1,2" -> [1, 2]."""
    return [int(part) for part in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000, help="pairs scored by each side")
    parser.add_argument("--model", default="minilm",
                        help="minilm (bundled, offline) or a cached hub name or a directory")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-size", type=integers, default=[64],
                        help="ours: the metric's batch size(s) to try (its default 64)")
    parser.add_argument("--released-batch", type=integers, default=[256],
                        help="released: pairs per chunk to try (the release's default 256)")
    parser.add_argument("--solver", choices=["auto", "pyemd", "pot"], default="auto",
                        help="released side's EMD solver (auto: pyemd if installed, else POT)")
    parser.add_argument("--threads", type=integers, default=[1, 2],
                        help="torch and BLAS thread counts to try")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--tolerance", type=float, default=1e-4,
                        help="largest allowed difference between the two sides' scores")
    parser.add_argument("--distinct-hypotheses", action="store_true",
                        help="no hypothesis repeats a reference (ours then embeds 2 x pairs "
                             "sentences too)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    measured = commit()  # before the runs: a commit landing meanwhile is not what they timed

    from harness_plugins.metrics.mover import MoverScoreMetric

    references, hypotheses = synthetic_pairs(args.pairs, args.seed, args.distinct_hypotheses)
    started = time.perf_counter()
    metric = MoverScoreMetric(args.model, batch_size=args.batch_size[0], device=args.device)
    load_seconds = time.perf_counter() - started
    solver = pick_solver(args.solver)

    def ours(batch: int) -> Callable[[], tuple[np.ndarray, float, float]]:
        def run() -> tuple[np.ndarray, float, float]:
            metric.batch_size = batch
            return run_ours(metric, references, hypotheses)
        return run

    def released(batch: int) -> Callable[[], tuple[np.ndarray, float, float]]:
        side = Released(metric.tokenizer, metric.network, args.device, batch, solver)
        return lambda: side.run(references, hypotheses)

    sides = {("ours", batch): ours(batch) for batch in args.batch_size}
    sides.update({("released", batch): released(batch) for batch in args.released_batch})

    # Same scores on every pair from every setting (this also pays first-call costs).
    scores = [run()[0] for run in sides.values()]
    difference = max(float(np.abs(other - scores[0]).max()) for other in scores)
    if not difference <= args.tolerance:
        raise SystemExit(f"the two sides disagree: largest difference {difference:.3g} > "
                         f"{args.tolerance:g}")

    samples: dict[tuple[str, int, int], list[tuple[float, float, float]]] = {}
    loads = []
    for _ in range(args.repeats):
        for count in args.threads:
            for (name, batch), run in sides.items():
                torch.set_num_threads(count)
                with threadpool_limits(limits=count):
                    loads.append(os.getloadavg()[0])
                    started = time.perf_counter()
                    _, embed, rest = run()
                    total = time.perf_counter() - started
                samples.setdefault((name, count, batch), []).append((total, embed, rest))

    rows: dict[str, list[dict]] = {"ours": [], "released": []}
    for (name, count, batch), runs in samples.items():
        total = statistics.median(run[0] for run in runs)
        rows[name].append({
            "threads": count, "batch": batch,
            "pairs_per_s": round(args.pairs / total, 1),
            "seconds": round(total, 3),
            "embed_seconds": round(statistics.median(run[1] for run in runs), 3),
            "transport_seconds": round(statistics.median(run[2] for run in runs), 3),
            "pairs_per_s_runs": [round(args.pairs / run[0], 1) for run in runs],
        })

    def best(name: str, threads: int | None = None) -> dict:
        return max((row for row in rows[name] if threads in (None, row["threads"])),
                   key=lambda row: row["pairs_per_s"])

    ours_best, released_best = best("ours"), best("released")
    print(json.dumps({
        "benchmark": "mover", "commit": measured, "model": args.model, "device": args.device,
        "machine": platform.processor() or platform.machine(), "torch": torch.__version__,
        "pairs": args.pairs, "distinct_hypotheses": args.distinct_hypotheses,
        "repeats": args.repeats, "load_seconds": round(load_seconds, 2),
        "sentences_embedded": {"ours": len(set(references) | set(hypotheses)),
                               "released": 2 * args.pairs},
        "ours": {"solver": "pot (ot.emd2, reference x hypothesis)", "runs": rows["ours"]},
        "released": {"solver": ("pyemd (full (n+m) x (n+m) matrix)" if solver == "pyemd"
                                else "pot (ot.emd2, reference x hypothesis)"),
                     "runs": rows["released"]},
        "max_abs_diff": difference,
        "ratio_per_threads": {str(t): round(best("ours", t)["pairs_per_s"]
                                            / best("released", t)["pairs_per_s"], 2)
                              for t in args.threads},
        "best": {"ours": {k: ours_best[k] for k in ("threads", "batch")},
                 "released": {k: released_best[k] for k in ("threads", "batch")}},
        "ratio_best_vs_best": round(ours_best["pairs_per_s"] / released_best["pairs_per_s"], 2),
        "embed_ratio_best": round(released_best["embed_seconds"] / ours_best["embed_seconds"], 2),
        "transport_ratio_best": round(released_best["transport_seconds"]
                                      / ours_best["transport_seconds"], 2),
        "loadavg_1min": {"min": min(loads), "median": statistics.median(loads),
                         "max": max(loads)},
    }, indent=2))

if __name__ == "__main__":
    main()
