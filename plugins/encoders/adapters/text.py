"""Word tokenisation for the pretrained encoders, close to what their released code used.

InferSent and QuickThought tokenised with NLTK's `word_tokenize` (Penn Treebank conventions);
InferSent v2 then rewrote "do n't" as "don 't", which is also what the Moses tokeniser in front
of LASER produces. NLTK and sacremoses are not dependencies of the harness, so this module
implements the rules that matter for English news text: punctuation split off words (but not
from numbers such as 1,000 or 10:30), the sentence-final period split off, clitics ('s 're 've
'll 'd 'm n't) split off. Quote characters are kept as they are (NLTK would turn " into `` and '').
"""

from __future__ import annotations

import re

_ELLIPSIS = re.compile(r"\.\.\.")
_PUNCTUATION = re.compile(r"([;@#$%&?!()\[\]{}<>\"])")
_COMMA = re.compile(r"(?<!\d),|,(?!\d)")
_COLON = re.compile(r":(?!\d)")
_FINAL_PERIOD = re.compile(r"([^.])\.([\]\)}>\"']*)\s*$")
_CLITIC = re.compile(r"(?i)([^' ])('s|'m|'d|'ll|'re|'ve|n't) ")
_CLOSING_QUOTE = re.compile(r"([^' ])' ")


def word_tokenize(text: str, *, moses_negation: bool = False) -> list[str]:
    """Return the Penn-Treebank-style tokens of `text` ("don't." -> ["do", "n't", "."]).

    With `moses_negation`, negations are split the Moses way ("don 't"), as InferSent v2 and
    LASER saw them in training.
    """
    text = _ELLIPSIS.sub(" ... ", text)
    text = _PUNCTUATION.sub(r" \1 ", text)
    text = _COMMA.sub(" , ", text)
    text = _COLON.sub(" : ", text)
    text = _FINAL_PERIOD.sub(r"\1 . \2 ", text)
    text = f" {text} "
    text = _CLITIC.sub(r"\1 \2 ", text)
    text = _CLOSING_QUOTE.sub(r"\1 ' ", text)
    tokens = text.split()
    if moses_negation:
        for i in range(1, len(tokens)):
            if tokens[i].lower() == "n't":
                tokens[i - 1], tokens[i] = tokens[i - 1] + tokens[i][0], tokens[i][1:]
    return tokens
