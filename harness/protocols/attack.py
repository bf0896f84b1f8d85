"""The attack contract: what reads text back from an encoder's vectors, clean or defended, and
what it is allowed to know (`ThreatModel`).

The privacy analysis runs every attack of the spec's `privacy.attacks:` on every encoder x
defence x level and compares them on what every attack yields (content-word token-F1 against
the test sentences; Id and BLEU where an attack writes sentences): a defence is judged by the
strongest attack tried against it. An attack declares its threat model; the core hands it only
what that model grants (`AttackInputs`). Imports nothing from the rest of the harness; numpy
appears in annotations only.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

Query = Callable[[Sequence[str]], "np.ndarray"]
"""Black-box access to the attacked store: texts -> their vectors through the encoder and the
defence at the attacked level, (len(texts), dim) float32."""

Decode = Callable[["np.ndarray", int], "list[list[str]]"]
"""A decoder: vectors (n, dim), beam width k -> for each vector up to k sentences, best first."""


@dataclass(frozen=True)
class ThreatModel:
    """What an attack is given beyond the vectors it inverts.

    `leaked`: how many leaked (text, vector) pairs of the training split it is handed (their
    vectors defended like the attacked ones), `None` for all of them, 0 for none; `queries`:
    black-box access to the attacked store (`AttackInputs.query`); `public`: a public corpus of
    sentences without vectors (`AttackInputs.public`); `surrogate`: another encoder of the run,
    with vectors of its own and a decoder trained on them (`AttackInputs.surrogate_*`);
    `decoder`: the run's adaptive decoder, trained on the leaked pairs (`AttackInputs.decode`);
    `knows_defence`: whether it adapts to the defence (it learns from defended vectors)."""

    leaked: int | None = None
    queries: bool = False
    public: bool = False
    surrogate: bool = False
    decoder: bool = False
    knows_defence: bool = True

    def describe(self) -> str:
        """The threat model in words, for the report: "1000 leaked pairs, black-box queries"."""
        given = ["all leaked training pairs" if self.leaked is None
                 else "no leaked pairs" if self.leaked == 0 else f"{self.leaked} leaked pairs"]
        given += [what for flag, what in ((self.queries, "black-box queries"),
                                          (self.public, "a public corpus"),
                                          (self.surrogate, "a surrogate encoder"),
                                          (self.decoder, "the adaptive decoder")) if flag]
        if not self.knows_defence:
            given.append("not the defence")
        return ", ".join(given)


@dataclass
class AttackInputs:
    """What the core hands an attack: only what its `ThreatModel` grants (the rest `None`).

    `texts`/`vectors`: the leaked pairs (the run's normalised training sentences and their
    vectors as the attacked store holds them, the first `threat.leaked`); `seed`: seed every
    random choice from it; `workdir`: a private folder for what it fits (kept with the cache);
    `device`: where torch work goes."""

    texts: Sequence[str]
    vectors: np.ndarray
    seed: int
    workdir: Path
    device: str = "cpu"
    query: Query | None = None
    public: Sequence[str] | None = None
    decode: Decode | None = None
    surrogate_vectors: np.ndarray | None = None
    """The surrogate encoder's vectors of the leaked texts (row i of `texts`)."""
    surrogate_decode: Decode | None = None
    """The surrogate encoder's own decoder."""


@dataclass
class Inversion:
    """What an attack read back from the attacked vectors, one entry per vector: `sentences`
    (an attack that writes text) or `words` (one that infers which words a sentence holds, in
    no order), or both; `scores`, optionally, how sure it is of each (higher is surer). Every
    attack is scored by the content words it recovers (`token-f1:content` of its sentences, or
    of its words joined); an attack with sentences also by Id and BLEU."""

    sentences: list[str] | None = None
    words: list[list[str]] | None = None
    scores: list[float] | None = None
    steps: list[list[str]] | None = None
    """For an iterative attack, its best sentence for every vector after each step (step 0
    first, the last step's equal to `sentences`): the report scores each step, the gain per
    step."""


@runtime_checkable
class Attack(Protocol):
    """What a `register_attacks` factory returns, built with its options from the spec's
    `privacy.attacks:`.

    `threat` is fixed by the attack (and its options: a number of leaked pairs, say). The core
    calls `fit` once per encoder x defence x level with what the threat model grants, then
    `invert` on the attacked (test) vectors. Optional attributes the core reads: `label`, the
    name its results go under (default: its registered name; `align-100` for one of several
    `align` entries), and `surrogate`, the encoder of the run it wants as its surrogate (None:
    the run's choice)."""

    threat: ThreatModel

    def fit(self, inputs: AttackInputs) -> None:
        """Learn the attack from `inputs` (an attack without training ignores them)."""

    def invert(self, vectors: np.ndarray) -> Inversion:
        """Read back every row of `vectors` (n, dim), float32."""


