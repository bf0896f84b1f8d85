"""SentEval's validation schemes around its classifier (senteval/tools/validation.py).

- `inner_kfold` (MR, CR, SUBJ, MPQA): k outer stratified folds; in each, the L2 penalty is chosen
  by k inner folds of the outer training part and the classifier refitted on all of it (5% held
  out for early stopping) is tested on the outer fold; the score is the mean over outer folds.
- `kfold` (TREC, MRPC): L2 chosen by k-fold cross-validation on the training set, then one fit on
  all of it (5% held out for early stopping), tested on the test set.
- `split` (SST-2, SST-5, SICK-E): L2 chosen on the dev set, which also early-stops every fit.

Accuracies are percentages rounded to two decimals before the L2 is chosen (the first best wins),
as SentEval does. The seeds are SentEval's: every classifier is seeded with `seed` (its
`params.seed`); the folds are scikit-learn's `StratifiedKFold(n_splits=kfold, shuffle=True,
random_state=...)` with `random_state` fixed at 1111 for both levels of `inner_kfold`
(`INNER_KFOLD_SEED`, whatever `seed` is) and `seed` for `kfold`, as validation.py has them.

Each scheme runs at several seeds at once and trains in two rounds: every fit that chooses the
L2 penalty (each fold, inner fold, penalty and seed), then every fit with the chosen penalty
(`inner_kfold` and `kfold`; `split` keeps the chosen fit, which is the refit SentEval would
make). A round is one call of a `Trainer`: `batched.stacked` trains all its fits at once,
`batched.one_at_a_time` as SentEval does (the default picks, `batched.trainer_for`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .batched import FitGroup, Trainer, trainer_for
from .configs import L2_GRID, EvaluationConfig

HOLD_OUT = 0.05
"""Fraction of the training set SentEval holds out to early-stop a final fit."""

INNER_KFOLD_SEED = 1111
"""The `random_state` of both fold splits of SentEval's InnerKFoldClassifier: a constant there,
not its `seed` (which seeds the classifiers)."""


@dataclass(frozen=True)
class Validation:
    """Dev and test accuracy (percent) of one validation scheme at one seed, with the chosen L2
    penalty.

    `predictions` holds the test-set class ids for `kfold` and `split` (None for `inner_kfold`,
    whose test accuracy is a mean over folds).
    """

    seed: int
    dev_accuracy: float
    test_accuracy: float
    l2reg: tuple[float, ...]
    predictions: np.ndarray | None = None


def _percent(fractions: Sequence[float]) -> float:
    return round(100 * float(np.mean(fractions)), 2)


def stratified_folds(labels: np.ndarray, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Return the (train, test) index pairs of SentEval's fold split: scikit-learn's
    `StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)` over `labels`."""
    from sklearn.model_selection import StratifiedKFold

    splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    return list(splitter.split(np.zeros(len(labels)), labels))


def _trainer(config: EvaluationConfig, trainer: Trainer | None) -> Trainer:
    return trainer or trainer_for(config.classifier)


def _choose(folds: Sequence[Sequence[float]]) -> tuple[int, float]:
    """The L2 index with the best mean fold accuracy (percent, rounded; the first best wins),
    and that accuracy; `folds` holds each fold's best dev accuracy per penalty."""
    scores = [_percent([fold[i] for fold in folds]) for i in range(len(L2_GRID))]
    best = int(np.argmax(scores))
    return best, scores[best]


