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
    """Train SentEval's relatedness model and return its dev and test scores.

    The model is torch's `nn.Linear` initialisation (drawn with `seed`) followed by a softmax,
    trained on the mean squared error with Adam at torch's defaults. Its gradient and Adam's
    update are written out (`_SoftmaxRegression`): the model has two tensors, and thousands of
    steps through autograd and `torch.optim` cost ten times as much as the arithmetic.
    """
    numpy_rng = np.random.RandomState(seed)
    target = torch.device(device)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        layer = nn.Linear(train_x.shape[1], N_CLASSES)
    model = _SoftmaxRegression(layer.weight.detach().to(target), layer.bias.detach().to(target))
    x = torch.as_tensor(train_x, dtype=torch.float32, device=target)
    y = torch.as_tensor(tai_targets(train_scores), device=target)
    dev = torch.as_tensor(dev_x, dtype=torch.float32, device=target)
    levels = torch.arange(1, N_CLASSES + 1, dtype=torch.float32, device=target)

    def predict(features: torch.Tensor) -> np.ndarray:
        return (model.probabilities(features) @ levels).cpu().numpy().astype(np.float64)

    epochs, best, failures = 0, -1.0, 0
    best_state = model.state()
    while epochs <= MAX_EPOCH:
        for _ in range(EPOCHS_PER_CHECK):
            permutation = torch.from_numpy(numpy_rng.permutation(len(x))).to(target)
            shuffled_x, shuffled_y = x[permutation], y[permutation]
            for start in range(0, len(x), BATCH_SIZE):
                model.step(shuffled_x[start:start + BATCH_SIZE],
                           shuffled_y[start:start + BATCH_SIZE])
        epochs += EPOCHS_PER_CHECK
        # SentEval compares the raw r, so an undefined (NaN) r never counts as progress.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = float(pearsonr(predict(dev), dev_scores)[0])
        if r > best:
            best = r
            best_state = model.state()
        else:
            if failures >= PATIENCE:
                break
            failures += 1
    model.load(best_state)
    predicted = predict(torch.as_tensor(test_x, dtype=torch.float32, device=target))
    return RelatednessScores(dev_pearson=finite(best) if best > -1.0 else 0.0,
                             pearson=pearson(predicted, test_scores),
                             spearman=spearman(predicted, test_scores),
                             mse=float(np.mean((predicted - test_scores) ** 2)),
                             predictions=predicted)


class _SoftmaxRegression:
    """p-hat = softmax(W x + b) trained on mean((p-hat - p)^2) by Adam (Kingma & Ba 2015,
    Algorithm 1) at torch's defaults: lr 1e-3, betas (0.9, 0.999), eps 1e-8, with eps added
    after the bias-corrected square root as `torch.optim.Adam` does.

    The gradient of the mean over the B x K outputs, with d = 2 (p-hat - p) / (B K):
    dL/dz = p-hat * (d - sum_k p-hat_k d_k) (the softmax Jacobian), dL/dW = (dL/dz)^T x,
    dL/db = sum over the batch of dL/dz.
    """

    LR, BETA1, BETA2, EPS = 1e-3, 0.9, 0.999, 1e-8

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor) -> None:
        self.params = [weight.clone(), bias.clone()]
        self.moments = [torch.zeros_like(p) for p in self.params]
        self.squares = [torch.zeros_like(p) for p in self.params]
        self.steps = 0

    def probabilities(self, x: torch.Tensor) -> torch.Tensor:
        """The predicted class distributions (B, K) of features x (B, F)."""
        weight, bias = self.params
        return torch.softmax(torch.addmm(bias, x, weight.t()), dim=1)

    def step(self, x: torch.Tensor, target: torch.Tensor) -> None:
        """One Adam step on the batch's mean squared error."""
        p = self.probabilities(x)
        d = (p - target).mul_(2.0 / p.numel())
        dz = p * (d - (p * d).sum(dim=1, keepdim=True))
        self.steps += 1
        correction1 = 1 - self.BETA1 ** self.steps
        correction2 = math.sqrt(1 - self.BETA2 ** self.steps)
        for param, moment, square, grad in zip(self.params, self.moments, self.squares,
                                               (dz.t() @ x, dz.sum(dim=0)), strict=True):
            moment.lerp_(grad, 1 - self.BETA1)
            square.mul_(self.BETA2).addcmul_(grad, grad, value=1 - self.BETA2)
            denominator = (square.sqrt() / correction2).add_(self.EPS)
            param.addcdiv_(moment, denominator, value=-self.LR / correction1)

    def state(self) -> list[torch.Tensor]:
        """A copy of the weights."""
        return [p.clone() for p in self.params]

    def load(self, state: list[torch.Tensor]) -> None:
        """Set the weights to a copy taken by `state` (the optimiser's moments are kept)."""
        for param, saved in zip(self.params, state, strict=True):
            param.copy_(saved)
