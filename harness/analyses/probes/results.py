"""Typed probe results: what `RUN_DIR/results.json` holds under `probes`, one entry per encoder x
decoder pair (docs/results.md).

Rates (analogy accuracy, outputs that are new sentences, interpolation ends reproduced, Id under
noise) are on the paper's 0-100 scale with their exact Clopper & Pearson (1934) interval over
`support` trials, as the run's own Id is. This module imports nothing else of the harness, so
`harness.results.model` can hold these models without an import cycle.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Form = Literal["paper", "classic"]
"""How an analogy row is solved. paper (Kerscher & Eger 2020, section 4): a : b :: z : c, the
answer z decoded from u = vec(a) - vec(b) + vec(c). classic (word analogies, king - man +
woman): a : b :: c : d, the answer d decoded from vec(b) - vec(a) + vec(c)."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class ProbeRate(_Record):
    """`successes` of `support` trials as a percentage (`value`, None without trials) and its
    exact 95% interval (`ci95`, [0, 100] without trials)."""

    value: float | None
    ci95: tuple[float | None, float | None] = (None, None)
    successes: int = 0
    support: int = 0
    interval: str = "clopper-pearson"


class AnalogyGroup(_Record):
    """Scores over a group of analogy items (a whole set, or one relation type).

    `accuracy`: outputs equal to the expected answer, over the `expected` items that give one;
    `bleu`: mean sentence BLEU of those outputs against it (0-100, sacrebleu); `novel`: outputs
    that differ from each of a, b and c, over all `items`."""

    items: int
    expected: int = 0
    accuracy: ProbeRate | None = None
    bleu: float | None = None
    novel: ProbeRate


class AnalogyOutput(_Record):
    """One analogy item as solved by one pair: the query, the decoded output and its scores
    (`exact` and `bleu` only where the item gives an expected answer)."""

    a: str
    b: str
    c: str
    expected: str | None = None
    relation: str | None = None
    output: str
    exact: bool | None = None
    bleu: float | None = None
    novel: bool


class AnalogySetResult(_Record):
    """One analogy set solved by one pair: where the set came from, how its rows were solved,
    the scores over all items and per relation type, and the first item of each relation type
    as an example (every item's output is in `RUN_DIR/probes/`)."""

    name: str
    source: str
    form: Form = "paper"
    overall: AnalogyGroup
    relations: dict[str, AnalogyGroup] = {}
    examples: list[AnalogyOutput] = []


class InterpolationPath(_Record):
    """The sentences decoded along z(alpha) = alpha x + (1 - alpha) y (paper section 1), alpha
    from 1 (x) to 0 (y): how many distinct sentences, whether each end reproduces its input, and
    the first alpha after 1 whose output differs from the output at alpha 1 (None: none does)."""

    x: str
    y: str
    alphas: list[float]
    outputs: list[str]
    distinct: int
    start_reproduced: bool
    end_reproduced: bool
    first_change: float | None = None


class InterpolationSummary(_Record):
    """Interpolation paths of one pair and what they show together: the mean number of
    distinct sentences per path, the ends reproduced (two per path), the paths whose output
    changes at all, and the mean first alpha of change over those."""

    steps: int
    paths: list[InterpolationPath] = []
    mean_distinct: float | None = None
    ends_reproduced: ProbeRate
    changed: int = 0
    mean_first_change: float | None = None


class NoisePoint(_Record):
    """Decoding test vectors with Gaussian noise of standard deviation `scale` times each
    dimension's standard deviation: Id (exact regenerations, a rate) and corpus BLEU (0-100)."""

    scale: float
    id: ProbeRate
    bleu: float | None = None


class NoiseRobustness(_Record):
    """Id and BLEU of one pair at each noise scale (scale 0 first: no noise), over the first
    `sentences` test sentences, the noise drawn with `seed`."""

    sentences: int
    seed: int
    points: list[NoisePoint] = []


class PairProbes(_Record):
    """Every probe of one encoder x decoder pair (the decoder trained with the spec's seed)."""

    encoder: str
    decoder: str
    analogies: list[AnalogySetResult] = []
    interpolation: InterpolationSummary | None = None
    noise: NoiseRobustness | None = None


ProbeResults = list[PairProbes]
"""results.json `probes`: the probes of every encoder x decoder pair."""
