"""The report's building blocks: sections and tables (`Section` and `Table`, defined on the
ground floor, `harness.protocols`, and re-exported here), number formatting, and what several
sections look up in the results (the spec's correlation settings, metric directions, flags)."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.protocols import ResultsView
from harness.protocols import Section as Section  # plain data, on the ground floor
from harness.protocols import Table as Table
from harness.results.model import MetricScore, PairResult, RunResults
from harness.stats.multiple import ALPHA as ALPHA  # the level every section marks and counts at

DEFAULT_MIN_SUPPORT = 30
"""`comparison.min_support` when the spec does not say (older results.json)."""

FLAG = "⚠"
"""Marks a value to read with care: support under `min_support`, a decoder still improving."""

FIGURES_DIR = "figures"
HEATMAP_FILE = "heatmap.png"
CURVES_FILE = "training-curves.png"


def scatter_file(diagnostic: str) -> str:
    """The file name of a diagnostic's scatter plot, safe for a view's `:`."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in diagnostic)
    return f"scatter-{safe}.png"


def fmt(value: Any, digits: int = 1) -> str:
    """A number for a table; "–" for a missing or undefined one."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_p(value: float | None) -> str:
    """A p-value: three decimals, or scientific notation below 0.001."""
    if value is None:
        return "–"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


def fmt_interval(interval: tuple[Any, Any] | None, digits: int = 1) -> str:
    """"[low, high]", or "" when there is no interval or neither end is defined."""
    if interval is None or all(v is None for v in interval):
        return ""
    low, high = interval
    return f"[{fmt(low, digits)}, {fmt(high, digits)}]"


def fmt_span(low: Any, high: Any) -> str:
    """"3" when both ends are equal, "2–4" otherwise, "–" when unknown."""
    if low is None or high is None:
        return "–"
    return str(low) if low == high else f"{low}–{high}"


def join_names(names: list[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def plural(count: int, word: str, many: str | None = None) -> str:
    """"1 encoder", "3 encoders"."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def digits_for(higher_is_better: bool) -> int:
    """Decimals a metric's scores are shown with, by its direction: one on the 0-100 scale,
    two for perplexities (lower is better) near 1."""
    return 1 if higher_is_better else 2


def spec_setting(results: ResultsView, section_name: str, key: str, default: Any) -> Any:
    """A key of the spec's `correlation` or `comparison` section, or `default` for an older
    results.json without it."""
    section = getattr(results.spec, section_name)
    given = section is not None and key in section.model_fields_set  # recorded, not a default
    value = getattr(section, key) if given else None
    return default if value is None else value


def min_support(results: RunResults) -> int:
    """The spec's `comparison.min_support`: rates of fewer trials are flagged."""
    return int(spec_setting(results, "comparison", "min_support", DEFAULT_MIN_SUPPORT))


def excluded_controls(results: RunResults) -> list[str]:
    """The control encoders a run keeps out of its comparisons (`comparison.controls:
    exclude`, the default), in the run's order: drawn as reference points."""
    if spec_setting(results, "comparison", "controls", "exclude") != "exclude":
        return []
    return [name for name, described in (results.encoders or {}).items() if described.control]


def csv_text(header: list[str], rows: Iterable[list[Any]]) -> str:
    """A CSV table: the header row, then the rows, None as an empty cell."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([["" if cell is None else cell for cell in row] for row in rows])
    return buffer.getvalue()


def metric_order(runs: list[PairResult]) -> list[str]:
    """The metrics of the runs, in order of first appearance."""
    return list(dict.fromkeys(m for run in runs for m in run.metrics))


def higher_is_better(results: RunResults) -> dict[str, bool]:
    """Metric -> whether a higher value is better, as the runs recorded it."""
    found: dict[str, bool] = {}
    for run in results.runs:
        for name, score in run.metrics.items():
            found.setdefault(name, score.higher_is_better)
    return found


def low_support(score: MetricScore | None, threshold: int) -> bool:
    """True when a score is a rate of fewer than `threshold` trials (recorded support only)."""
    return score is not None and score.support is not None and score.support < threshold


def still_improving(run: PairResult) -> tuple[int, int]:
    """(decoders still improving, decoders trained) for a pair: each seed's, or the one's."""
    trains = [seed.train for seed in run.seeds] if run.seeds else [run.train]
    return sum(t.still_improving for t in trains), len(trains)


def shows_something(values: Iterable[float | None]) -> bool:
    """True when some value is defined and not 0: a figure panel of only zeros and undefined
    values (Id at the floor for every encoder) is a tangle of flat lines, left out."""
    return any(v is not None and v == v and v != 0 for v in values)


def split_silent(panels: Mapping[str, Mapping[str, Sequence[tuple[Any, ...]]]], value: int
                 ) -> tuple[dict[str, Any], list[str]]:
    """(the panels that show something, the titles of those left out): a panel is title ->
    line -> points, `value` the index of a point's value in its tuple."""
    kept = {title: lines for title, lines in panels.items()
            if shows_something(p[value] for points in lines.values() for p in points)}
    return kept, [title for title in panels if title not in kept]


EMPTY_WARNING = 0.05
"""A pair whose outputs are empty more often than this (one in twenty) is flagged: a decoder
that regenerates nothing from many vectors has not learned to generate, and its diagnostics say
little about the encoder."""


def empty_outputs(run: PairResult) -> tuple[int, int] | None:
    """(empty outputs, outputs) over every seed's decoder of a pair; None for results.json
    written before the count was kept."""
    summaries = [seed.generate for seed in run.seeds] if run.seeds else [run.generate]
    if any(s.empty is None or s.sentences is None for s in summaries):
        return None
    return sum(s.empty or 0 for s in summaries), sum(s.sentences or 0 for s in summaries)


def empty_cell(run: PairResult) -> str:
    """"12 of 500 (2.4%)", flagged above `EMPTY_WARNING`; "–" when not counted."""
    counts = empty_outputs(run)
    if counts is None or not counts[1]:
        return "–"
    empty, total = counts
    text = f"{empty} of {total} ({100 * empty / total:.1f}%)"
    return f"{text} {FLAG}" if empty > EMPTY_WARNING * total else text


def mostly_empty(runs: list[PairResult]) -> list[str]:
    """"encoder / decoder (60 of 500 empty)" for each pair over `EMPTY_WARNING`."""
    flagged = []
    for run in runs:
        counts = empty_outputs(run)
        if counts and counts[0] > EMPTY_WARNING * counts[1]:
            flagged.append(f"{pair_name(run)} ({counts[0]} of {counts[1]} empty)")
    return flagged


def pair_name(run: PairResult) -> str:
    """"encoder / decoder"."""
    return f"{run.encoder} / {run.decoder}"
