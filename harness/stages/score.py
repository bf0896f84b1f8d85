"""Stage 7: score generated sentences against their inputs with every metric of the spec.

Each score artifact keeps the metric's per-sentence statistics (`statistics.npy`, one row per
test sentence in test-set order) and, in its summary, the `MetricScore` of those statistics with
its interval (`harness.stats.metric_score`: exact Clopper-Pearson for a proportion, percentile
bootstrap otherwise). The statistics are what the paired analyses across encoders and seeds read
back (the file `scored` returns).

A metric that declares `needs = ("encoder",)` (`harness.protocols.EncoderAwareMetric`)
is handed the encoder under test as `encoder=InputEncoding(...)`: the test vectors the decoder
generated from and the encode stage's own encoder object to encode other sentences with. No
other metric is. Its artifact's key then also names the test vectors' artifact. Likewise
`needs = ("decoder",)` gives `decoder=DecoderLikelihood(...)` (the trained decoder scoring any
test sentence given any test vector) and `needs = ("unconditional",)` gives
`unconditional=UnconditionalLikelihood(...)` (the run's unconditional model, trained when the
cache lacks it; its key joins the artifact's).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError, PluginError, plugin_call
from harness.protocols import (
    InputEncoding,
    Metric,
    has_chance_level,
    metric_signature,
    required_fields,
    unrelated_pairing,
)
from harness.results.model import MetricScore, json_safe
from harness.spec import Component, encode_batch_size
from harness.stages.base import RunContext
from harness.stages.encode import Encoded
from harness.stages.generate import Samples
from harness.stages.likelihood import Decoding, decoder_likelihood, unconditional_likelihood
from harness.util.cache import read_meta

VERSION = 4  # 4: the sentence as the unit of intervals; chance-level statistics beside
STATISTICS_FILE = "statistics.npy"
CHANCE_FILE = "chance.npy"
"""The metric's statistics at the encoder's chance level (`ChanceLevelMetric`), where it has
one: read by the floor analysis (`harness.analyses.run.AnalysisRun.statistics`)."""
RESAMPLES = 1000
"""Bootstrap resamples behind each score's interval (where the interval is not exact)."""


def _metric(ctx: RunContext, component: Component) -> Metric:
    metric = ctx.build_once(component)
    if not isinstance(metric, Metric):
        raise PluginError(component.plugin, f"metric {component.name!r} lacks "
                                            "sentence_statistics/corpus_score")
    return metric


def _input_encoding(encoded: Encoded, batch_size: int) -> InputEncoding:
    """The encoder under test as an encoder-aware metric receives it."""

    def encode(sentences: Sequence[str]) -> np.ndarray:
        return encoded.encode(list(sentences), batch_size=batch_size)

    return InputEncoding(name=encoded.encoder, vectors=encoded.vectors("test"), encode=encode,
                         key=encoded.keys["test"])


def _metric_score(ctx: RunContext, component: Component, metric: Metric,
                  statistics: list[np.ndarray]) -> MetricScore:
    """`harness.stats.metric_score` of one statistics array per decoder seed, with the metric's
    own direction (ranks and reports read it; a metric says so when lower is better) and
    signature."""
    from harness.stats import metric_score

    with plugin_call(component.plugin, f"metric {component.name!r}: corpus_score"):
        return metric_score(metric, statistics, seed=ctx.spec.seed, resamples=RESAMPLES,
                            signature=metric_signature(metric))


