"""Side by side: the relatedness model (SICK-R, STS-B, syn-relatedness) trained through autograd
and `torch.optim.Adam`, as SentEval's `RelatednessPytorch` does, against the harness's
`fit_relatedness`, whose gradient and Adam step are written out. Prints one JSON object.

    python benchmarks/perf/relatedness.py [--train 4500] [--dim 384] [--threads 1]

Both run SentEval's whole procedure (Tai et al. 2015 targets, batches of 64, 50 epochs between
dev checks, patience 3) on the same random pair features [|u - v|, u * v] of `--dim`-dimensional
vectors whose first coordinate carries the score, from the same initial weights and batch order,
so they take the same steps: the JSON gives each side's seconds, epochs and test Pearson r
(equal to float rounding) and the ratio.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np
import torch
from scipy.stats import pearsonr
from torch import nn

from harness.results.provenance import cpu_model, git_commit
from harness_plugins.tasks.senteval import relatedness
from harness_plugins.tasks.senteval.relatedness import (
    BATCH_SIZE,
    EPOCHS_PER_CHECK,
    MAX_EPOCH,
    N_CLASSES,
    PATIENCE,
    fit_relatedness,
    tai_targets,
)


def autograd_relatedness(train_x: np.ndarray, train_scores: np.ndarray, dev_x: np.ndarray,
                         dev_scores: np.ndarray, test_x: np.ndarray, test_scores: np.ndarray,
                         *, seed: int) -> tuple[float, int]:
    """SentEval's loop: nn.Linear + Softmax, MSE loss, autograd, torch.optim.Adam; returns the
    test Pearson r of the best-dev model and the epochs trained."""
    rng = np.random.RandomState(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = nn.Sequential(nn.Linear(train_x.shape[1], N_CLASSES), nn.Softmax(dim=1))
    optimizer = torch.optim.Adam(model.parameters())
    loss_fn = nn.MSELoss()
    x = torch.as_tensor(train_x, dtype=torch.float32)
    y = torch.as_tensor(tai_targets(train_scores))
    levels = torch.arange(1, N_CLASSES + 1, dtype=torch.float32)

    def predict(features: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return (model(torch.as_tensor(features, dtype=torch.float32)) @ levels).numpy()

    epochs, best, failures = 0, -1.0, 0
    best_state = {k: v.clone() for k, v in model.state_dict().items()}
    while epochs <= MAX_EPOCH:
        for _ in range(EPOCHS_PER_CHECK):
            permutation = torch.from_numpy(rng.permutation(len(x)))
            shuffled_x, shuffled_y = x[permutation], y[permutation]
            for start in range(0, len(x), BATCH_SIZE):
                loss = loss_fn(model(shuffled_x[start:start + BATCH_SIZE]),
                               shuffled_y[start:start + BATCH_SIZE])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        epochs += EPOCHS_PER_CHECK
        r = float(pearsonr(predict(dev_x), dev_scores)[0])
        if r > best:
            best, best_state = r, {k: v.clone() for k, v in model.state_dict().items()}
        else:
            if failures >= PATIENCE:
                break
            failures += 1
    model.load_state_dict(best_state)
    return float(pearsonr(predict(test_x), test_scores)[0]), epochs


def pair_data(n: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Features [|u - v|, u * v] of n random pairs and their scores in [1, 5]."""
    rng = np.random.default_rng(seed)
    scores = rng.uniform(1.0, 5.0, size=n)
    u = rng.normal(size=(n, dim)).astype(np.float32)
    v = u + rng.normal(size=(n, dim)).astype(np.float32) * (5.0 - scores)[:, None] / 4.0
    return np.hstack([np.abs(u - v), u * v]).astype(np.float32), scores


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=4500, help="training pairs (SICK: 4500)")
    parser.add_argument("--dim", type=int, default=384, help="sentence-vector dimension")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    measured = git_commit() or "unknown"  # before the runs: what they timed
    x, scores = pair_data(args.train + 1000, args.dim, args.seed)
    splits = (x[:args.train], scores[:args.train], x[args.train:args.train + 500],
              scores[args.train:args.train + 500], x[args.train + 500:],
              scores[args.train + 500:])
    started = time.perf_counter()
    baseline_r, baseline_epochs = autograd_relatedness(*splits, seed=args.seed)
    baseline = time.perf_counter() - started
    started = time.perf_counter()
    ours = fit_relatedness(*splits, seed=args.seed)
    harness = time.perf_counter() - started
    result = {"benchmark": "relatedness", "date": time.strftime("%Y-%m-%d"),
              "commit": measured, "machine": platform.platform(), "cpu": cpu_model(),
              "threads": torch.get_num_threads(), "torch": torch.__version__,
              "train": args.train, "dim": args.dim,
              "autograd_adam": {"seconds": round(baseline, 2), "epochs": baseline_epochs,
                                "test_pearson": baseline_r},
              "harness": {"seconds": round(harness, 2), "test_pearson": ours.pearson,
                          "module": relatedness.__name__},
              "speedup": round(baseline / harness, 2)}
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