def inner_kfold(x: np.ndarray, y: np.ndarray, n_classes: int, config: EvaluationConfig, *,
                seeds: Sequence[int], device: str = "cpu",
                trainer: Trainer | None = None) -> list[Validation]:
    """Return nested k-fold accuracies at each seed (SentEval's InnerKFoldClassifier): both fold
    splits at `INNER_KFOLD_SEED`, every classifier seeded with the seed."""
    train = _trainer(config, trainer)
    outer = stratified_folds(y, config.kfold, INNER_KFOLD_SEED)
    inner = [stratified_folds(y[rows], config.kfold, INNER_KFOLD_SEED) for rows, _ in outer]
    choosing = [FitGroup(train=rows[fit], dev=rows[dev], seed=seed, l2regs=L2_GRID)
                for seed in seeds for (rows, _), folds in zip(outer, inner) for fit, dev in folds]
    fitted = iter(train(x, y, choosing, n_classes, config.classifier, device))
    chosen = [[_choose([next(fitted).dev_accuracy for _ in folds]) for folds in inner]
              for _ in seeds]
    refits = [FitGroup(train=rows, seed=seed, l2regs=(L2_GRID[best],), hold_out=HOLD_OUT)
              for seed, per_fold in zip(seeds, chosen)
              for (rows, _), (best, _) in zip(outer, per_fold)]
    tested = iter(train(x, y, refits, n_classes, config.classifier, device))
    results = []
    for seed, per_fold in zip(seeds, chosen):
        test = [round(100 * next(tested).score(x[held_out], y[held_out], 0), 2)
                for _, held_out in outer]
        results.append(Validation(
            seed=seed, dev_accuracy=round(float(np.mean([s for _, s in per_fold])), 2),
            test_accuracy=round(float(np.mean(test)), 2),
            l2reg=tuple(L2_GRID[best] for best, _ in per_fold)))
    return results


def kfold(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray,
          n_classes: int, config: EvaluationConfig, *, seeds: Sequence[int],
          device: str = "cpu", trainer: Trainer | None = None) -> list[Validation]:
    """Return k-fold-on-train, then test, accuracies at each seed (SentEval's KFoldClassifier):
    folds and classifiers both seeded with the seed."""
    train = _trainer(config, trainer)
    folds = {seed: stratified_folds(train_y, config.kfold, seed) for seed in seeds}
    choosing = [FitGroup(train=fit, dev=dev, seed=seed, l2regs=L2_GRID)
                for seed in seeds for fit, dev in folds[seed]]
    fitted = iter(train(train_x, train_y, choosing, n_classes, config.classifier, device))
    chosen = [_choose([next(fitted).dev_accuracy for _ in folds[seed]]) for seed in seeds]
    everything = np.arange(len(train_y))
    refits = [FitGroup(train=everything, seed=seed, l2regs=(L2_GRID[best],), hold_out=HOLD_OUT)
              for seed, (best, _) in zip(seeds, chosen)]
    tested = train(train_x, train_y, refits, n_classes, config.classifier, device)
    return [Validation(seed=seed, dev_accuracy=score,
                       test_accuracy=round(100 * model.score(test_x, test_y, 0), 2),
                       l2reg=(L2_GRID[best],), predictions=model.predict(test_x, 0))
            for seed, (best, score), model in zip(seeds, chosen, tested)]


def split(train_x: np.ndarray, train_y: np.ndarray, dev_x: np.ndarray, dev_y: np.ndarray,
          test_x: np.ndarray, test_y: np.ndarray, n_classes: int, config: EvaluationConfig, *,
          seeds: Sequence[int], device: str = "cpu",
          trainer: Trainer | None = None) -> list[Validation]:
    """Return dev-selected accuracies on a train/dev/test split at each seed (SentEval's
    SplitClassifier)."""
    train = _trainer(config, trainer)
    x = np.concatenate([train_x, dev_x])
    y = np.concatenate([train_y, dev_y])
    rows, dev = np.arange(len(train_y)), len(train_y) + np.arange(len(dev_y))
    groups = [FitGroup(train=rows, dev=dev, seed=seed, l2regs=L2_GRID) for seed in seeds]
    results = []
    for seed, model in zip(seeds, train(x, y, groups, n_classes, config.classifier, device)):
        # SentEval rounds the dev accuracy of each penalty's best model and refits the first
        # best from scratch; that refit is this very fit (same seed, data and order).
        scores = [round(100 * accuracy, 2) for accuracy in model.dev_accuracy]
        best = int(np.argmax(scores))
        results.append(Validation(
            seed=seed, dev_accuracy=scores[best],
            test_accuracy=round(100 * model.score(test_x, test_y, best), 2),
            l2reg=(L2_GRID[best],), predictions=model.predict(test_x, best)))
    return results
