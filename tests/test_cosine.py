"""The `cosine` metric and the contract behind it: a metric registered with `needs=("encoder",)`
is handed the encoder under test by the score stage (and no other metric is), `harness list`
says so, and a run scores it the same whichever executor's job path computes it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from harness.errors import DataError, HarnessError
from harness.protocols import (
    EncoderAwareMetric,
    InputEncoding,
    Metric,
    Options,
    unrelated_pairing,
)
from harness.registry.components import RegistrationError, make_info
from harness.stages.base import RunContext
from harness.stages.encode import Encoded
from harness.stages.generate import Samples
from harness.stages.score import scored
from harness.util.cache import Cache
from harness.util.vectors import row_cosines
from harness_plugins.encoders.pooling import AverageEncoder
from harness_plugins.metrics.cosine import CosineMetric


class WordVocab:
    """A fake subword vocabulary: one piece per whitespace token, with chosen 2-D vectors."""

    pieces = ["<pad>", "a", "b", "c", "d"]
    vectors = np.array([[0, 0], [1, 2], [3, -1], [0, 4], [-2, 0]], dtype=np.float32)

    def encode(self, sentences):
        return [[self.pieces.index(token) for token in s.split()] for s in sentences]


class CountingEncoder(AverageEncoder):
    """avg over `WordVocab`, remembering every sentence it was asked to encode."""

    def __init__(self) -> None:
        super().__init__(WordVocab(), Options())
        self.seen: list[str] = []

    def encode(self, sentences, batch_size=256):
        self.seen += list(sentences)
        return super().encode(sentences, batch_size=batch_size)


class RandomEncoder:
    """A control like `random-gaussian`: fresh random vectors on every call."""

    dim = 64

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def fingerprint(self) -> str:
        return "random"

    def encode(self, sentences, batch_size=256):
        return self.rng.normal(size=(len(sentences), self.dim)).astype(np.float32)


def encoding(encoder: Any, references: list[str], dtype: str = "float32") -> InputEncoding:
    vectors = np.asarray(encoder.encode(references)).astype(dtype)
    return InputEncoding(name="avg", vectors=vectors, encode=encoder.encode, key="k")


def statistics(references: list[str], hypotheses: list[str], encoder: Any = None,
               dtype: str = "float32") -> np.ndarray:
    encoder = encoder or AverageEncoder(WordVocab(), Options())
    return CosineMetric().sentence_statistics(references, hypotheses,
                                              encoder=encoding(encoder, references, dtype))


# --- the metric ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_an_output_identical_to_its_input_scores_exactly_one(dtype):
    references = ["a b c d", "b", "a a c", "d c", "c"]
    stats = statistics(references, list(references), dtype=dtype)
    np.testing.assert_allclose(stats[:, 0], 1.0, atol=1e-6)
    metric = CosineMetric()
    assert float(metric.corpus_score(stats.sum(0), len(stats))) == pytest.approx(100.0, abs=1e-4)


def test_cosine_by_hand():
    # a=(1,2) b=(3,-1) c=(0,4) d=(-2,0); avg("a b") = (2, .5), avg("a c") = (.5, 3)
    stats = statistics(["a b", "a", "a b", "a"], ["a c", "b", "d", "c a"])
    expected = [(2 * .5 + .5 * 3) / (math.hypot(2, .5) * math.hypot(.5, 3)),  # 0.3987
                (1 * 3 + 2 * -1) / (math.sqrt(5) * math.sqrt(10)),  # 1 / sqrt(50)
                (2 * -2) / (math.hypot(2, .5) * 2),  # -0.9701
                (1 * .5 + 2 * 3) / (math.sqrt(5) * math.hypot(.5, 3))]
    np.testing.assert_allclose(stats[:, 0], expected, rtol=1e-6)
    assert float(CosineMetric().corpus_score(stats.sum(0), 4)) == pytest.approx(
        100 * sum(expected) / 4)


def test_an_empty_output_has_no_direction_and_scores_zero():
    # avg of no subwords is the zero vector (pooling.average_pool)
    assert statistics(["a b", "c"], ["", "c"])[:, 0].tolist() == pytest.approx([0.0, 1.0])
    np.testing.assert_array_equal(row_cosines(np.zeros((1, 3)), np.ones((1, 3))), [0.0])


def test_a_random_control_encoder_scores_about_zero():
    references = [f"sentence {i}" for i in range(400)]
    stats = statistics(references, list(references), encoder=RandomEncoder())
    assert abs(float(CosineMetric().corpus_score(stats.sum(0), len(stats)))) < 2.0


def test_it_needs_the_encoder_and_the_right_number_of_vectors():
    metric = CosineMetric()
    with pytest.raises(DataError, match="encoder"):
        metric.sentence_statistics(["a"], ["a"])
    encoder = AverageEncoder(WordVocab(), Options())
    with pytest.raises(DataError, match="input vectors"):
        metric.sentence_statistics(["a", "b"], ["a", "b"], encoder=encoding(encoder, ["a"]))


def test_it_declares_the_encoder_contract():
    metric = CosineMetric()
    assert isinstance(metric, Metric) and isinstance(metric, EncoderAwareMetric)


# --- registration and `harness list` -------------------------------------------------------------

def test_only_metrics_register_needs_and_only_ones_the_core_supplies():
    info = make_info("metric", "cosine", lambda o, c: None, needs=("encoder",))
    assert info.needs == ("encoder",)
    assert make_info("metric", "id", lambda o, c: None).needs == ()
    with pytest.raises(RegistrationError, match="only metrics"):
        make_info("encoder", "avg", lambda o, c: None, needs=("encoder",))
    with pytest.raises(RegistrationError, match="cannot supply"):
        make_info("metric", "x", lambda o, c: None, needs=("gpu",))


def test_harness_list_says_that_cosine_needs_the_encoder():
    from click.testing import CliRunner

    from harness.cli import main

    result = CliRunner().invoke(main, ["list", "--json"])
    assert result.exit_code == 0, result.output
    metrics = {entry["name"]: entry for entry in json.loads(result.stdout)["metrics"]}
    assert metrics["cosine"]["needs"] == ["encoder"]
    assert metrics["token-f1"]["needs"] == [] and metrics["id"]["needs"] == []
    assert metrics["cosine"]["status"] == "ok"
    text = CliRunner().invoke(main, ["list"]).stdout
    header = next(line for line in text.splitlines() if line.split()[:5] == [
        "name", "plugin", "version", "status", "needs"])
    row = next(line for line in text.splitlines() if line.split()[:1] == ["cosine"])
    assert row[header.index("needs"):].startswith("encoder")
    assert next(line for line in text.splitlines()
                if line.split()[:1] == ["token-f1"])[header.index("needs"):].startswith("-")


# --- the score stage -----------------------------------------------------------------------------

REFS = ["a b", "a", "c d", "b b"]
HYPS = ["a c", "b", "c d", ""]


class SpyMetric:
    """Records the keywords the score stage calls it with."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def sentence_statistics(self, references, hypotheses, **keywords):
        self.calls.append(keywords)
        return np.ones((len(references), 1))

    def corpus_score(self, totals, count):
        return 100.0 * np.asarray(totals)[..., 0] / count


