"""Tests of the score stage: each score records how its interval was got, on what support, and
keeps the per-sentence statistics the paired analyses read back (the file `scored` returns)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import binomtest

from harness.results.model import MetricScore
from harness.stages.base import RunContext
from harness.stages.generate import Samples
from harness.stages.score import scored
from harness.util.cache import Cache
from harness_plugins.metrics.bleu import BleuMetric
from harness_plugins.metrics.overlap import IdentityPerPermutationMetric

REFS = ["the cat sat", "a b c", "x y", "one two", "hello world", "red blue green"] * 5
HYPS = ["the cat sat", "c b a", "x", "two", "world hello", "red blue"] * 5
# per 6 pairs: identical 1, permutations 3 ("the cat sat", "c b a", "world hello")


def component(name: str, metric: object) -> SimpleNamespace:
    """What the stage reads of a spec's metric component."""
    return SimpleNamespace(name=name, plugin="test-plugin", info=SimpleNamespace(kind="metric", needs=()),
                           identity=lambda: {"name": name},
                           build=lambda context, purpose="": metric)


def context(tmp_path: Path) -> RunContext:
    return RunContext(spec=SimpleNamespace(seed=7),  # type: ignore[arg-type]
                      cache=Cache(root=tmp_path / "cache"))


def samples(tmp_path: Path) -> Samples:
    records = [{"index": i, "reference": r, "hypothesis": h}
               for i, (r, h) in enumerate(zip(REFS, HYPS))]
    return Samples(encoder="avg", decoder="lstm", key="samples-key", path=tmp_path / "s.jsonl",
                   records=records, sentences_per_s=1.0)


def test_a_proportion_is_scored_with_its_exact_interval_and_trials(tmp_path):
    ctx, metric = context(tmp_path), IdentityPerPermutationMetric()
    score = scored(ctx, component("id-perm", metric), samples(tmp_path))[0]
    exact = binomtest(5, 15).proportion_ci(method="exact")
    assert isinstance(score, MetricScore)
    assert score.value == pytest.approx(100 / 3)
    assert (score.interval, score.support) == ("clopper-pearson", 15)
    assert score.ci95 == pytest.approx((100 * exact.low, 100 * exact.high))


def test_statistics_are_read_back_from_the_same_artifact(tmp_path):
    ctx, metric = context(tmp_path), IdentityPerPermutationMetric()
    first = scored(ctx, component("id-perm", metric), samples(tmp_path))[0]
    builds = ctx.cache.builds
    statistics = np.load(scored(ctx, component("id-perm", metric), samples(tmp_path))[1])
    assert ctx.cache.builds == builds  # a cache hit: same artifact as the score
    assert np.array_equal(statistics, metric.sentence_statistics(REFS, HYPS))
    assert scored(ctx, component("id-perm", metric), samples(tmp_path))[0] == first


def test_statistics_alone_build_the_artifact(tmp_path):
    ctx, metric = context(tmp_path), IdentityPerPermutationMetric()
    statistics = np.load(scored(ctx, component("id-perm", metric), samples(tmp_path))[1])
    assert statistics.shape == (30, 2) and ctx.cache.builds == 1
    scored(ctx, component("id-perm", metric), samples(tmp_path))
    assert ctx.cache.builds == 1


def test_other_metrics_get_the_bootstrap_with_its_undefined_count(tmp_path):
    ctx = context(tmp_path)
    score = scored(ctx, component("bleu", BleuMetric()), samples(tmp_path))[0]
    assert (score.interval, score.support, score.undefined_resamples) == ("bootstrap", 30, 0)
    assert score.signature is not None and score.signature.startswith("nrefs:1")
    assert score.ci95[0] <= score.value <= score.ci95[1]


def test_several_seeds_are_scored_from_their_statistics_files(tmp_path):
    """Two seeds, the second regenerating every sentence: Id/PERM is the mean over the 30
    sentences with a permutation in some seed of each one's fraction over the seeds (per 6
    sentences: 1, 1/2, 1, 1, 1/2, 1), with the exact bounds at those fractions' sum."""
    from harness.stages.score import seeds_score

    ctx, metric = context(tmp_path), IdentityPerPermutationMetric()
    other = Samples(encoder="avg", decoder="lstm", key="other-seed", path=tmp_path / "o.jsonl",
                    records=[{"index": i, "reference": r, "hypothesis": r}
                             for i, r in enumerate(REFS)], sentences_per_s=1.0)
    files = [scored(ctx, component("id-perm", metric), s)[1]
             for s in (samples(tmp_path), other)]
    score = seeds_score(ctx, component("id-perm", metric), files)
    exact = binomtest(25, 30).proportion_ci(method="exact")
    assert score.interval == "korn-graubard"  # the seeds disagree on some sentences
    assert score.value == pytest.approx(100 * 25 / 30)
    assert score.ci95 == pytest.approx((100 * exact.low, 100 * exact.high))
    assert score.seeds is not None and score.seeds.n == 2
    assert score.seeds.values == pytest.approx([100 / 3, 100.0])
    assert score.support == len(REFS)  # sentences, not permutations pooled over seeds
    assert score.seed_variance is False
