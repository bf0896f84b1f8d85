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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .classifier import SentEvalClassifier
from .configs import L2_GRID, EvaluationConfig

HOLD_OUT = 0.05
"""Fraction of the training set SentEval holds out to early-stop a final fit."""

INNER_KFOLD_SEED = 1111
"""The `random_state` of both fold splits of SentEval's InnerKFoldClassifier: a constant there,
not its `seed` (which seeds the classifiers)."""


@dataclass(frozen=True)
class Validation:
    """Dev and test accuracy (percent) of one validation scheme, with the chosen L2 penalty.

    `predictions` holds the test-set class ids for `kfold` and `split` (None for `inner_kfold`,
    whose test accuracy is a mean over folds).
    """

    dev_accuracy: float
    test_accuracy: float
    l2reg: tuple[float, ...]
    predictions: np.ndarray | None = None


def _percent(fractions: list[float]) -> float:
    return round(100 * float(np.mean(fractions)), 2)


def stratified_folds(labels: np.ndarray, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Return the (train, test) index pairs of SentEval's fold split: scikit-learn's
    `StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)` over `labels`."""
    from sklearn.model_selection import StratifiedKFold

    splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    return list(splitter.split(np.zeros(len(labels)), labels))


def _classifier(x: np.ndarray, n_classes: int, l2reg: float, config: EvaluationConfig,
                seed: int, device: str) -> SentEvalClassifier:
    return SentEvalClassifier(x.shape[1], n_classes, l2reg=l2reg, config=config.classifier,
                              seed=seed, device=device)


def _cross_validated(x: np.ndarray, y: np.ndarray, folds: list[tuple[np.ndarray, np.ndarray]],
                     n_classes: int, config: EvaluationConfig, seed: int,
                     device: str) -> list[float]:
    """Return the mean fold accuracy (percent) of each L2 penalty of the grid."""
    scores = []
    for l2reg in L2_GRID:
        accuracies = []
        for train, test in folds:
            model = _classifier(x, n_classes, l2reg, config, seed, device)
            model.fit(x[train], y[train], validation_data=(x[test], y[test]))
            accuracies.append(model.score(x[test], y[test]))
        scores.append(_percent(accuracies))
    return scores


def inner_kfold(x: np.ndarray, y: np.ndarray, n_classes: int, config: EvaluationConfig, *,
                seed: int, device: str = "cpu") -> Validation:
    """Return nested k-fold accuracies (SentEval's InnerKFoldClassifier): both fold splits at
    `INNER_KFOLD_SEED`, every classifier seeded with `seed`."""
    dev, test, chosen = [], [], []
    for train, held_out in stratified_folds(y, config.kfold, INNER_KFOLD_SEED):
        x_train, y_train = x[train], y[train]
        scores = _cross_validated(x_train, y_train,
                                  stratified_folds(y_train, config.kfold, INNER_KFOLD_SEED),
                                  n_classes, config, seed, device)
        best = int(np.argmax(scores))
        dev.append(scores[best])
        chosen.append(L2_GRID[best])
        model = _classifier(x, n_classes, L2_GRID[best], config, seed, device)
        model.fit(x_train, y_train, validation_split=HOLD_OUT)
        test.append(round(100 * model.score(x[held_out], y[held_out]), 2))
    return Validation(dev_accuracy=round(float(np.mean(dev)), 2),
                      test_accuracy=round(float(np.mean(test)), 2), l2reg=tuple(chosen))


def kfold(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, test_y: np.ndarray,
          n_classes: int, config: EvaluationConfig, *, seed: int,
          device: str = "cpu") -> Validation:
    """Return k-fold-on-train, then test, accuracies (SentEval's KFoldClassifier): folds and
    classifiers both seeded with `seed`."""
    scores = _cross_validated(train_x, train_y, stratified_folds(train_y, config.kfold, seed),
                              n_classes, config, seed, device)
    best = int(np.argmax(scores))
    model = _classifier(train_x, n_classes, L2_GRID[best], config, seed, device)
    model.fit(train_x, train_y, validation_split=HOLD_OUT)
    return Validation(dev_accuracy=scores[best],
                      test_accuracy=round(100 * model.score(test_x, test_y), 2),
                      l2reg=(L2_GRID[best],), predictions=model.predict(test_x))


def split(train_x: np.ndarray, train_y: np.ndarray, dev_x: np.ndarray, dev_y: np.ndarray,
          test_x: np.ndarray, test_y: np.ndarray, n_classes: int, config: EvaluationConfig, *,
          seed: int, device: str = "cpu") -> Validation:
    """Return dev-selected accuracies on a train/dev/test split (SentEval's SplitClassifier)."""
    scores: list[float] = []
    best_model: SentEvalClassifier | None = None
    for l2reg in L2_GRID:
        model = _classifier(train_x, n_classes, l2reg, config, seed, device)
        model.fit(train_x, train_y, validation_data=(dev_x, dev_y))
        score = round(100 * model.score(dev_x, dev_y), 2)
        # SentEval refits the chosen penalty from scratch; that refit is this very model (same
        # seed, data and order), so keeping it saves a fit and changes nothing.
        if best_model is None or score > max(scores):
            best_model = model
        scores.append(score)
    best = int(np.argmax(scores))
    return Validation(dev_accuracy=scores[best],
                      test_accuracy=round(100 * best_model.score(test_x, test_y), 2),
                      l2reg=(L2_GRID[best],), predictions=best_model.predict(test_x))