def component(name: str, metric: object, needs: tuple[str, ...] = ()) -> SimpleNamespace:
    return SimpleNamespace(name=name, plugin="test-plugin",
                           info=SimpleNamespace(kind="metric", needs=needs),
                           identity=lambda: {"name": name},
                           build=lambda context, purpose="": metric)


def encoded(tmp_path: Path, model: Any, key: str = "encoded-test") -> Encoded:
    directory = tmp_path / key
    directory.mkdir(parents=True, exist_ok=True)
    np.save(directory / "test.npy", np.asarray(model.encode(REFS), dtype=np.float32))
    return Encoded(encoder="avg", keys={"train": "encoded-train", "test": key}, dim=2,
                   directories={"test": directory}, model=model, plugin="enc-plugin")


def samples(tmp_path: Path) -> Samples:
    records = [{"index": i, "reference": r, "reference_raw": r, "hypothesis": h}
               for i, (r, h) in enumerate(zip(REFS, HYPS))]
    return Samples(encoder="avg", decoder="lstm", key="samples", path=tmp_path / "s.jsonl",
                   records=records, sentences_per_s=1.0)


def context(tmp_path: Path) -> RunContext:
    spec = SimpleNamespace(seed=7, encode=SimpleNamespace(batch_size=3))
    return RunContext(spec=spec, cache=Cache(root=tmp_path / "cache"))  # type: ignore[arg-type]


def test_the_score_stage_hands_the_encoder_only_to_metrics_that_declare_it(tmp_path):
    ctx, model = context(tmp_path), CountingEncoder()
    vectors = encoded(tmp_path, model)
    model.seen.clear()
    plain, aware = SpyMetric(), SpyMetric()
    scored(ctx, component("plain", plain), samples(tmp_path), vectors)  # type: ignore[arg-type]
    assert plain.calls == [{}] and model.seen == []
    scored(ctx, component("aware", aware, ("encoder",)), samples(tmp_path), vectors)  # type: ignore[arg-type]
    (keywords,) = aware.calls
    assert set(keywords) == {"encoder"}
    handed = keywords["encoder"]
    assert isinstance(handed, InputEncoding) and handed.name == "avg"
    np.testing.assert_array_equal(handed.vectors, vectors.vectors("test"))
    # `encode` is the encode stage's own encoder object, batched by the spec's encode section
    np.testing.assert_array_equal(handed.encode(["a c"]), model.encode(["a c"]))
    assert model.seen[-2:] == ["a c", "a c"]


