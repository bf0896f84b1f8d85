"""The metric contracts: what the core relies on a metric for, its optional parts, and what it may
be handed beyond the samples.

A metric turns each (reference, hypothesis) pair into a row of additive statistics and the
corpus score from their column sums (`Metric`). Optional parts are attributes with defaults,
read only through the functions below them (`required_fields`, `declared_needs`, ...), so each
has one declaration and one reader. What a metric needs beyond the samples is declared once,
when it registers (`needs=`). Import these names from `harness.protocols`.

On the ground floor: imports nothing from the rest of the harness, and nothing heavy (numpy
appears in annotations only).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np


@runtime_checkable
class Metric(Protocol):
    """Compares generated sentences with their inputs.

    A metric reduces each (reference, hypothesis) pair to a row of additive sufficient statistics
    and computes the corpus score from their column sums. That one shape serves means (Id), ratios
    of counts (Id/PERM) and corpus BLEU alike, and lets the core bootstrap any metric's interval by
    resampling rows.

    What the core hands it beyond the samples is declared when it registers (`needs=`, e.g.
    `("encoder",)`: `EncoderAwareMetric`), each by a keyword of its name. Optional attributes,
    with their defaults:
    - `requires: tuple[str, ...] = ()`: sample fields beyond the two texts (e.g. `("nll",
      "tokens")`), each passed to `sentence_statistics` as a keyword list (`required_fields`);
    - `higher_is_better: bool = True`: False where lower is better, as perplexity (ranks follow);
    - `signature()`: the exact configuration, recorded beside the score (`SignedMetric`);
    - `proportion(totals, count) -> (successes, trials)`, whole numbers, and `proportion_scale`
      (100.0 for percentages): the score is `proportion_scale * successes / trials`, NaN at 0
      trials; its interval is then exact (Clopper & Pearson 1934; `proportion_counts`);
    - `value_range: tuple[float, float]`: the values the score can take (BLEU's [0, 100]); an
      interval widened by the seeds' spread is clipped to it (`value_range`).
    """

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str]
                            ) -> np.ndarray:
        """Return an (n, k) float array of per-pair statistics."""

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        """Score(s) from summed statistics (..., k) over `count` pairs: on the paper's 0-100
        scale where that applies, NaN where the score is undefined for those statistics."""


@runtime_checkable
class SignedMetric(Protocol):
    """Optional for a metric: `signature()`, the exact configuration it scored with."""

    def signature(self) -> str:
        """A string such as sacrebleu's `nrefs:1|case:mixed|eff:no|tok:13a|...`."""


@runtime_checkable
class ProportionMetric(Protocol):
    """Optional for a metric whose score is a rate of whole numbers (Id, PERM, retrieval): its
    interval is then exact (Clopper & Pearson 1934)."""

    proportion_scale: float
    """What a rate of 1 scores: 100.0 for percentages."""

    def proportion(self, totals: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(successes, trials) of summed statistics (..., k) over `count` pairs."""


def proportion_counts(metric: object, totals: np.ndarray, count: int
                      ) -> tuple[np.ndarray, np.ndarray, float] | None:
    """(successes, trials, proportion_scale) of summed statistics, or None if not a proportion."""
    if not isinstance(metric, ProportionMetric) or metric.proportion_scale is None:
        return None
    return (*metric.proportion(totals, count), float(metric.proportion_scale))


def required_fields(metric: Metric) -> tuple[str, ...]:
    """The sample fields the metric declares in `requires` (default: none)."""
    return tuple(getattr(metric, "requires", ()))


def higher_is_better(metric: Metric) -> bool:
    """The metric's `higher_is_better` (default: True)."""
    return bool(getattr(metric, "higher_is_better", True))


def value_range(metric: Metric) -> tuple[float, float] | None:
    """The metric's `value_range` (low, high), or None when it declares none."""
    found = getattr(metric, "value_range", None)
    return (float(found[0]), float(found[1])) if found is not None else None


def metric_signature(metric: Metric) -> str | None:
    """The metric's `signature()` (`SignedMetric`), or None when it has none."""
    return str(metric.signature()) if isinstance(metric, SignedMetric) else None


# ------------------------------------------------------------------- what a metric may be handed


METRIC_NEEDS: tuple[str, ...] = ("encoder", "decoder", "unconditional")
"""What the core can hand a metric beyond the samples, by the name a metric registers with
`needs=` (which `harness list` shows): the encoder under test (`InputEncoding`), the trained
decoder's likelihood of any test sentence given any test vector (`DecoderLikelihood`), and each
test sentence's likelihood under the run's unconditional model (`UnconditionalLikelihood`)."""


@dataclass(frozen=True)
class InputEncoding:
    """How the run encoded the test inputs, as an encoder-aware metric receives it (keyword
    `encoder`).

    `name` is the encoder's component name. `vectors` (n, dim) are the input vectors the
    decoder generated from, row i for test sentence i (as stored by the encode stage, float32
    or float16, memory-mapped). `encode(sentences)` encodes any other sentences with the same
    encoder object the encode stage used, fitted state and all, batched and checked by the core
    (float32, (len(sentences), dim), finite). `key` is the cache key of the input vectors.
    """

    name: str
    vectors: np.ndarray
    encode: Callable[[Sequence[str]], np.ndarray] = field(repr=False)
    key: str = ""


@dataclass(frozen=True)
class DecoderLikelihood:
    """The trained decoder the samples were generated with, as a metric registered with
    `needs=("decoder",)` receives it (keyword `decoder`).

    `nll(vector_rows, sentence_rows)` returns, for each m, the summed negative log-likelihood
    in nats, -log P(y_j | x_i) with i = vector_rows[m] and j = sentence_rows[m], of test
    sentence j (its normalised text, end of sentence included) given the input vector of test
    sentence i, teacher-forced in eval mode (`harness.generation.perplexity.reference_nll`),
    batched by the core: a metric may ask for any number of pairs at once. `sentences` is the
    number of test sentences (rows of both); `name` the decoder, `encoder` the encoder under
    test; `key` the cache key of the trained decoder.
    """

    name: str
    encoder: str
    sentences: int
    nll: Callable[[np.ndarray, np.ndarray], np.ndarray] = field(repr=False)
    key: str = ""


@dataclass(frozen=True)
class UnconditionalLikelihood:
    """Each test sentence's likelihood under the run's unconditional model, as a metric
    registered with `needs=("unconditional",)` receives it (keyword `unconditional`).

    The unconditional model is the decoder under test's twin: the same component, options,
    seed and training sentences, trained on input vectors that carry nothing (every vector
    zero), so it is the best language model of the decoder's architecture and data alone.
    `nll` (n,) holds each test sentence's summed negative log-likelihood in nats and `tokens`
    (n,) the subwords it is summed over (end of sentence included), in test-set order, as the
    samples' `nll` and `tokens`; `key` is the cache key of the unconditional decoder.
    """

    nll: np.ndarray
    tokens: np.ndarray
    key: str = ""


@runtime_checkable
class EncoderAwareMetric(Protocol):
    """Optional for a metric: one that needs the encoder under test, e.g. to re-encode its
    outputs (the `cosine` metric).

    It registers with `needs=("encoder",)` (so `harness list` says so without building it); the
    core then calls `sentence_statistics(references, hypotheses, encoder=InputEncoding(...),
    **fields)`, and hands the encoder to no metric registered without it. Its statistics then
    depend on the encoder as well as on the samples; the core keys their cache on the input
    vectors' key."""

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str], *,
                            encoder: InputEncoding) -> np.ndarray:
        """Return an (n, k) float array of per-pair statistics."""


