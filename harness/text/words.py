"""The words of a sentence as the word-level measures count them (token F1, the canaries'
entities): whitespace tokens, or the tokens of sacrebleu's `13a` tokeniser (the one of
mteval-v13a.pl, BLEU's default), which splits punctuation off words ("plane." is "plane" and
".", a "." that follows a digit before another digit stays: "3.5"), so that a word counts the
same at the end of a sentence as within it.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

Tokenize = Literal["whitespace", "13a"]
"""How a sentence is split into words."""


def words(text: str, tokenize: Tokenize = "13a") -> list[str]:
    """The words of `text`: its whitespace tokens, or its `13a` tokens (module docstring)."""
    if tokenize == "whitespace":
        return text.split()
    return str(_tokenizer_13a()(text)).split()


@cache
def _tokenizer_13a() -> Any:
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    return Tokenizer13a()