@runtime_checkable
class Ranker(Protocol):
    """An attack that can also rank given candidate texts for a vector (the oracle ranking by
    the store's noise model, a decoder by its likelihood): optional beside `Attack`. The core
    calls `likelihood`, after `fit`, to measure the canaries' exposure (Carlini et al. 2019,
    Sec. 4): every canary's vector as the store holds it, with the M candidate sentences of
    one of its entities (the true one among them); an attack that does not rank is not asked."""

    def likelihood(self, vectors: np.ndarray, candidates: Sequence[Sequence[str]]
                   ) -> list[list[float]]:
        """For row i of `vectors` (n, dim), float32, a score for each sentence of
        `candidates[i]`: the higher, the likelier that the vector is that sentence's."""


def ranking_problem(scores: object, candidates: Sequence[Sequence[str]]) -> str | None:
    """What is wrong with `scores` as a ranker's answer for `candidates`, in words, or None:
    one list of finite numbers per vector, one number per candidate."""
    rows = _listed(scores)
    if rows is None or len(rows) != len(candidates):
        got = len(rows) if rows is not None else type(scores).__name__
        return f"likelihood returned {got} score lists for {len(candidates)} vectors"
    for row, (found, asked) in enumerate(zip(rows, candidates, strict=True)):
        values = _listed(found)
        if values is None or len(values) != len(asked):
            return (f"likelihood returned {len(values) if values is not None else 0}"
                    f" scores for the {len(asked)} candidates of vector {row}")
        if not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                   and math.isfinite(v) for v in values):
            return f"likelihood returned scores for vector {row} that are not finite numbers"
    return None


def _listed(found: object) -> list[object] | None:
    """`found` as a list when it is a sequence or an array (anything with a length that
    iterates), else None."""
    if isinstance(found, (str, bytes)) or not hasattr(found, "__len__"):
        return None
    try:
        return list(found)  # type: ignore[call-overload]
    except TypeError:
        return None


def inversion_problem(inversion: object, count: int) -> str | None:
    """What is wrong with `inversion` as an attack's reading of `count` vectors, in words
    ("invert returned 1 sentences for 5 vectors"), or None: an `Inversion` with sentences or
    words, one entry per vector in every field it fills (strings; lists of strings for words),
    and one string per vector at every step."""
    if not isinstance(inversion, Inversion):
        return f"invert returned {type(inversion).__name__}, not a harness.protocols.Inversion"
    if inversion.sentences is None and inversion.words is None:
        return "invert returned neither sentences nor words"
    for field in ("sentences", "words", "scores"):
        values = getattr(inversion, field)
        if values is not None and len(values) != count:
            return f"invert returned {len(values)} {field} for {count} vectors"
    if inversion.sentences is not None and not all(isinstance(s, str)
                                                   for s in inversion.sentences):
        return "invert returned sentences that are not strings"
    if inversion.words is not None and not all(
            isinstance(words, list) and all(isinstance(w, str) for w in words)
            for words in inversion.words):
        return "invert returned words that are not lists of strings"
    for step, sentences in enumerate(inversion.steps or []):
        if len(sentences) != count or not all(isinstance(s, str) for s in sentences):
            return f"invert returned {len(sentences)} sentences at step {step} for {count} vectors"
    if inversion.scores is not None and not all(
            isinstance(score, (int, float)) and math.isfinite(score)
            for score in inversion.scores):
        return "invert returned scores that are not finite numbers"
    return None


def ungranted_use(error: BaseException, threat: ThreatModel) -> str | None:
    """When `error` is what using an input the threat model does not grant raises (an
    ungranted input is None: "'NoneType' object is not callable"), what to declare, in a
    sentence naming `ThreatModel`; else None."""
    if "NoneType" not in str(error):
        return None
    ungranted = [flag for flag, granted in (("queries", threat.queries), ("public", threat.public),
                                            ("decoder", threat.decoder),
                                            ("surrogate", threat.surrogate)) if not granted]
    if not ungranted:
        return None
    return ("an input its ThreatModel does not grant is None (not granted: "
            f"{', '.join(ungranted)}): declare what the attack uses, e.g. "
            f"ThreatModel({ungranted[0]}=True)")


def inversion_texts(inversion: Inversion) -> list[str]:
    """One text per vector of a sound inversion (`inversion_problem`): its sentences, or its
    words joined by spaces."""
    if inversion.sentences is not None:
        return list(inversion.sentences)
    return [" ".join(words) for words in inversion.words or []]


def threat_model(attack: object) -> ThreatModel:
    """What `attack` declares it is given (its `threat`); a `TypeError` naming what is wrong
    when it declares none or something else."""
    threat = getattr(attack, "threat", None)
    if not isinstance(threat, ThreatModel):
        raise TypeError(f"`threat` must be a harness.protocols.ThreatModel, got "
                        f"{type(threat).__name__}")
    if threat.leaked is not None and threat.leaked < 0:
        raise TypeError(f"`threat.leaked` must be None or >= 0, got {threat.leaked}")
    return threat