@runtime_checkable
class ChanceLevelMetric(Protocol):
    """Optional for an encoder-aware metric measured in the encoder's own space, for which a
    random vector is not the right floor: it gives the statistics of its chance level.

    `chance_statistics(encoder, unrelated)` returns the (n, k) statistics the metric would give
    if each input were matched with an unrelated test sentence: row i compares input vector i
    with the input vector of sentence `unrelated[i]` (a derangement of the test set: never
    itself). For `cosine`, row i is cos(x_{unrelated[i]}, x_i): a pooling encoder gives
    unrelated sentences a high cosine, which is then the level its outputs must beat."""

    def chance_statistics(self, encoder: InputEncoding, unrelated: np.ndarray) -> np.ndarray:
        """Return an (n, k) float array of per-sentence statistics at chance."""


def unrelated_pairing(n: int, seed: int) -> np.ndarray:
    """A derangement of range(n) drawn from `seed`: one random cycle through all n sentences, so
    that sentence i is paired with unrelated[i] != i (n >= 2; identity for n = 1)."""
    import numpy as np

    order = np.random.default_rng(seed).permutation(n)
    unrelated = np.empty(n, dtype=np.int64)
    unrelated[order] = np.roll(order, -1)
    return unrelated


def chance_score(metric: Metric) -> float | None:
    """The score a metric gives at chance whatever the encoder, where it declares one as its
    `chance` attribute (e.g. `retrieval`: 100 / k), else None. Reported beside its score."""
    chance = getattr(metric, "chance", None)
    return None if chance is None else float(chance)


def has_chance_level(metric: object) -> bool:
    """True when the metric gives its chance-level statistics (`ChanceLevelMetric`)."""
    return isinstance(metric, ChanceLevelMetric)


def checked_needs(needs: object, supplied: tuple[str, ...] | None = METRIC_NEEDS
                  ) -> tuple[str, ...]:
    """A registration's `needs` as a tuple of names, after checking that each is among
    `supplied` (what the core can hand a metric, `METRIC_NEEDS`; None: names checked later, as
    an analysis's, when a spec resolves them); raises ValueError otherwise."""
    if isinstance(needs, str) or not isinstance(needs, (tuple, list)) or not all(
            isinstance(need, str) for need in needs):
        raise ValueError(f"`needs` must be a tuple of names, got {needs!r}")
    if supplied is None:
        return tuple(needs)
    unknown = [need for need in needs if need not in supplied]
    if unknown:
        raise ValueError(f"`needs` names {', '.join(map(repr, unknown))}, which the core "
                         f"cannot supply; it supplies {', '.join(supplied)}")
    return tuple(needs)
