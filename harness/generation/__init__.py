"""Generation of sentences from vectors with a trained decoder: greedy search, beam search and
the released Vec2Sent search.

The public names are importable from here (`from harness.generation import beam_search`);
they are loaded on first use.
"""

from __future__ import annotations

from harness.lazy import lazy_exports

__getattr__, __all__ = lazy_exports(__name__, {
    "Hypothesis": "common", "greedy_search": "search", "beam_search": "search",
    "released_search": "released", "reference_nll": "perplexity", "rank": "ranking",
    "released_value": "ranking", "LENGTH_PENALTIES": "ranking",
    "priority_queue_beam_search": "reference", "released_beam_search": "reference",
})
