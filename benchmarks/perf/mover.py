"""Speed of the batched `mover` metric against a plain one-pair-at-a-time MoverScore loop.

The plain loop is what the Vec2Sent release does per pair, without its batching: embed the
reference and the hypothesis on their own, build the full distance matrix over both token sets,
and solve the transport problem (scipy's linear programming, or POT with --plain-solver pot).
Ours embeds every distinct sentence once in length-sorted batches and solves one exact
transport problem per pair on the reference x hypothesis block only.

    python benchmarks/perf/mover.py --pairs 2000 --plain-pairs 200 [--device cuda]

Prints one JSON object: seconds and pairs/s of both, the speed-up per pair, and the largest
difference between the two on the pairs both scored. Timings exclude loading the backbone.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time

import numpy as np
import torch


def synthetic_pairs(count: int, seed: int) -> tuple[list[str], list[str]]:
    """Return references from the quickstart generator and varied regenerations of them."""
    from harness.synthetic import generate_sentences

    rng = random.Random(seed)
    references = generate_sentences("quickstart", count, seed)
    hypotheses = []
    for i, sentence in enumerate(references):
        words = sentence.split()
        choice = i % 5
        if choice == 0:
            hypotheses.append(sentence)
        elif choice == 1:
            rng.shuffle(words)
            hypotheses.append(" ".join(words))
        elif choice == 2:
            hypotheses.append(" ".join(words[:-1]))
        elif choice == 3:
            hypotheses.append(references[(i + 11) % count])
        else:
            hypotheses.append(" ".join(reversed(words)))
    return references, hypotheses


def plain_embedding(tokenizer, model, sentence: str, device: str, layers: int = 5) -> np.ndarray:
    """Token vectors of one sentence, embedded alone (the release's recipe, batch of one)."""
    ids = torch.tensor([tokenizer.encode(sentence)], device=device)
    with torch.inference_mode():
        hidden = model(ids, token_type_ids=torch.zeros_like(ids), output_hidden_states=True)
    stacked = torch.stack(hidden.hidden_states)
    stacked = stacked / stacked.norm(dim=-1, keepdim=True)
    last = stacked[-layers:]
    vectors = torch.cat([last.min(0).values, last.mean(0), last.max(0).values], -1)[0]
    return vectors.double().cpu().numpy()


def plain_transport(ref: np.ndarray, hyp: np.ndarray, solver: str) -> float:
    """1 - EMD over the full (ref + hyp) x (ref + hyp) squared-distance matrix."""
    raw = np.concatenate([ref, hyp])
    raw = raw / (np.linalg.norm(raw, axis=-1, keepdims=True) + 1e-6)
    cost = np.clip((raw ** 2).sum(1)[:, None] + (raw ** 2).sum(1)[None, :] - 2 * raw @ raw.T,
                   0, None)
    size = len(raw)
    first, second = np.zeros(size), np.zeros(size)
    first[:len(ref)] = 1 / len(ref)
    second[len(ref):] = 1 / len(hyp)
    if solver == "pot":
        import ot

        return 1.0 - float(ot.emd2(first, second, cost))
    from scipy.optimize import linprog

    equalities = np.vstack([np.kron(np.eye(size), np.ones(size)),
                            np.kron(np.ones(size), np.eye(size))])
    result = linprog(cost.ravel(), A_eq=equalities, b_eq=np.concatenate([first, second]),
                     bounds=(0, None), method="highs")
    return 1.0 - float(result.fun)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000, help="pairs scored by the metric")
    parser.add_argument("--plain-pairs", type=int, default=200,
                        help="pairs scored by the plain loop (the first of the same pairs)")
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--plain-solver", choices=["linprog", "pot"], default="linprog")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    from harness_plugins.metrics.mover import MoverScoreMetric

    references, hypotheses = synthetic_pairs(args.pairs, args.seed)
    started = time.perf_counter()
    metric = MoverScoreMetric(args.model, batch_size=args.batch_size, device=args.device)
    load_seconds = time.perf_counter() - started
    metric.sentence_statistics(references[:4], hypotheses[:4])  # first-call costs (imports)

    started = time.perf_counter()
    ours = metric.sentence_statistics(references, hypotheses)[:, 0]
    ours_seconds = time.perf_counter() - started

    tokenizer, model = metric.tokenizer, metric.network
    plain_pairs = min(args.plain_pairs, args.pairs)
    embed_seconds = transport_seconds = 0.0
    plain = np.empty(plain_pairs)
    for k in range(plain_pairs):
        tick = time.perf_counter()
        ref = plain_embedding(tokenizer, model, references[k], args.device)
        hyp = plain_embedding(tokenizer, model, hypotheses[k], args.device)
        tock = time.perf_counter()
        plain[k] = plain_transport(ref, hyp, args.plain_solver)
        embed_seconds += tock - tick
        transport_seconds += time.perf_counter() - tock
    plain_seconds = embed_seconds + transport_seconds

    ours_rate = args.pairs / ours_seconds
    plain_rate = plain_pairs / plain_seconds
    print(json.dumps({
        "benchmark": "mover", "model": args.model, "device": args.device,
        "torch_threads": torch.get_num_threads(), "machine": platform.processor() or platform.machine(),
        "load_seconds": round(load_seconds, 2),
        "ours": {"pairs": args.pairs, "seconds": round(ours_seconds, 3),
                 "pairs_per_s": round(ours_rate, 1), "batch_size": args.batch_size},
        "plain": {"pairs": plain_pairs, "seconds": round(plain_seconds, 3),
                  "pairs_per_s": round(plain_rate, 1), "solver": args.plain_solver,
                  "embed_seconds": round(embed_seconds, 3),
                  "transport_seconds": round(transport_seconds, 3)},
        "speedup": round(ours_rate / plain_rate, 2),
        "max_abs_diff": float(np.abs(ours[:plain_pairs] - plain).max()),
    }, indent=2))


if __name__ == "__main__":
    main()
