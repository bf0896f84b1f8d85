"""How hypotheses are ranked against each other: the `generation.length_penalty` values.

`tokens` counts generated tokens, the end-of-sentence token included.

- `none` and `mean` rank a hypothesis of the batched beam search (`harness.generation.search`)
  by its summed log-probability `s`, or by `s / tokens`.
- `paper` is the released Vec2Sent search (maruker/vec2sent, src/vec2sent/lstm/beam_search.py,
  `beam_decode`, run by `harness.generation.released`): the model is called with
  `return_prob=True`, so a node's `log_prob` is the sum of its tokens' *probabilities*, and
  `BeamSearchNode.eval` ranks it by that sum divided by `length_penalty(1) = len + 5/6`, where
  `len` also counts the start token (`len = tokens + 1`). `released_value` computes exactly
  that, in the same floating-point operations.
"""

from __future__ import annotations

from typing import Literal, TypeVar, get_args

LengthPenalty = Literal["none", "mean", "paper"]
"""How hypotheses are ranked: summed log-probability, its mean per token, or the released
Vec2Sent search (summed probabilities / (len + 5/6), best first, 5 ended hypotheses). The
spec's `generation.length_penalty` takes these values."""
LENGTH_PENALTIES: tuple[str, ...] = get_args(LengthPenalty)
RELEASED_FINISHED = 5
"""Ended hypotheses after which the released search stops (`n_required` in `beam_decode`)."""
RELEASED_MAX_ROUNDS = 500
"""Rounds after which the harness's released search gives a sentence up (the release has no
such limit; a trained decoder needs far fewer, an untrained one may never stop otherwise)."""

_RELEASED_LENGTH_OFFSET = 5 / 6  # `length_penalty(alpha=1)`: (len + 5/6) ** 1

Score = TypeVar("Score")  # a float or a tensor of floats


def check_penalty(penalty: str) -> None:
    """Raise ValueError, before any work, for a `length_penalty` that is none of ours."""
    if penalty not in LENGTH_PENALTIES:
        raise ValueError(f"length_penalty must be one of {', '.join(LENGTH_PENALTIES)}, "
                         f"not {penalty!r}")


def rank(score: Score, tokens: int, penalty: str) -> Score:
    """Return the beam search's ranking value of a hypothesis with summed log-probability
    `score`: none: the score itself; mean: score per token."""
    if penalty == "none":
        return score
    if penalty == "mean":
        return score / max(tokens, 1)  # type: ignore[operator, return-value]
    check_penalty(penalty)
    raise ValueError("length_penalty 'paper' ranks summed probabilities in the released search "
                     "(`released_value`), not log-probabilities in the beam search")


def best_reachable(score: Score, max_len: int, penalty: str) -> Score:
    """Return the highest rank any continuation of a live hypothesis with `score` can reach.

    Scores only fall as tokens are added (log-probabilities are <= 0), so an ended continuation
    has a score <= `score` and at most `max_len` tokens; for a score <= 0 both penalties here
    are highest at the longest length.
    """
    if penalty == "none":
        return score
    return rank(score, max_len, penalty)


def released_value(probability_sum: Score, tokens: Score) -> Score:
    """The released search's ranking value: probability_sum / ((tokens + 1) + 5/6).

    `BeamSearchNode.eval` with `len = tokens + 1`, operation for operation, so that a float64
    tensor of `tokens` gives bitwise the released Python floats.
    """
    return probability_sum / ((tokens + 1) + _RELEASED_LENGTH_OFFSET)  # type: ignore[operator]
