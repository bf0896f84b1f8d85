"""Stage 7: score generated sentences against their inputs with every metric of the spec."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from harness.cache import read_meta
from harness.errors import PluginError, plugin_call
from harness.protocols import Metric, higher_is_better, metric_signature, required_fields
from harness.results import MetricScore
from harness.spec import Component
from harness.stages.base import RunContext
from harness.stages.generate import Samples

VERSION = 2
STATISTICS_FILE = "statistics.npy"


def score_samples(ctx: RunContext, component: Component, samples: Samples) -> MetricScore:
    """Return the metric's score of the samples, computing what the cache lacks."""
    from harness.stats import bootstrap_ci

    started = time.perf_counter()
    plugin = component.plugin
    metric = ctx.build_once(component)
    if not isinstance(metric, Metric):
        raise PluginError(plugin, f"metric {component.name!r} lacks "
                                  "sentence_statistics/corpus_score")
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
        with plugin_call(plugin, f"metric {component.name!r}: corpus_score"):
            value = float(np.asarray(metric.corpus_score(stats.sum(axis=0), len(refs))))
            low, high = bootstrap_ci(metric, stats, seed=ctx.spec.seed)
        # Ranks and reports read the direction; a metric says so when lower is better.
        details: dict[str, Any] = {"higher_is_better": higher_is_better(metric)}
        signature = metric_signature(metric)
        if signature is not None:
            details["signature"] = signature
        return {"value": value, "ci95": [low, high], "details": details}

    directory = ctx.cache.produce("score", parts, build,
                                  label=f"{component.name} {samples.encoder} -> {samples.decoder}")
    summary = read_meta(directory)["summary"]
    support = int(np.load(directory / STATISTICS_FILE, mmap_mode="r").shape[0])
    ctx.add_time("score", time.perf_counter() - started)
    return MetricScore(value=summary["value"], ci95=summary["ci95"], support=support,
                       **summary["details"])
