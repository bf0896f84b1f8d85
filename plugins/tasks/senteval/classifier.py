"""SentEval's PyTorch classifier: logistic regression (nhid 0) or a one-hidden-layer MLP.

Follows senteval/tools/classifier.py (PyTorchClassifier + MLP) step by step, because the numbers
depend on it: weights initialised right after seeding torch with `seed`; numpy's legacy RNG seeded
with `seed` draws the validation split and one permutation per pass over the training set;
`epoch_size` passes between dev evaluations; the model with the best dev accuracy is kept and
training stops once dev accuracy has failed to improve more than `tenacity` times (the counter is
never reset), or after `max_epoch` passes. L2 regularisation is the optimiser's weight decay.

One difference: SentEval sets `size_average = False` on the loss after building it, which modern
PyTorch ignores, so SentEval today averages the loss over the batch; so does this class.
The RNGs are private to each instance (the global numpy and torch RNGs are left untouched).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from harness.plugin import HarnessError

from .configs import ClassifierConfig

OPTIMIZERS = {
    "adadelta": torch.optim.Adadelta, "adagrad": torch.optim.Adagrad, "adam": torch.optim.Adam,
    "adamax": torch.optim.Adamax, "asgd": torch.optim.ASGD, "rmsprop": torch.optim.RMSprop,
    "rprop": torch.optim.Rprop, "sgd": torch.optim.SGD,
}


def make_optimizer(spec: str, parameters: list[torch.Tensor],
                   weight_decay: float) -> torch.optim.Optimizer:
    """Return the optimiser SentEval's `get_optimizer` builds from e.g. "adam" or "sgd,lr=0.1"."""
    method, *settings = spec.split(",")
    if method not in OPTIMIZERS:
        raise HarnessError(f"unknown optimiser {method!r} in {spec!r}; known: "
                           f"{', '.join(OPTIMIZERS)}")
    kwargs: dict[str, float] = {}
    for setting in settings:
        key, equals, value = setting.partition("=")
        try:
            kwargs[key.strip()] = float(value)
        except ValueError:
            equals = ""
        if not equals:
            raise HarnessError(f"optimiser setting {setting!r} in {spec!r}: expected name=number")
    if method == "sgd" and "lr" not in kwargs:
        raise HarnessError(f"optimiser {spec!r}: sgd needs a learning rate, e.g. 'sgd,lr=0.1'")
    return OPTIMIZERS[method](parameters, weight_decay=weight_decay, **kwargs)


def accuracy(logits: torch.Tensor, y: torch.Tensor) -> float:
    """The share of rows whose highest logit is their label: an exact fraction, as SentEval's
    correct / len (its rounded percentages select the L2 penalty)."""
    return int((logits.argmax(dim=1) == y).sum()) / len(y)


class SentEvalClassifier:
    """A classifier trained with early stopping on dev accuracy (SentEval's MLP)."""

    def __init__(self, input_dim: int, n_classes: int, *, l2reg: float, config: ClassifierConfig,
                 seed: int, device: str = "cpu") -> None:
        self.config = config
        self.device = torch.device(device)
        self._numpy_rng = np.random.RandomState(seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            if config.nhid == 0:
                model = nn.Sequential(nn.Linear(input_dim, n_classes))
            else:
                model = nn.Sequential(nn.Linear(input_dim, config.nhid),
                                      nn.Dropout(p=config.dropout), nn.Sigmoid(),
                                      nn.Linear(config.nhid, n_classes))
            # Dropout draws from the same stream after initialisation, as in SentEval.
            self._torch_rng_state = torch.get_rng_state()
        self.model = model.to(self.device)
        self.loss = nn.CrossEntropyLoss()
        self.passes = 0  # passes over the training set so far
        self.optimizer = make_optimizer(config.optim, list(self.model.parameters()), l2reg)

    def _tensor(self, x: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
        return torch.as_tensor(x, dtype=dtype, device=self.device)

    def fit(self, x: np.ndarray, y: np.ndarray, *,
            validation_data: tuple[np.ndarray, np.ndarray] | None = None,
            validation_split: float | None = None) -> float:
        """Train with early stopping; return the best dev accuracy (a fraction).

        Dev data is `validation_data`, or the first `validation_split` fraction of a random
        permutation of `x` (at least one example: SentEval would divide by zero below 20).
        """
        if validation_data is not None:
            train_x, train_y = x, y
            dev_x, dev_y = validation_data
        else:
            if validation_split is None:
                raise ValueError("give validation_data or validation_split")
            permutation = self._numpy_rng.permutation(len(x))
            n_dev = max(1, int(validation_split * len(x)))
            train_x, train_y = x[permutation[n_dev:]], y[permutation[n_dev:]]
            dev_x, dev_y = x[permutation[:n_dev]], y[permutation[:n_dev]]
        train_x_t = self._tensor(train_x, torch.float32)
        train_y_t = self._tensor(train_y, torch.long)
        dev_x_t = self._tensor(dev_x, torch.float32)
        dev_y_t = self._tensor(dev_y, torch.long)

        epochs, best, failures = 0, -1.0, 0
        best_state = {k: v.clone() for k, v in self.model.state_dict().items()}
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(self._torch_rng_state)
            while epochs <= self.config.max_epoch:
                self._train_passes(train_x_t, train_y_t)
                epochs += self.config.epoch_size
                accuracy = self._accuracy(dev_x_t, dev_y_t)
                if accuracy > best:
                    best = accuracy
                    best_state = {k: v.clone() for k, v in self.model.state_dict().items()}
                else:
                    if failures >= self.config.tenacity:
                        break
                    failures += 1
            self._torch_rng_state = torch.get_rng_state()
        self.model.load_state_dict(best_state)
        return best

    def _train_passes(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.model.train()
        size = self.config.batch_size
        for _ in range(self.config.epoch_size):
            permutation = torch.from_numpy(self._numpy_rng.permutation(len(x))).to(self.device)
            # One gather per pass; the batches are then slices (SentEval gathers per batch).
            shuffled_x, shuffled_y = x[permutation], y[permutation]
            for start in range(0, len(x), size):
                loss = self.loss(self.model(shuffled_x[start:start + size]),
                                 shuffled_y[start:start + size])
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            self.passes += 1

    @torch.no_grad()
    def _logits(self, x: torch.Tensor) -> torch.Tensor:
        self.model.eval()
        return self.model(x)

    def _accuracy(self, x: torch.Tensor, y: torch.Tensor) -> float:
        return accuracy(self._logits(x), y)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Return the predicted class ids of `x`."""
        return self._logits(self._tensor(x, torch.float32)).argmax(dim=1).cpu().numpy()

    def score(self, x: np.ndarray, y: np.ndarray) -> float:
        """Return the accuracy (a fraction) on `x`, `y`."""
        return self._accuracy(self._tensor(x, torch.float32), self._tensor(y, torch.long))
