"""Stage 7: score generated sentences against their inputs with every metric of the spec.

Each score artifact keeps the metric's per-sentence statistics (`statistics.npy`, one row per
test sentence in test-set order) and, in its summary, the `MetricScore` of those statistics with
its interval (`harness.stats.metric_score`: exact Clopper-Pearson for a proportion, percentile
bootstrap otherwise). The statistics are what the paired analyses across encoders and seeds read
back (the file `scored` returns).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.cache import read_meta
from harness.errors import PluginError, plugin_call
from harness.protocols import Metric, metric_signature, required_fields
from harness.results import MetricScore, json_safe
from harness.spec import Component
from harness.stages.base import RunContext
from harness.stages.generate import Samples

VERSION = 3  # 3: the summary is a whole MetricScore (interval method, support, undefined count)
STATISTICS_FILE = "statistics.npy"
RESAMPLES = 1000
"""Bootstrap resamples behind each score's interval (where the interval is not exact)."""


def _metric(ctx: RunContext, component: Component) -> Metric:
    metric = ctx.build_once(component)
    if not isinstance(metric, Metric):
        raise PluginError(component.plugin, f"metric {component.name!r} lacks "
                                            "sentence_statistics/corpus_score")
    return metric


def _metric_score(ctx: RunContext, component: Component, metric: Metric,
                  statistics: list[np.ndarray]) -> MetricScore:
    """`harness.stats.metric_score` of one statistics array per decoder seed, with the metric's
    own direction (ranks and reports read it; a metric says so when lower is better) and
    signature."""
    from harness.stats import metric_score

    with plugin_call(component.plugin, f"metric {component.name!r}: corpus_score"):
        return metric_score(metric, statistics, seed=ctx.spec.seed, resamples=RESAMPLES,
                            signature=metric_signature(metric))


def _score_artifact(ctx: RunContext, component: Component, samples: Samples) -> Path:
    """The score artifact's directory, built when the cache lacks it."""
    plugin = component.plugin
    metric = _metric(ctx, component)
    parts = {"version": VERSION, "samples": samples.key, "metric": component.identity(),
             "seed": ctx.spec.seed}

    def build(directory: Path) -> dict[str, Any]:
        refs, hyps = samples.references, samples.hypotheses
        fields = {}
        for name in required_fields(metric):
            if any(name not in record for record in samples.records):
                raise PluginError(plugin, f"metric {component.name!r} requires the sample "
                                          f"field {name!r}, which the samples lack")
            fields[name] = [record[name] for record in samples.records]
        with plugin_call(plugin, f"metric {component.name!r}: sentence_statistics"):
            stats = np.asarray(metric.sentence_statistics(refs, hyps, **fields),
                               dtype=np.float64)
        if stats.ndim != 2 or stats.shape[0] != len(refs):
            raise PluginError(plugin, f"metric {component.name!r} returned statistics of "
                                      f"shape {stats.shape}; expected ({len(refs)}, k)")
        np.save(directory / STATISTICS_FILE, stats)
        score = _metric_score(ctx, component, metric, [stats])
        return {"score": json_safe(score.model_dump(mode="json"))}

    return ctx.cache.produce("score", parts, build,
                             label=f"{component.name} {samples.encoder} -> {samples.decoder}")


def scored(ctx: RunContext, component: Component, samples: Samples) -> tuple[MetricScore, Path]:
    """Return the metric's score of the samples with its interval (`harness.stats.metric_score`
    over the one decoder that generated them) and the file of its per-sentence statistics
    (n, k), in test-set order (`numpy.save` format), from one score artifact, computed when the
    cache lacks it. A path, so a job can hand the statistics to the process that compares
    encoders."""
    started = time.perf_counter()
    directory = _score_artifact(ctx, component, samples)
    score = MetricScore.model_validate(read_meta(directory)["summary"]["score"])
    ctx.add_time("score", time.perf_counter() - started)
    return score, directory / STATISTICS_FILE


def seeds_score(ctx: RunContext, component: Component, files: Sequence[Path]) -> MetricScore:
    """Return the metric's score over decoders trained with several seeds, from each seed's
    statistics file (from `scored`, same test sentences): the mean over seeds, the two-level
    bootstrap interval over sentences and seeds, and the seeds' spread
    (`harness.stats.metric_score`; with one file, that seed's own score)."""
    started = time.perf_counter()
    metric = _metric(ctx, component)
    score = _metric_score(ctx, component, metric, [np.load(path) for path in files])
    ctx.add_time("score", time.perf_counter() - started)
    return score
