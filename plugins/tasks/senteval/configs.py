"""SentEval's classifier configurations: "prototyping" (fast) and "literature" (comparable).

From SentEval's README ("SentEval parameters"): the prototyping config
`{'nhid': 0, 'optim': 'rmsprop', 'batch_size': 128, 'tenacity': 3, 'epoch_size': 2}` with
`kfold: 5` "results in a 5 times speedup"; the default config that produces results "comparable
to the literature" is `{'nhid': 0, 'optim': 'adam', 'batch_size': 64, 'tenacity': 5,
'epoch_size': 4}` with `kfold: 10`. `max_epoch` (200) and `dropout` (0) are SentEval's MLP
defaults. `usepytorch` is always on: the L2 grid is SentEval's PyTorch grid.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.plugin import HarnessError


@dataclass(frozen=True)
class ClassifierConfig:
    """SentEval's `params['classifier']`: nhid 0 is logistic regression."""

    nhid: int = 0
    optim: str = "adam"
    batch_size: int = 64
    tenacity: int = 5
    epoch_size: int = 4
    max_epoch: int = 200
    dropout: float = 0.0


@dataclass(frozen=True)
class EvaluationConfig:
    """A named SentEval configuration: classifier settings and `kfold`."""

    name: str
    kfold: int
    classifier: ClassifierConfig = field(default_factory=ClassifierConfig)


L2_GRID: tuple[float, ...] = (1e-5, 1e-4, 1e-3, 1e-2)
"""SentEval's weight-decay grid with PyTorch classifiers: 10**t for t in -5..-2."""

CONFIGS: dict[str, EvaluationConfig] = {
    "prototyping": EvaluationConfig(
        name="prototyping", kfold=5,
        classifier=ClassifierConfig(nhid=0, optim="rmsprop", batch_size=128, tenacity=3,
                                    epoch_size=2)),
    "literature": EvaluationConfig(
        name="literature", kfold=10,
        classifier=ClassifierConfig(nhid=0, optim="adam", batch_size=64, tenacity=5,
                                    epoch_size=4)),
}


def get_config(name: str) -> EvaluationConfig:
    """Return the configuration `name`, or raise naming the known ones."""
    try:
        return CONFIGS[name]
    except KeyError:
        raise HarnessError(f"unknown downstream config {name!r}; known: "
                           f"{', '.join(CONFIGS)}") from None