def test_cosine_through_the_score_stage(tmp_path):
    ctx, model = context(tmp_path), CountingEncoder()
    vectors = encoded(tmp_path, model)
    model.seen.clear()
    score, path = scored(ctx, component("cosine", CosineMetric(), ("encoder",)),  # type: ignore[arg-type]
                         samples(tmp_path), vectors)
    assert model.seen == HYPS  # the outputs, re-encoded by the same encoder object
    expected = [(2 * .5 + .5 * 3) / (math.hypot(2, .5) * math.hypot(.5, 3)),
                1 / math.sqrt(50), 1.0, 0.0]
    np.testing.assert_allclose(np.load(path)[:, 0], expected, rtol=1e-6)
    assert score.value == pytest.approx(100 * sum(expected) / 4)
    assert (score.interval, score.support) == ("bootstrap", 4)
    assert score.ci95[0] <= score.value <= score.ci95[1]
    # beside the statistics: each input's cosine to an unrelated input (the chance level)
    inputs = vectors.vectors("test")
    unrelated = unrelated_pairing(len(REFS), 7)
    np.testing.assert_allclose(np.load(path.with_name("chance.npy"))[:, 0],
                               row_cosines(inputs[unrelated], inputs), rtol=1e-6)


def test_the_cosine_cache_key_follows_the_encoded_vectors(tmp_path):
    ctx, model = context(tmp_path), CountingEncoder()
    cosine = component("cosine", CosineMetric(), ("encoder",))
    plain = component("plain", SpyMetric())
    first, other = encoded(tmp_path, model, "vectors-1"), encoded(tmp_path, model, "vectors-2")
    for metric in (cosine, plain):
        scored(ctx, metric, samples(tmp_path), first)  # type: ignore[arg-type]
    builds = ctx.cache.builds
    scored(ctx, cosine, samples(tmp_path), first)  # type: ignore[arg-type]
    scored(ctx, plain, samples(tmp_path), other)  # type: ignore[arg-type]
    assert ctx.cache.builds == builds  # hits: a plain metric's key ignores the vectors
    scored(ctx, cosine, samples(tmp_path), other)  # type: ignore[arg-type]
    assert ctx.cache.builds == builds + 1


def test_the_score_stage_refuses_a_metric_needing_the_encoder_without_it(tmp_path):
    ctx = context(tmp_path)
    with pytest.raises(HarnessError, match="needs the encoder"):
        scored(ctx, component("cosine", CosineMetric(), ("encoder",)), samples(tmp_path))  # type: ignore[arg-type]


# --- a run, through each executor's job path ------------------------------------------------------

SPEC = """
name: cosine
seed: 3
device: cpu
corpus:
  train: {generate: quickstart, sentences: 400}
  test: {generate: quickstart, sentences: 30, seed: 9}
  normalise: {lowercase: true, digits: zero}
vocab: {bpe_size: 200, dim: 16, epochs: 1}
encoders: [avg]
decoders: [{name: mos-lstm, hidden: 32, epochs: 1, batch_size: 16, lr: 0.01}]
generation: {beam: 2, max_len: 12, length_penalty: mean}
metrics: [token-f1, cosine]
report: {formats: [md]}
"""


@pytest.mark.slow
@pytest.mark.usefixtures("one_thread")
def test_a_run_scores_cosine_alike_in_the_local_and_the_ray_job_path(tmp_path):
    """The local executor scores in this process; the Ray executor runs `run_encoder_job` in a
    worker, against a cache where the driver prepared only the corpus and vocabulary. Both hand
    the job's own encoder to cosine, and agree."""
    from harness.executors.jobs import run_encoder_job
    from harness.registry.loader import load_registry
    from harness.runner import run_spec
    from harness.spec import load_spec
    from harness.stages.corpus import prepare_corpus
    from harness.stages.encode import encode_corpus
    from harness.stages.vocab import prepare_vocab

    (tmp_path / "spec.yaml").write_text(SPEC)
    spec = load_spec(tmp_path / "spec.yaml", registry=load_registry())
    local = run_spec(spec, tmp_path / "run", cache=Cache(tmp_path / "local")).to_json()
    (run,) = local["runs"]
    assert run["metrics"]["cosine"]["interval"] == "bootstrap"

    driver = RunContext(spec=spec, cache=Cache(tmp_path / "shared"))
    corpus = prepare_corpus(driver)
    vocab = prepare_vocab(driver, corpus)
    outcome = run_encoder_job(spec, "avg", tmp_path / "shared")
    (job,) = outcome.runs
    assert job.metrics["cosine"].value == pytest.approx(run["metrics"]["cosine"]["value"])
    assert job.metrics["cosine"].ci95 == pytest.approx(run["metrics"]["cosine"]["ci95"])

    # the statistics are the cosines of the re-encoded outputs to the stored input vectors
    (path,) = outcome.statistics["mos-lstm"]["cosine"]
    (samples_file,) = outcome.samples["mos-lstm"]
    hypotheses = [json.loads(line)["hypothesis"] for line in samples_file.read_text().splitlines()]
    assert any(hypotheses)  # the check below is not all zero vectors
    vectors = encode_corpus(driver, spec.components("encoder")[0], corpus, vocab)
    expected = row_cosines(vectors.encode(hypotheses), vectors.vectors("test"))
    np.testing.assert_allclose(np.load(path)[:, 0], expected, rtol=1e-5, atol=1e-6)
