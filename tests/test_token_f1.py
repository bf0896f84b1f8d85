"""Token F1 (`token-f1`, `token-f1:raw`): bag-of-tokens precision, recall and F1 against
hand-computed cases, its edge cases, the raw view, registration, and its bootstrap interval
through the score stage."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from pydantic import ValidationError

from harness.protocols import BuildContext, Metric, Options, metric_signature
from harness.stages.base import RunContext
from harness.stages.generate import Samples
from harness.stages.score import scored
from harness.testing import check_metric
from harness.util.cache import Cache
from harness_plugins.metrics import ContentOptions, TextOptions, register_metrics
from harness_plugins.metrics.tokens import TokenF1Metric, token_prf


def registered() -> dict[str, dict]:
    calls: dict[str, dict] = {}
    register_metrics(lambda name, factory, **kwargs: calls.update({name: {"factory": factory,
                                                                           **kwargs}}))
    return calls


def corpus(metric: TokenF1Metric, references: list[str], hypotheses: list[str], **fields) -> float:
    stats = metric.sentence_statistics(references, hypotheses, **fields)
    return float(metric.corpus_score(stats.sum(axis=0), len(stats)))


# --- per pair, by hand ---------------------------------------------------------------------------

@pytest.mark.parametrize("reference, hypothesis, expected", [
    # identical and permuted: every token recovered
    ("the cat sat", "the cat sat", (1, 1, 1)),
    ("the cat sat", "sat the cat", (1, 1, 1)),
    # a shorter output: overlap 2 of 2 output tokens, 2 of 3 input tokens
    ("the cat sat", "the cat", (1, 2 / 3, 0.8)),
    # repeated tokens count as often as both sides have them: the x3 vs the x2 -> overlap 2 + 1
    ("the cat sat on the mat", "the the the cat", (3 / 4, 3 / 6, 0.6)),
    # multiset, not set: a a b vs a b b -> min(2,1) + min(1,2) = 2 (a set F1 would say 1)
    ("a a b", "a b b", (2 / 3, 2 / 3, 2 / 3)),
    # nothing shared
    ("a b", "c d", (0, 0, 0)),
    # whitespace runs and surrounding space are not tokens
    ("the cat", "  the   cat ", (1, 1, 1)),
    # an empty output recovers nothing; both empty (or blank) is a perfect match (SQuAD 2.0)
    ("a b", "", (0, 0, 0)),
    ("", "a b", (0, 0, 0)),
    ("", "", (1, 1, 1)),
    ("  ", "", (1, 1, 1)),
    # tokens are compared as given: case matters (normalisation is upstream)
    ("The cat", "the cat", (0.5, 0.5, 0.5)),
])
def test_token_prf_by_hand(reference, hypothesis, expected):
    assert token_prf(reference, hypothesis) == pytest.approx(expected)


def test_statistics_are_precision_recall_f1_and_the_score_is_the_mean_f1_in_percent():
    references = ["the cat sat", "the cat sat on the mat", "a b", ""]
    hypotheses = ["the cat", "the the the cat", "c d", ""]
    metric = TokenF1Metric()
    stats = metric.sentence_statistics(references, hypotheses)
    np.testing.assert_allclose(stats, [[1, 2 / 3, 0.8], [0.75, 0.5, 0.6], [0, 0, 0], [1, 1, 1]])
    assert corpus(metric, references, hypotheses) == pytest.approx(100 * (0.8 + 0.6 + 0 + 1) / 4)
    # vectorised over resamples (the bootstrap scores many totals at once)
    totals = np.stack([stats.sum(0), stats[:2].sum(0)])
    np.testing.assert_allclose(metric.corpus_score(totals, 4), [60.0, 35.0])


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError):
        TokenF1Metric().sentence_statistics(["a", "b"], ["a"])


# --- raw text ------------------------------------------------------------------------------------

NORMALISED = ["the cat sat .", "anna paid 000 euros"]
RAW = ["The cat sat .", "Anna paid 120 euros"]
OUTPUTS = ["the cat sat .", "anna paid 000 euros"]
# normalised: F1 1 and 1 -> 100; raw: 3 of 4 tokens (F1 .75) and 2 of 4 (F1 .5) -> 62.5


def test_raw_text_compares_with_the_raw_input():
    assert corpus(TokenF1Metric(), NORMALISED, OUTPUTS) == pytest.approx(100.0)
    metric = TokenF1Metric(text="raw")
    assert metric.requires == ("reference_raw",)
    assert corpus(metric, NORMALISED, OUTPUTS, reference_raw=RAW) == pytest.approx(62.5)
    with pytest.raises(ValueError, match="reference_raw"):
        metric.sentence_statistics(NORMALISED, OUTPUTS)
    with pytest.raises(ValueError):
        TokenF1Metric(text="lowercase")


def test_registered_as_token_f1_and_its_raw_view():
    calls = registered()
    assert calls["token-f1"]["options"] is TextOptions
    assert calls["token-f1:content"]["options"] is ContentOptions
    assert ContentOptions().tokenize == "13a"
    assert calls["token-f1:raw"]["options"] is Options
    assert "needs" not in calls["token-f1"] and "needs" not in calls["token-f1:raw"]
    normalised = calls["token-f1"]["factory"](TextOptions(), BuildContext())
    raw = calls["token-f1:raw"]["factory"](Options(), BuildContext())
    explicit = calls["token-f1"]["factory"](TextOptions(text="raw"), BuildContext())
    assert isinstance(normalised, TokenF1Metric) and isinstance(raw, TokenF1Metric)
    assert (normalised.requires, raw.requires, explicit.requires) == (
        (), ("reference_raw",), ("reference_raw",))
    with pytest.raises(ValidationError):
        TextOptions(text="lowercase")


def test_passes_the_conformance_kit_and_signs_its_configuration():
    metric = TokenF1Metric()
    assert isinstance(metric, Metric)
    check_metric(metric)
    assert metric_signature(metric) == ("tokens:whitespace|bag:multiset|text:normalised|"
                                        "empty-pair:1|mean:sentence")


# --- through the score stage ---------------------------------------------------------------------

def test_scored_with_a_bootstrap_interval_over_sentences(tmp_path: Path):
    references = ["the cat sat", "a b c", "x y", "one two"] * 5
    hypotheses = ["the cat sat", "c b", "z", "one one two"] * 5
    records = [{"index": i, "reference": r, "reference_raw": r.upper(), "hypothesis": h}
               for i, (r, h) in enumerate(zip(references, hypotheses))]
    samples = Samples(encoder="avg", decoder="lstm", key="samples", path=tmp_path / "s.jsonl",
                      records=records, sentences_per_s=1.0)
    ctx = RunContext(spec=SimpleNamespace(seed=7), cache=Cache(root=tmp_path / "cache"))  # type: ignore[arg-type]
    for name, metric, expected in [("token-f1", TokenF1Metric(), (1 + 0.8 + 0 + 0.8) / 4),
                                   ("token-f1:raw", TokenF1Metric(text="raw"), 0.0)]:
        component = SimpleNamespace(name=name, plugin="harness-metrics",
                                    info=SimpleNamespace(kind="metric", needs=()),
                                    identity=lambda name=name: {"name": name},
                                    build=lambda context, purpose="", metric=metric: metric)
        score, path = scored(ctx, component, samples)  # type: ignore[arg-type]
        assert score.value == pytest.approx(100 * expected)
        assert (score.interval, score.support) == ("bootstrap", 20)
        assert score.ci95[0] <= score.value <= score.ci95[1]
        assert np.load(path).shape == (20, 3)


def test_content_word_f1_by_hand() -> None:
    from harness_plugins.metrics.tokens import content_tokens

    assert content_tokens("the cat sat on the mat .") == ["cat", "sat", "mat"]
    # content: cat sat mat against cat sat rug: overlap 2 of 3 each way
    assert token_prf("the cat sat on the mat .", "a cat sat on a rug .", content=True) == (
        pytest.approx(2 / 3), pytest.approx(2 / 3), pytest.approx(2 / 3))
    # all tokens: overlap cat sat on . = 4 of 7 each way
    assert token_prf("the cat sat on the mat .", "a cat sat on a rug .")[2] == pytest.approx(4 / 7)
    # only function words on both sides: both empty, F1 1 (SQuAD's rule)
    assert token_prf("it is .", "is it", content=True) == (1.0, 1.0, 1.0)
    metric = TokenF1Metric(content=True)
    check_metric(metric)
    assert "words:content" in metric.signature()


def test_13a_tokens_split_punctuation_off_words() -> None:
    """"plane." is "plane" and "." in 13a tokens (sacrebleu's tokeniser, the reference), so the
    last word of a sentence counts as within one; a whitespace token keeps the stop."""
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    from harness.text.words import words
    from harness_plugins.metrics.tokens import content_tokens

    sentence = "Tom bought a plane. He didn't fly it, ever!"
    assert words(sentence) == Tokenizer13a()(sentence).split()
    assert words(sentence) == ["Tom", "bought", "a", "plane", ".", "He", "didn't", "fly",
                               "it", ",", "ever", "!"]
    assert content_tokens("tom bought a plane.", "13a") == ["tom", "bought", "plane"]
    assert content_tokens("tom bought a plane.") == ["tom", "bought", "plane."]
    # "plane." against "plane": 2 of 3 content tokens shared in whitespace tokens, all in 13a
    assert token_prf("tom saw a plane.", "tom saw a plane", content=True)[2] == pytest.approx(2 / 3)
    assert token_prf("tom saw a plane.", "tom saw a plane", content=True,
                     tokenize="13a") == (1.0, 1.0, 1.0)
    metric = TokenF1Metric(content=True, tokenize="13a")
    check_metric(metric)
    assert metric.signature().startswith("tokens:13a|")
