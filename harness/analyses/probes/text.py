"""Plain-text rendering of a solved analogy set for `harness analogy --file`: one block per item
(the query, the expected answer, every pair's output with its scores), then each pair's
summary over the set and per relation type."""

from __future__ import annotations

from collections.abc import Iterator

from harness.analyses.probes.queries import AnalogySetRun
from harness.analyses.probes.results import AnalogyGroup, ProbeRate
from harness.text.outputs import is_empty, shown


def fmt_rate(rate: ProbeRate | None) -> str:
    """"12.3% [8.9, 16.5] (n=300)"; "–" without trials."""
    if rate is None or rate.value is None:
        return "–"
    low, high = rate.ci95
    return f"{rate.value:.1f}% [{low or 0.0:.1f}, {high or 0.0:.1f}] (n={rate.support})"


def render_analogy_run(run: AnalogySetRun) -> str:
    """The per-item rows and per-pair summaries of an analogy set solved by every pair."""
    return "\n".join([*_items(run), "", *_summaries(run)]) + "\n"


def _items(run: AnalogySetRun) -> Iterator[str]:
    form = run.analogy_set.form
    width = max((len(f"{p.encoder} -> {p.decoder}") for p in run.pairs), default=0)
    for index, item in enumerate(run.analogy_set.items):
        query = (f"{item.a} : {item.b} :: z : {item.c}" if form == "paper"
                 else f"{item.a} : {item.b} :: {item.c} : d")
        yield f"{index + 1}. {query}" + (f"  [{item.relation}]" if item.relation else "")
        if item.expected is not None:
            yield f"   expected: {item.expected}"
        for pair in run.pairs:
            scored = pair.items[index]
            marks = []
            if scored.exact is not None:
                marks.append("exact" if scored.exact else "wrong")
                marks.append(f"BLEU {scored.bleu:.1f}")
            marks.append("empty" if is_empty(scored.output)
                         else "new" if scored.novel else "copies a, b or c")
            label = f"{pair.encoder} -> {pair.decoder}"
            yield f"   {label:<{width}}  {shown(scored.output)}  ({', '.join(marks)})"


def _summaries(run: AnalogySetRun) -> Iterator[str]:
    yield (f"summary of {run.analogy_set.name} ({len(run.analogy_set.items)} items, form "
           f"{run.analogy_set.form}): accuracy = outputs equal to the expected answer, with "
           "exact 95% intervals; new = outputs differing from a, b and c")
    for pair in run.pairs:
        yield f"{pair.encoder} -> {pair.decoder}: {_group(pair.result.overall)}"
        for relation, group in pair.result.relations.items():
            yield f"  {relation}: {_group(group)}"


def _group(group: AnalogyGroup) -> str:
    parts = []
    if group.accuracy is not None:
        parts.append(f"accuracy {fmt_rate(group.accuracy)}")
        parts.append(f"BLEU {group.bleu:.1f}" if group.bleu is not None else "BLEU –")
    parts.append(f"new {fmt_rate(group.novel)}")
    return ", ".join(parts)
