"""Supervised relatedness (SICK-R, STS-B) the way SentEval does it, after Tai et al. (2015).

Tai, Socher & Manning (2015), section 4.2: a gold score y in [1, K] becomes the sparse target
distribution p whose expectation sum_i i * p_i is y (see `tai_targets`), a softmax classifier over
the pair features predicts p-hat, and the predicted score is y-hat = r^T p-hat with
r = [1, ..., K]. SentEval (senteval/tools/relatedness.py) trains a single
linear layer + softmax on the features [|u - v|, u * v] with a mean-squared-error loss, Adam
(default settings, no weight decay), batches of 64, 50 epochs between dev evaluations, and stops
once dev Pearson r has failed to improve more than 3 times; the model with the best dev Pearson
predicts the test set.

STS-B's gold scores run from 0 to 5 while the classes are 1..5: SentEval encodes them with the same
function, so a score of 0 gets an all-zero target and scores below 1 put their mass on class 1.
This module keeps that behaviour, so STS-B numbers stay comparable with published ones.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import pearsonr, spearmanr
from torch import nn

N_CLASSES = 5
BATCH_SIZE = 64
MAX_EPOCH = 1000
EPOCHS_PER_CHECK = 50
PATIENCE = 3


def finite(value: float) -> float:
    """Return `value`, or 0.0 for NaN (SentEval reports an undefined correlation as 0)."""
    return 0.0 if math.isnan(value) else float(value)


def tai_targets(scores: np.ndarray, n_classes: int = N_CLASSES) -> np.ndarray:
    """Return the (n, n_classes) target distributions of gold scores (Tai et al. 2015, 4.2).

    Class index i stands for the score i + 1. For y with floor(y) = f:
    p[f] = y - f (the class f + 1) and p[f - 1] = f - y + 1 (the class f); indices outside
    0..n_classes-1 are dropped, as SentEval's `encode_labels` drops them.
    """
    scores = np.asarray(scores, dtype=np.float64)
    floor = np.floor(scores).astype(np.int64)
    targets = np.zeros((len(scores), n_classes), dtype=np.float32)
    rows = np.arange(len(scores))
    upper = (floor >= 0) & (floor < n_classes)
    targets[rows[upper], floor[upper]] = (scores - floor)[upper]
    lower = (floor - 1 >= 0) & (floor - 1 < n_classes)
    targets[rows[lower], floor[lower] - 1] = (floor - scores + 1)[lower]
    return targets


def pearson(predicted: np.ndarray, gold: np.ndarray) -> float:
    """Return Pearson's r, 0.0 where it is undefined (constant input), as SentEval reports it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return finite(float(pearsonr(predicted, gold)[0]))


def spearman(predicted: np.ndarray, gold: np.ndarray) -> float:
    """Return Spearman's rho, 0.0 where it is undefined (constant input)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return finite(float(spearmanr(predicted, gold)[0]))


@dataclass(frozen=True)
class RelatednessScores:
    """Dev Pearson of the selected model and its test Pearson, Spearman and MSE."""

    dev_pearson: float
    pearson: float
    spearman: float
    mse: float
    predictions: np.ndarray


def fit_relatedness(train_x: np.ndarray, train_scores: np.ndarray, dev_x: np.ndarray,
                    dev_scores: np.ndarray, test_x: np.ndarray, test_scores: np.ndarray, *,
                    seed: int, device: str = "cpu") -> RelatednessScores:
    """Train SentEval's relatedness model and return its dev and test scores."""
    numpy_rng = np.random.RandomState(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = nn.Sequential(nn.Linear(train_x.shape[1], N_CLASSES), nn.Softmax(dim=1))
    target = torch.device(device)
    model = model.to(target)
    optimizer = torch.optim.Adam(model.parameters(), weight_decay=0.0)
    loss_fn = nn.MSELoss()
    x = torch.as_tensor(train_x, dtype=torch.float32, device=target)
    y = torch.as_tensor(tai_targets(train_scores), device=target)
    dev = torch.as_tensor(dev_x, dtype=torch.float32, device=target)
    levels = torch.arange(1, N_CLASSES + 1, dtype=torch.float32, device=target)

    def predict(features: torch.Tensor) -> np.ndarray:
        model.eval()
        with torch.no_grad():
            return (model(features) @ levels).cpu().numpy().astype(np.float64)

    epochs, best, failures = 0, -1.0, 0
    best_state = {k: v.clone() for k, v in model.state_dict().items()}
    while epochs <= MAX_EPOCH:
        model.train()
        for _ in range(EPOCHS_PER_CHECK):
            permutation = torch.from_numpy(numpy_rng.permutation(len(x))).to(target)
            shuffled_x, shuffled_y = x[permutation], y[permutation]
            for start in range(0, len(x), BATCH_SIZE):
                loss = loss_fn(model(shuffled_x[start:start + BATCH_SIZE]),
                               shuffled_y[start:start + BATCH_SIZE])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        epochs += EPOCHS_PER_CHECK
        # SentEval compares the raw r, so an undefined (NaN) r never counts as progress.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = float(pearsonr(predict(dev), dev_scores)[0])
        if r > best:
            best = r
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
        else:
            if failures >= PATIENCE:
                break
            failures += 1
    model.load_state_dict(best_state)
    predicted = predict(torch.as_tensor(test_x, dtype=torch.float32, device=target))
    return RelatednessScores(dev_pearson=finite(best) if best > -1.0 else 0.0,
                             pearson=pearson(predicted, test_scores),
                             spearman=spearman(predicted, test_scores),
                             mse=float(np.mean((predicted - test_scores) ** 2)),
                             predictions=predicted)
