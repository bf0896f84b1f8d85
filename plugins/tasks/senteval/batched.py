"""Many of SentEval's logistic regressions trained at once, each exactly as it would be alone.

SentEval's validation schemes (`evaluation`) fit one small linear classifier per fold, inner
fold, L2 penalty and seed: MR's nested cross-validation alone is 105 fits per seed. Trained one
at a time, in mini-batches of 64-128 rows of a 2-6-way linear layer, the time goes to per-step
overhead, not arithmetic. Here every fit of a round is one slice of stacked weights
(fits x classes x dim), and a step of all of them is one batched matrix product (`torch.baddbmm`)
forward and one backward.

Each fit keeps the semantics of `SentEvalClassifier.fit`:

- its weights initialised right after `torch.manual_seed(seed)`;
- its own numpy `RandomState(seed)`: the dev split of a refit (`hold_out`) drawn first, then one
  permutation of its training rows per pass;
- a dev evaluation every `epoch_size` passes, its own best accuracy, its own tenacity counter and
  `max_epoch`; the weights of its best dev evaluation kept;
- its optimiser (SentEval's Adam or RMSprop, L2 as weight decay) stepping only on its own
  mini-batches: a fit whose pass has ended, or that has stopped, is masked out of the step and
  its optimiser state left as it was; the others go on.

Fits of one `FitGroup` share their training rows, dev rows and seed and differ only in the L2
penalty, so SentEval draws the same initial weights and the same permutations for all of them:
the group draws them once and its fits read the same rows at every step (one gather for all).

The arithmetic per fit is the same as alone (the loss is each fit's mean over its own batch,
the optimiser's update is torch's own formula, element by element), so a round of one fit
reproduces `SentEvalClassifier` bit for bit; with more fits, a matrix product may sum in another
order and a weight differ in its last bits (`docs/downstream.md` says how often that moves a
score). Only logistic regression (`nhid: 0`) with Adam, RMSprop or SGD without momentum is
stacked (`stackable`); any other configuration is trained one fit at a time (`one_at_a_time`),
which gives the same numbers, slower.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch
from torch.nn import functional

from .classifier import SentEvalClassifier, accuracy, make_optimizer
from .configs import ClassifierConfig

GATHER_BUDGET = 1 << 25
"""Floats of feature rows gathered at once, for a step or a dev evaluation of many groups (128
MB in float32: 64 groups' batches of 128 rows of 4,096-d vectors)."""


@dataclass(frozen=True)
class FitGroup:
    """The fits that share training rows, dev rows and seed: one per L2 penalty of `l2regs`.

    `train` and `dev` index the rows of the task's features. With `dev` None, the fits hold out
    the first `hold_out` fraction of a permutation of `train` drawn from the seed's RNG, as
    SentEval's final fits do (`validation_split`).
    """

    train: np.ndarray
    seed: int
    l2regs: tuple[float, ...]
    dev: np.ndarray | None = None
    hold_out: float | None = None


class Fitted(Protocol):
    """A trained `FitGroup`: its fits' best dev accuracies (fractions), the passes over the
    training rows each made before it stopped, and their models."""

    @property
    def dev_accuracy(self) -> tuple[float, ...]:
        """Each fit's best dev accuracy (a fraction), in the order of `l2regs`."""

    @property
    def passes(self) -> tuple[int, ...]:
        """Passes over the training rows each fit made."""

    def score(self, x: np.ndarray, y: np.ndarray, fit: int) -> float:
        """Accuracy (a fraction) of fit `fit` (index into `l2regs`) on `x`, `y`."""

    def predict(self, x: np.ndarray, fit: int) -> np.ndarray:
        """Class ids fit `fit` predicts for `x`."""


Trainer = Callable[[np.ndarray, np.ndarray, Sequence[FitGroup], int, ClassifierConfig, str],
                   list[Fitted]]
"""(features, labels, groups, number of classes, classifier settings, device) -> one `Fitted`
per group, in order."""


# ---------------------------------------------------------------------------------------------
# One at a time: SentEvalClassifier per fit (the reference, and any configuration not stacked).

@dataclass
class SingleFits:
    """A group's fits as `SentEvalClassifier`s, trained one after the other."""

    models: list[SentEvalClassifier]
    dev_accuracy: tuple[float, ...]

    @property
    def passes(self) -> tuple[int, ...]:
        """Passes over the training rows each fit made."""
        return tuple(model.passes for model in self.models)

    def score(self, x: np.ndarray, y: np.ndarray, fit: int) -> float:
        """Accuracy (a fraction) of fit `fit` on `x`, `y`."""
        return self.models[fit].score(x, y)

    def predict(self, x: np.ndarray, fit: int) -> np.ndarray:
        """Class ids fit `fit` predicts for `x`."""
        return self.models[fit].predict(x)


def one_at_a_time(x: np.ndarray, y: np.ndarray, groups: Sequence[FitGroup], n_classes: int,
                  config: ClassifierConfig, device: str) -> list[Fitted]:
    """Train every fit of `groups` alone, as SentEval does (the `Trainer` it is measured by)."""
    fitted: list[Fitted] = []
    for group in groups:
        models, accuracies = [], []
        for l2reg in group.l2regs:
            model = SentEvalClassifier(x.shape[1], n_classes, l2reg=l2reg, config=config,
                                       seed=group.seed, device=device)
            train_x, train_y = x[group.train], y[group.train]
            if group.dev is None:
                accuracies.append(model.fit(train_x, train_y, validation_split=group.hold_out))
            else:
                accuracies.append(model.fit(train_x, train_y,
                                            validation_data=(x[group.dev], y[group.dev])))
            models.append(model)
        fitted.append(SingleFits(models, tuple(accuracies)))
    return fitted


# ---------------------------------------------------------------------------------------------
# Stacked: every fit of a round in one set of weights.

@dataclass
class StackedFit:
    """A group's best weights (fits x classes x dim) and biases (fits x classes)."""

    weight: torch.Tensor
    bias: torch.Tensor
    dev_accuracy: tuple[float, ...]
    passes: tuple[int, ...]

    def _logits(self, x: np.ndarray, fit: int) -> torch.Tensor:
        features = torch.as_tensor(x, dtype=torch.float32, device=self.weight.device)
        # F.linear, as nn.Linear computes it: the same numbers as SentEvalClassifier's model.
        return functional.linear(features, self.weight[fit], self.bias[fit])

    def score(self, x: np.ndarray, y: np.ndarray, fit: int) -> float:
        """Accuracy (a fraction) of fit `fit` on `x`, `y`."""
        labels = torch.as_tensor(y, dtype=torch.long, device=self.weight.device)
        return accuracy(self._logits(x, fit), labels)

    def predict(self, x: np.ndarray, fit: int) -> np.ndarray:
        """Class ids fit `fit` predicts for `x`."""
        return self._logits(x, fit).argmax(dim=1).cpu().numpy()


def stackable(config: ClassifierConfig) -> bool:
    """Whether `stacked` trains this configuration: logistic regression with an optimiser whose
    update it implements (`_Update`)."""
    return config.nhid == 0 and _update_rule(config) is not None


def trainer_for(config: ClassifierConfig) -> Trainer:
    """`stacked` where it applies (`stackable`), else `one_at_a_time`: the same numbers."""
    return stacked if stackable(config) else one_at_a_time


class _Update:
    """Torch's optimiser update applied to stacked parameters, each fit with its own L2 penalty
    and step count, only where `active`: the same element-wise operations as torch.optim's
    single-tensor implementations (the CPU's) on one fit's parameters, so that a fit alone gets
    the same numbers. `param.add(grad, alpha=l2)` is `addcmul(param, grad, l2)` bit for bit (both
    fused); `param.addcdiv_(a, d, value=v)` computes `(v * a) / d`."""

    def __init__(self, method: str, settings: dict[str, Any], shape: tuple[int, ...],
                 device: torch.device) -> None:
        self.method = method
        self.settings = settings
        # Adam keeps both moments, RMSprop the second (its square average), SGD none.
        empty = torch.zeros((shape[0], 0), device=device)
        self.first = torch.zeros(shape, device=device) if method == "adam" else empty
        self.second = torch.zeros(shape, device=device) if method != "sgd" else empty

    def select(self, keep: torch.Tensor) -> None:
        """Keep the state of the groups `keep` indexes."""
        self.first, self.second = self.first[keep], self.second[keep]

    def apply(self, param: torch.Tensor, grad: torch.Tensor, l2: torch.Tensor,
              steps: np.ndarray, active: torch.Tensor) -> torch.Tensor:
        """Return `param` after one step of every active fit; `active` (groups, fits) and `l2`
        (each fit's weight decay) broadcast against `param`, `steps` (groups, fits) counts each
        fit's steps including this one."""
        s = self.settings
        grad = torch.addcmul(grad, param, l2)
        if self.method == "rmsprop":
            second = self.second.mul(s["alpha"]).addcmul_(grad, grad, value=1 - s["alpha"])
            updated = param.addcdiv(grad, second.sqrt().add_(s["eps"]), value=-s["lr"])
            self.second = torch.where(active, second, self.second)
        elif self.method == "adam":
            beta1, beta2 = s["betas"]
            first = self.first.lerp(grad, 1 - beta1)
            second = self.second.mul(beta2).addcmul_(grad, grad, value=1 - beta2)
            # A fit that has not stepped yet (no rows) is not updated: any correction will do.
            step_size, correction = _adam_corrections(np.maximum(steps, 1), s["lr"], beta1,
                                                      beta2)
            shape = active.shape
            denom = (second.sqrt() / torch.as_tensor(correction, device=param.device).view(shape)
                     ).add_(s["eps"])
            step = torch.as_tensor(step_size, device=param.device).view(shape)
            updated = param.addcdiv(first * step, denom)
            self.first = torch.where(active, first, self.first)
            self.second = torch.where(active, second, self.second)
        else:  # sgd
            updated = param.add(grad, alpha=-s["lr"])
        return torch.where(active, updated, param)


def _adam_corrections(steps: np.ndarray, lr: float, beta1: float,
                      beta2: float) -> tuple[np.ndarray, np.ndarray]:
    """Each fit's -step size and square root of the second bias correction, computed as torch's
    Adam computes them (Python floats), in float32 as its kernels use them."""
    size, correction = {}, {}
    for step in np.unique(steps):
        k = float(step)
        size[step] = -(lr / (1 - beta1 ** k))
        correction[step] = (1 - beta2 ** k) ** 0.5
    return (np.vectorize(size.__getitem__, otypes=[np.float32])(steps),
            np.vectorize(correction.__getitem__, otypes=[np.float32])(steps))


def _update_rule(config: ClassifierConfig) -> tuple[str, dict[str, Any]] | None:
    """The optimiser's method and settings as torch builds them from SentEval's spec (defaults
    included), or None for one whose update `_Update` does not implement."""
    probe = torch.zeros(1, requires_grad=True)
    optimizer = make_optimizer(config.optim, [probe], 0.0)
    settings = dict(optimizer.param_groups[0])
    method = config.optim.split(",")[0]
    plain = not settings.get("maximize") and not settings.get("differentiable")
    if method == "adam" and plain and not settings["amsgrad"] and \
            not settings.get("decoupled_weight_decay"):
        return method, settings
    if method == "rmsprop" and plain and not settings["centered"] and settings["momentum"] == 0:
        return method, settings
    if method == "sgd" and plain and settings["momentum"] == 0 and not settings["nesterov"]:
        return method, settings
    return None


class _Round:
    """The state of every still-running group of a round, stacked on the first dimension.

    `weight` is (groups, fits, classes, dim) and `bias` (groups, fits, classes): one fit's are
    laid out as nn.Linear's, so that an element-wise kernel splits them into vector lanes and
    tail as it splits SentEvalClassifier's (SentEval's optimiser decays both).
    """

    def __init__(self, x: torch.Tensor, groups: Sequence[FitGroup], n_classes: int,
                 config: ClassifierConfig, rule: tuple[str, dict[str, float]]) -> None:
        if len({len(group.l2regs) for group in groups}) != 1:
            raise ValueError("every group of a round has the same number of L2 penalties")
        self.config = config
        self.index = np.arange(len(groups))  # position of each live group in `groups`
        self.rngs = [np.random.RandomState(group.seed) for group in groups]
        self.train, self.dev = [], []
        for group, rng in zip(groups, self.rngs):
            if group.dev is None:
                if group.hold_out is None:
                    raise ValueError("a FitGroup without dev rows needs hold_out")
                permutation = rng.permutation(len(group.train))
                n_dev = max(1, int(group.hold_out * len(group.train)))
                self.train.append(group.train[permutation[n_dev:]])
                self.dev.append(group.train[permutation[:n_dev]])
            else:
                self.train.append(group.train)
                self.dev.append(group.dev)
        if any(len(dev) == 0 for dev in self.dev):
            raise ValueError("every group needs dev rows to early-stop on")
        l2 = np.array([group.l2regs for group in groups], dtype=np.float64)
        fits = l2.shape[1]
        # As torch rounds a Python weight decay for float32 parameters.
        self.l2 = torch.as_tensor(l2, dtype=torch.float32, device=x.device)[:, :, None]
        weight, bias = _initial(groups, x.shape[1], n_classes, x.device)
        self.weight = weight[:, None].repeat(1, fits, 1, 1)
        self.bias = bias[:, None].repeat(1, fits, 1)
        self.best_weight, self.best_bias = self.weight.clone(), self.bias.clone()
        method, settings = rule
        self.updates = (_Update(method, settings, tuple(self.weight.shape), x.device),
                        _Update(method, settings, tuple(self.bias.shape), x.device))
        shape = (len(groups), fits)
        self.steps = np.zeros(shape, dtype=np.int64)
        self.passes = np.zeros(shape, dtype=np.int64)
        self.alive = np.ones(shape, dtype=bool)
        self.best = np.full(shape, -1.0)
        self.failures = np.zeros(shape, dtype=np.int64)

    def select(self, keep: np.ndarray) -> None:
        """Keep only the groups at positions `keep`."""
        rows = torch.as_tensor(keep, device=self.weight.device)
        for name in ("weight", "bias", "best_weight", "best_bias", "l2"):
            setattr(self, name, getattr(self, name)[rows])
        for update in self.updates:
            update.select(rows)
        for name in ("index", "steps", "passes", "alive", "best", "failures"):
            setattr(self, name, getattr(self, name)[keep])
        self.rngs = [self.rngs[i] for i in keep]
        self.train = [self.train[i] for i in keep]
        self.dev = [self.dev[i] for i in keep]


def _initial(groups: Sequence[FitGroup], dim: int, n_classes: int,
             device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Each group's initial weights (groups, classes, dim) and bias (groups, classes):
    nn.Linear's, built right after seeding torch with the group's seed (as SentEvalClassifier
    builds its model)."""
    by_seed: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
    for seed in {group.seed for group in groups}:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            layer = torch.nn.Linear(dim, n_classes)
        by_seed[seed] = (layer.weight.detach(), layer.bias.detach())
    return (torch.stack([by_seed[group.seed][0] for group in groups]).to(device),
            torch.stack([by_seed[group.seed][1] for group in groups]).to(device))


def _padded(rows: Sequence[np.ndarray], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Row indices as one (groups, longest) tensor padded with row 0, and the mask of real rows."""
    longest = max(len(r) for r in rows)
    index = np.zeros((len(rows), longest), dtype=np.int64)
    mask = np.zeros((len(rows), longest), dtype=bool)
    for i, r in enumerate(rows):
        index[i, :len(r)] = r
        mask[i, :len(r)] = True
    return torch.as_tensor(index, device=device), torch.as_tensor(mask, device=device)


def _logits(weight: torch.Tensor, bias: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
    """(groups, rows, fits * classes) logits of (groups, fits, classes, dim) weights and
    (groups, fits, classes) biases: nn.Linear's `addmm(bias, x, weight.t())`, batched.

    One group is computed by `addmm` itself: for products under 400 multiply-adds torch's
    batched product takes a kernel of its own, which sums in another order than `mm`.
    """
    groups, fits, classes, dim = weight.shape
    bias, weight = (bias.reshape(groups, 1, fits * classes),
                    weight.reshape(groups, fits * classes, dim).transpose(1, 2))
    if groups == 1:
        return torch.addmm(bias[0, 0], features[0], weight[0])[None]
    return torch.baddbmm(bias, features, weight)


def _weight_gradient(grad_logits: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
    """(groups, fits * classes, dim): `grad.t().mm(x)`, as autograd computes nn.Linear's weight
    gradient (`mm` itself for one group, as in `_logits`)."""
    if grad_logits.shape[0] == 1:
        return grad_logits[0].t().mm(features[0])[None]
    return grad_logits.transpose(1, 2).bmm(features)


def _chunks(groups: int, floats_per_group: int) -> list[slice]:
    """Consecutive slices of `groups` whose gathered rows stay within `GATHER_BUDGET` floats."""
    size = max(1, GATHER_BUDGET // max(1, floats_per_group))
    return [slice(lo, min(lo + size, groups)) for lo in range(0, groups, size)]


def _gradients(weight: torch.Tensor, bias: torch.Tensor, features: torch.Tensor,
               labels: torch.Tensor, share: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The gradients of every fit's loss on its batch: autograd's for nn.CrossEntropyLoss()
    through nn.Linear, computed directly (the log-softmax's backward kernel given the loss's
    gradient, then the weight's `g^T @ x` and the bias's sum over rows). `share` (groups, rows)
    is the loss's gradient at each row's label: -1/n for the n rows of the fit's batch (its
    mean), 0 on padding."""
    groups, fits, classes, dim = weight.shape
    width = features.shape[1]
    log_p = torch.log_softmax(_logits(weight, bias, features).view(groups, width, fits, classes),
                              -1)
    upstream = torch.zeros_like(log_p).scatter_(
        3, labels[:, :, None, None].expand(-1, -1, fits, 1),
        share[:, :, None, None].expand(-1, -1, fits, 1).contiguous())
    grad_logits = torch._log_softmax_backward_data(upstream, log_p, 3, torch.float32).view(
        groups, width, fits * classes)
    return (_weight_gradient(grad_logits, features).view(groups, fits, classes, dim),
            grad_logits.sum(dim=1).view(groups, fits, classes))


def _train_pass(state: _Round, x: torch.Tensor, y: torch.Tensor) -> None:
    """One pass of every live group over its training rows, in SentEval's mini-batches (the
    rows of at most `GATHER_BUDGET` floats gathered at once)."""
    groups, fits, classes, dim = state.weight.shape
    size = state.config.batch_size
    order = [train[rng.permutation(len(train))] for train, rng in zip(state.train, state.rngs)]
    index, mask = _padded(order, x.device)
    lengths = np.array([len(o) for o in order])
    live = torch.as_tensor(state.alive, device=x.device)
    grad_weight, grad_bias = torch.empty_like(state.weight), torch.empty_like(state.bias)
    for start in range(0, index.shape[1], size):
        counts = np.clip(lengths - start, 0, size)
        width = int(counts.max())
        # nll_loss's gradient with mean reduction: -(1 / n) at the label, 0 on padded rows.
        share = -(1.0 / torch.as_tensor(np.maximum(counts, 1), dtype=torch.float32,
                                        device=x.device))
        share = share[:, None] * mask[:, start:start + width]
        for part in _chunks(groups, width * dim):
            rows = index[part, start:start + width].reshape(-1)
            n = part.stop - part.start
            grad_weight[part], grad_bias[part] = _gradients(
                state.weight[part], state.bias[part], x.index_select(0, rows).view(n, width, dim),
                y.index_select(0, rows).view(n, width), share[part])
        stepping = live & torch.as_tensor(counts > 0, device=x.device)[:, None]
        state.steps += stepping.cpu().numpy()
        state.weight = state.updates[0].apply(state.weight, grad_weight, state.l2[..., None],
                                              state.steps, stepping[:, :, None, None])
        state.bias = state.updates[1].apply(state.bias, grad_bias, state.l2, state.steps,
                                            stepping[:, :, None])
    state.passes += state.alive


@torch.no_grad()
def _dev_correct(state: _Round, x: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """(groups, fits) number of dev rows each fit classifies correctly."""
    groups, fits, classes, dim = state.weight.shape
    weight, bias = state.weight, state.bias
    correct = np.zeros((groups, fits), dtype=np.int64)
    for part in _chunks(groups, max(len(d) for d in state.dev) * dim):
        index, mask = _padded(state.dev[part], x.device)
        logits = _logits(weight[part], bias[part], x[index])
        predicted = logits.view(*index.shape, fits, classes).argmax(dim=3)
        hits = (predicted == y[index][:, :, None]) & mask[:, :, None]
        correct[part] = hits.sum(dim=1).cpu().numpy()
    return correct


def stacked(x: np.ndarray, y: np.ndarray, groups: Sequence[FitGroup], n_classes: int,
            config: ClassifierConfig, device: str) -> list[Fitted]:
    """Train every fit of `groups` at once (see the module's docstring); `stackable(config)`
    must hold."""
    rule = _update_rule(config)
    if config.nhid != 0 or rule is None:
        raise ValueError(f"stacked training is for logistic regression with adam, rmsprop or "
                         f"sgd; use one_at_a_time for {config}")
    if not groups:
        return []
    if len(y) and not 0 <= int(y.min()) <= int(y.max()) < n_classes:
        raise ValueError(f"labels run from {int(y.min())} to {int(y.max())}; expected 0 to "
                         f"{n_classes - 1}")
    features = torch.as_tensor(x, dtype=torch.float32, device=device)
    labels = torch.as_tensor(y, dtype=torch.long, device=device)
    done: dict[int, StackedFit] = {}
    with torch.no_grad():
        state = _Round(features, groups, n_classes, config, rule)
        epochs = 0
        while len(state.index):
            if epochs > config.max_epoch:
                state.alive[:] = False
            else:
                for _ in range(config.epoch_size):
                    _train_pass(state, features, labels)
                epochs += config.epoch_size
                _evaluate_dev(state, features, labels)
            finished = ~state.alive.any(axis=1)
            for position in np.flatnonzero(finished):
                # Copies: a view would keep the round's whole stacked tensor alive.
                done[int(state.index[position])] = StackedFit(
                    state.best_weight[position].clone(), state.best_bias[position].clone(),
                    tuple(float(a) for a in state.best[position]),
                    tuple(int(p) for p in state.passes[position]))
            if finished.any():
                state.select(np.flatnonzero(~finished))
    return [done[i] for i in range(len(groups))]


def _evaluate_dev(state: _Round, x: torch.Tensor, y: torch.Tensor) -> None:
    """SentEval's early stopping after `epoch_size` passes, for every live fit: keep the
    parameters of a better dev accuracy, else count a failure and stop once `tenacity` failures
    had been counted before."""
    accuracy = _dev_correct(state, x, y) / np.array([len(d) for d in state.dev])[:, None]
    improved = state.alive & (accuracy > state.best)
    state.best = np.where(improved, accuracy, state.best)
    keep = torch.as_tensor(improved, device=x.device)[:, :, None]
    state.best_weight = torch.where(keep[..., None], state.weight, state.best_weight)
    state.best_bias = torch.where(keep, state.bias, state.best_bias)
    failed = state.alive & ~improved
    stop = failed & (state.failures >= state.config.tenacity)
    state.failures += failed & ~stop
    state.alive &= ~stop
