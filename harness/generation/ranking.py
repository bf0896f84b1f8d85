"""How hypotheses of different lengths are ranked against each other (length penalties).

`tokens` counts generated tokens, the end-of-sentence token included. The released Vec2Sent
code ranks a hypothesis by `score / (len + 5/6)` (maruker/vec2sent, lstm/beam_search.py,
`BeamSearchNode.eval` with alpha = 1), where its `len` also counts the start token, so
`len = tokens + 1`. (That code sums probabilities, not log-probabilities, into the score; here
the score is always the summed log-probability.)
"""

from __future__ import annotations

from typing import Literal, TypeVar, get_args

LengthPenalty = Literal["none", "mean", "paper"]
"""How hypotheses are ranked: summed log-probability, its mean per token, or the released
code's score / (len + 5/6). The spec's `generation.length_penalty` takes these values."""
LENGTH_PENALTIES: tuple[str, ...] = get_args(LengthPenalty)

_PAPER_OFFSET = 1.0 + 5.0 / 6.0  # the start token plus the released code's 5/6

Score = TypeVar("Score")  # a float or a tensor of floats


def rank(score: Score, tokens: int, penalty: str) -> Score:
    """Return the ranking value of a hypothesis with summed log-probability `score`.

    none: the score itself; mean: score per token; paper: score / (tokens + 1 + 5/6).
    """
    if penalty == "none":
        return score
    if penalty == "mean":
        return score / max(tokens, 1)  # type: ignore[operator, return-value]
    if penalty == "paper":
        return score / (tokens + _PAPER_OFFSET)  # type: ignore[operator, return-value]
    raise ValueError(f"length_penalty must be one of {', '.join(LENGTH_PENALTIES)}, "
                     f"not {penalty!r}")


def best_reachable(score: Score, max_len: int, penalty: str) -> Score:
    """Return the highest rank any continuation of a live hypothesis with `score` can reach.

    Scores only fall as tokens are added (log-probabilities are <= 0), so an ended continuation
    has a score <= `score` and at most `max_len` tokens; for a score <= 0 every penalty here is
    highest at the longest length.
    """
    if penalty == "none":
        return score
    return rank(score, max_len, penalty)
