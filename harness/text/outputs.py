"""Generated text as a user sees it, and the files a run directory keeps it in. A decoder that
has not learned to generate often ends a sentence at once: its output is the empty string, which
a table cell or a terminal shows as nothing at all. Every place that shows an output shows
`EMPTY` instead, and runs count them."""

from __future__ import annotations

from collections.abc import Iterable

EMPTY = "(empty)"
"""How an empty output is shown."""


def is_empty(text: str) -> bool:
    """True for an output with no token: the empty string or only whitespace."""
    return not text.strip()


def shown(text: str) -> str:
    """`text`, or `EMPTY` where it is empty."""
    return EMPTY if is_empty(text) else text


def count_empty(texts: Iterable[str]) -> int:
    """How many of `texts` are empty."""
    return sum(is_empty(text) for text in texts)


def sample_file_name(encoder: str, decoder: str) -> str:
    """Return `<encoder>__<decoder>.jsonl`, with a view suffix `:` made file-safe: the name of a
    pair's samples (and probe items) in a run directory."""
    return f"{encoder}__{decoder}.jsonl".replace(":", "_").replace("/", "_")
