"""`harness leaderboard`: the encoders of runs and bundles made under one protocol, in one table.

Every comparison is paired, on the same test sentences: for each diagnostic of the decoder,
the encoders under study (controls are shown, not ranked) get every pairwise test of the
rankings analysis (`harness.analyses.rankings.paired.paired_ranking`: McNemar's or the sign-flip
exact test, a paired permutation test, or Welch's t over sentences and seeds with three or more
decoder seeds), Holm-corrected over the diagnostic's pairs; a rank interval per encoder
(Klein, Wright & Wieczorek 2020); and **tie groups**.

Tie groups (`harness.analyses.rankings.paired.tie_groups`): the encoders in rank order, cut
between two neighbours exactly where every encoder above the cut is significantly better,
after Holm's correction, than every encoder below it. The groups are the finest such
partition; an encoder of one group is significantly better than every encoder of every later
group. Inside a group some pairs may still differ significantly; no clean cut separates them.

Sources are run directories (results.json and statistics.zip) or bundles; their protocol
signatures must be equal (`harness.reference.signature`), or the leaderboard is refused with
every differing field named. A row reached twice (a bundle, and a run that joined it) is shown
once; two different rows with one name are told apart as NAME@SOURCE.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.reference.archive import STATISTICS_ARCHIVE, Archive
from harness.results.comparison import ComparisonSection
from harness.results.records import Record
from harness.results.signature import Signature, describe_difference, differences


@dataclass
class Row:
    """One encoder's row: its label, the source it was read from and the origin of its numbers
    (a bundle's id, or the run that computed it), whether it was joined (came from a bundle)
    and whether it is a control, its statistics (decoder -> metric -> seeds) and downstream
    scores (column -> (score, spread sd or None))."""

    label: str
    source: str
    origin: str
    joined: bool
    control: bool
    statistics: dict[str, dict[str, list[np.ndarray]]] = field(default_factory=dict)
    downstream: dict[str, tuple[float, float | None]] = field(default_factory=dict)


@dataclass
class Source:
    """A run directory or bundle read for the leaderboard."""

    path: Path
    name: str
    signature: Signature
    spec: dict[str, Any]
    rows: list[Row]


def _downstream_row(results: Sequence[Any]) -> dict[str, tuple[float, float | None]]:
    row: dict[str, tuple[float, float | None]] = {}
    for result in results:
        sd = result.spread.sd if result.spread is not None else None
        for column, value in result.columns.items():
            row[column] = (float(value), sd if column == result.task else None)
    return row


def read_source(path: Path) -> Source:
    """A run directory (results.json + statistics.zip) or a bundle, as leaderboard rows."""
    from harness.reference.bundle import Bundle
    from harness.results.model import load_results

    if path.is_dir():
        results = load_results(path)
        if results.signature is None or not (path / STATISTICS_ARCHIVE).is_file():
            raise HarnessError(f"{path}: a run without a protocol signature or "
                               f"{STATISTICS_ARCHIVE} (an older version's); run its spec "
                               "again, from its cache")
        archive = Archive(path / STATISTICS_ARCHIVE)
        statistics = archive.index.statistics
        joined = results.reference.encoders if results.reference is not None else {}
        bundle_of = {r.encoder: r.bundle for r in results.runs if r.bundle}
        details = results.downstream_details or {}
        rows = []
        for label in dict.fromkeys([r.encoder for r in results.runs]):
            description = (results.encoders or {}).get(label)
            origin = bundle_of.get(label) or f"{results.spec.name}:{path.name}"
            rows.append(Row(
                label=label, source=path.name, joined=label in joined,
                origin=f"{origin}/{joined.get(label, label)}",
                control=bool(description is not None and description.control),
                statistics=_statistics_of(archive, statistics, label),
                downstream=(_downstream_row(list(details[label].values()))
                            if label in details else
                            {k: (v, None) for k, v in results.downstream.get(label, {}).items()})))
        return Source(path=path, name=results.spec.name or path.name,
                      signature=results.signature, spec=results.spec.model_dump(mode="json"),
                      rows=rows)
    if not path.is_file():
        raise HarnessError(f"{path}: no such run directory or bundle")
    bundle = Bundle(path)
    statistics = bundle.archive.index.statistics
    rows = [Row(label=name, source=path.name, origin=f"{bundle.id}/{name}", joined=True,
                control=bool(encoder.description is not None and encoder.description.control),
                statistics=_statistics_of(bundle.archive, statistics, name),
                downstream=_downstream_row(list(encoder.downstream.values())))
            for name, encoder in bundle.manifest.encoders.items()]
    return Source(path=path, name=bundle.manifest.name, signature=bundle.signature,
                  spec=bundle.manifest.spec, rows=rows)


def _statistics_of(archive: Archive, index: Mapping[str, Mapping[str, Mapping[str, list[str]]]],
                   encoder: str) -> dict[str, dict[str, list[np.ndarray]]]:
    return {decoder: {metric: [archive.array(m) for m in by_encoder[encoder]]
                      for metric, by_encoder in by_metric.items() if encoder in by_encoder}
            for decoder, by_metric in index.items()}


class Cell(Record):
    """One encoder on one diagnostic: value, 95% interval (`metric_score`'s: exact for a rate,
    cluster bootstrap over sentences otherwise), rank, rank interval and tie group (None for a
    control or an undefined value)."""

    value: float | None
    ci95: tuple[float | None, float | None] = (None, None)
    rank: int | None = None
    rank_ci95: tuple[int | None, int | None] = (None, None)
    group: int | None = None


class Entry(Record):
    """One encoder of the leaderboard."""

    encoder: str
    source: str
    joined: bool
    control: bool
    cells: dict[str, Cell] = {}
    downstream: dict[str, tuple[float, float | None]] = {}


class Leaderboard(Record):
    """The table: the shared signature, the decoder, its diagnostics, the downstream columns,
    the test sentences every test is paired on, the entries (sorted by the first diagnostic's
    rank, controls last), and how many pairs each diagnostic's Holm family holds."""

    signature: str
    decoder: str
    diagnostics: list[str]
    higher_is_better: dict[str, bool]
    tasks: list[str]
    sentences: int
    entries: list[Entry]
    pairs: dict[str, int] = {}
    resamples: int = 0


def check_signatures(sources: Sequence[Source]) -> None:
    """Refuse sources of different protocol signatures, naming each differing field."""
    first = sources[0]
    lines = []
    for other in sources[1:]:
        for name, ours, theirs in differences(first.signature, other.signature):
            lines.append(describe_difference(name, ours, theirs, our_side=str(first.path),
                                             their_side=str(other.path)))
    if lines:
        raise HarnessError("the sources were made under different protocols and cannot share a "
                           "leaderboard (their signatures differ):\n" + "\n".join(lines))


def merged_rows(sources: Sequence[Source]) -> list[Row]:
    """Every source's rows, a row reached twice (same origin) once, two different rows of one
    label told apart as LABEL@SOURCE."""
    seen: dict[str, Row] = {}
    rows: list[Row] = []
    labels: set[str] = set()
    for source in sources:
        for row in source.rows:
            if row.origin in seen:
                continue
            seen[row.origin] = row
            if row.label in labels:
                row.label = f"{row.label}@{source.name}"
            labels.add(row.label)
            rows.append(row)
    return rows


def _metric(name: str, options: dict[str, Any], seed: int) -> Any:
    from harness.protocols import BuildContext
    from harness.registry.components import build
    from harness.registry.loader import load_registry

    info = load_registry().get("metric", name)
    return build(info, info.options.model_validate(options), BuildContext(seed=seed))


def build_leaderboard(paths: Sequence[Path], *, decoder: str | None = None) -> Leaderboard:
    """The leaderboard of the runs and bundles at `paths` (module docstring)."""
    from harness.analyses.rankings.paired import paired_ranking
    from harness.protocols import higher_is_better
    from harness.stats import metric_score

    sources = [read_source(Path(path)) for path in paths]
    check_signatures(sources)
    fields = sources[0].signature.fields
    decoders = sorted({k.split(".")[1] for k in fields if k.startswith("decoders.")})
    decoder = decoder or next((d.get("name") for d in sources[0].spec.get("decoders") or []),
                              None) or (decoders[0] if decoders else None)
    if decoder not in decoders:
        raise HarnessError(f"--decoder {decoder}: the sources' decoders are "
                           f"{', '.join(decoders) or 'none'}")
    options = {m.get("name"): m.get("options") or {} for m in sources[0].spec.get("metrics") or []}
    metrics = [m for m in options if f"metrics.{m}.plugin" in fields]
    comparison = ComparisonSection.model_validate(sources[0].spec.get("comparison") or {})
    seed = int(fields.get("seed") or 0)
    rows = merged_rows(sources)
    studied = [r for r in rows if not r.control]
    cells: dict[str, dict[str, Cell]] = {r.label: {} for r in rows}
    directions, pairs, sentences = {}, {}, 0
    for name in metrics:
        metric = _metric(name, options[name], seed)
        higher = higher_is_better(metric)
        directions[name] = higher
        have = {r.label: r.statistics[decoder][name] for r in rows
                if name in r.statistics.get(decoder, {})}
        for label, stats in have.items():
            score = metric_score(metric, stats, seed=seed, resamples=comparison.resamples)
            cells[label][name] = Cell(value=score.value, ci95=score.ci95)
        ranked = {r.label: have[r.label] for r in studied if r.label in have}
        if len(ranked) < 2:
            continue
        ranking = paired_ranking(metric, ranked, higher_is_better=higher,
                                 resamples=comparison.resamples,
                                 permutations=comparison.permutations, seed=seed)
        sentences = ranking.sentences
        pairs[name] = len(ranking.differences)
        for label, group in ranking.groups.items():
            interval = ranking.encoders[label]
            cells[label][name] = cells[label][name].model_copy(update={
                "rank": interval.rank, "rank_ci95": interval.rank_ci95, "group": group})
    tasks = list(dict.fromkeys(task for r in rows for task in r.downstream))
    entries = [Entry(encoder=r.label, source=r.source, joined=r.joined, control=r.control,
                     cells=cells[r.label], downstream=r.downstream) for r in rows]
    first = metrics[0] if metrics else None

    def order(entry: Entry) -> tuple[float, float]:
        cell = entry.cells.get(first) if first else None
        rank = cell.rank if cell is not None and cell.rank is not None else math.inf
        return (1.0 if entry.control else 0.0, rank)

    return Leaderboard(signature=sources[0].signature.text, decoder=decoder,
                       diagnostics=metrics, higher_is_better=directions, tasks=tasks,
                       sentences=sentences, entries=sorted(entries, key=order), pairs=pairs,
                       resamples=comparison.resamples)