def _score_artifact(ctx: RunContext, component: Component, samples: Samples,
                    encoded: Encoded | None, decoding: Decoding | None) -> Path:
    """The score artifact's directory, built when the cache lacks it."""
    plugin = component.plugin
    metric = _metric(ctx, component)
    needs = component.info.needs  # declared once, when it registers (`harness list`)
    parts: dict[str, Any] = {"version": VERSION, "samples": samples.key,
                             "metric": component.identity(), "seed": ctx.spec.seed}
    if "encoder" in needs:
        if encoded is None or encoded.encoder != samples.encoder:
            raise HarnessError(f"metric {component.name!r} needs the encoder: score it with "
                               "the `Encoded` the samples were generated from (harness.executors.jobs "
                               "does)")
        # The samples' key already follows the encoder; the statistics also read the test
        # vectors and re-encode with the encoder, so their key names those vectors outright.
        parts["encoded"] = encoded.keys["test"]
    if {"decoder", "unconditional"} & set(needs) and (
            decoding is None or (decoding.trained.encoder, decoding.trained.decoder)
            != (samples.encoder, samples.decoder)):
        raise HarnessError(f"metric {component.name!r} needs the decoder: score it with the "
                           "`Decoding` the samples were generated with (harness.executors.jobs does)")
    unconditional = None
    if "unconditional" in needs and decoding is not None:
        unconditional = unconditional_likelihood(ctx, decoding)
        parts["unconditional"] = unconditional.key

    def build(directory: Path) -> dict[str, Any]:
        refs, hyps = samples.references, samples.hypotheses
        fields: dict[str, Any] = {}
        for name in required_fields(metric):
            if any(name not in record for record in samples.records):
                raise PluginError(plugin, f"metric {component.name!r} requires the sample "
                                          f"field {name!r}, which the samples lack")
            fields[name] = [record[name] for record in samples.records]
        if "encoder" in needs and encoded is not None:
            fields["encoder"] = _input_encoding(encoded, encode_batch_size(ctx.spec))
        if "decoder" in needs and decoding is not None:
            fields["decoder"] = decoder_likelihood(ctx, decoding)
        if unconditional is not None:
            fields["unconditional"] = unconditional
        with plugin_call(plugin, f"metric {component.name!r}: sentence_statistics"):
            stats = np.asarray(metric.sentence_statistics(refs, hyps, **fields),
                               dtype=np.float64)
        if stats.ndim != 2 or stats.shape[0] != len(refs):
            raise PluginError(plugin, f"metric {component.name!r} returned statistics of "
                                      f"shape {stats.shape}; expected ({len(refs)}, k)")
        np.save(directory / STATISTICS_FILE, stats)
        if "encoder" in fields and has_chance_level(metric):
            encoding = fields["encoder"]
            with plugin_call(plugin, f"metric {component.name!r}: chance_statistics"):
                chance = np.asarray(metric.chance_statistics(  # type: ignore[attr-defined]
                    encoding, unrelated_pairing(len(refs), ctx.spec.seed)), dtype=np.float64)
            if chance.shape != stats.shape:
                raise PluginError(plugin, f"metric {component.name!r} returned chance "
                                          f"statistics of shape {chance.shape}; expected "
                                          f"{stats.shape}, as its statistics")
            np.save(directory / CHANCE_FILE, chance)
        score = _metric_score(ctx, component, metric, [stats])
        return {"score": json_safe(score.model_dump(mode="json"))}

    return ctx.cache.produce("score", parts, build,
                             label=f"{component.name} {samples.encoder} -> {samples.decoder}")


def scored(ctx: RunContext, component: Component, samples: Samples,
           encoded: Encoded | None = None, decoding: Decoding | None = None
           ) -> tuple[MetricScore, Path]:
    """Return the metric's score of the samples with its interval (`harness.stats.metric_score`
    over the one decoder that generated them) and the file of its per-sentence statistics
    (n, k), in test-set order (`numpy.save` format), from one score artifact, computed when the
    cache lacks it. A path, so a job can hand the statistics to the process that compares
    encoders. `encoded` is the encoder's vectors the samples were generated from: handed on,
    as `InputEncoding`, only to a metric that declares it needs the encoder; `decoding`, what
    generated the samples, only to one that needs the decoder (`DecoderLikelihood`) or the
    unconditional model (`UnconditionalLikelihood`, `harness.stages.likelihood`)."""
    started = time.perf_counter()
    directory = _score_artifact(ctx, component, samples, encoded, decoding)
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
