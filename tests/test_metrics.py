"""Tests of the first-party metrics: Id, PERM, Id/PERM (hand-computed) and BLEU (vs sacrebleu)."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
import sacrebleu
from pydantic import ValidationError

from harness.protocols import BuildContext, Metric, Options
from harness.testing import check_metric, check_registration
from harness_plugins.metrics import BleuOptions, ExactMatchOptions, register_metrics
from harness_plugins.metrics.bleu import BleuMetric, bleu_from_statistics
from harness_plugins.metrics.overlap import (
    IdentityMetric,
    IdentityPerPermutationMetric,
    PermutationMetric,
)


def corpus(metric: Metric, references: list[str], hypotheses: list[str]) -> float:
    stats = metric.sentence_statistics(references, hypotheses)
    return float(metric.corpus_score(stats.sum(axis=0), len(stats)))


# --- registration ------------------------------------------------------------------------------

def registered() -> dict[str, dict]:
    calls: dict[str, dict] = {}

    def register(name, factory, **kwargs):
        calls[name] = {"factory": factory, **kwargs}

    register_metrics(register)
    return calls


def test_registers_the_paper_metrics_with_options_classes():
    calls = registered()
    assert set(calls) == {"id", "perm", "id-perm", "id:raw", "perm:raw", "id-perm:raw", "bleu",
                          "mover", "bertscore", "ppl", "token-f1", "token-f1:raw", "token-f1:content",
                          "cosine", "info", "retrieval", "retrieval:pmi"}
    assert calls["retrieval:pmi"]["needs"] == ("decoder", "unconditional")
    for call in calls.values():
        assert issubclass(call.get("options", Options), Options)
        assert call["description"]
    assert calls["bleu"]["options"] is BleuOptions
    for name in ("id", "perm", "id-perm"):
        assert calls[name]["options"] is ExactMatchOptions
    for name in ("bleu", "mover", "bertscore"):
        assert calls[name]["availability"]() is None


def test_registration_passes_the_conformance_kit():
    import harness_plugins.metrics as module

    check_registration(module)


@pytest.mark.parametrize("name", ["id", "perm", "id-perm", "id:raw", "perm:raw", "id-perm:raw",
                                  "bleu"])
def test_factories_build_protocol_metrics(name):
    call = registered()[name]
    metric = call["factory"](call["options"](), BuildContext())
    assert isinstance(metric, Metric)
    assert getattr(metric, "requires", ()) == (("reference_raw",) if ":raw" in name else ())


def test_registration_imports_nothing_heavy():
    heavy = ["sacrebleu", "numpy", "torch", "transformers", "ot", "bert_score", "matplotlib"]
    code = ("import sys, harness_plugins.metrics as m; m.register_metrics(lambda *a, **k: None); "
            f"print(*[name in sys.modules for name in {heavy!r}])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"] * len(heavy)


def test_metrics_without_options_refuse_unknown_keys():
    with pytest.raises(ValidationError):
        Options(beam=3)


def test_bleu_options_validate():
    assert BleuOptions().tokenize == "13a"
    with pytest.raises(ValidationError):
        BleuOptions(tokenize="no-such-tokenizer")
    with pytest.raises(ValidationError):
        BleuOptions(smooth_method="magic")
    with pytest.raises(ValidationError):
        BleuOptions(lowercse=True)


# --- Id, PERM, Id/PERM -------------------------------------------------------------------------

REFS = ["the cat sat", "a b c d", "x y", "one two", "hello world"]
HYPS = ["the cat sat", "d c b a", "x y y", "one", "  hello   world "]
# identical:    1, 0, 0, 0, 1 (spacing is ignored) -> Id = 40
# permutation:  1, 1, 0, 0, 1 (identical counts; "x y y" and "one" differ in length) -> PERM = 60
# Id/PERM = 2 / 3 * 100


def test_id_hand_computed():
    metric = IdentityMetric()
    stats = metric.sentence_statistics(REFS, HYPS)
    assert stats.shape == (5, 1)
    assert stats[:, 0].tolist() == [1, 0, 0, 0, 1]
    assert corpus(metric, REFS, HYPS) == pytest.approx(40.0)


def test_perm_counts_identical_and_rejects_other_lengths():
    metric = PermutationMetric()
    stats = metric.sentence_statistics(REFS, HYPS)
    assert stats[:, 0].tolist() == [1, 1, 0, 0, 1]
    assert corpus(metric, REFS, HYPS) == pytest.approx(60.0)


def test_perm_compares_token_multisets_not_sets():
    metric = PermutationMetric()
    stats = metric.sentence_statistics(["a a b", "a b", "the dog", ""], ["a b b", "b a", "dog the", ""])
    assert stats[:, 0].tolist() == [0, 1, 1, 1]


def test_id_perm_hand_computed():
    metric = IdentityPerPermutationMetric()
    stats = metric.sentence_statistics(REFS, HYPS)
    assert stats.tolist() == [[1, 1], [0, 1], [0, 0], [0, 0], [1, 1]]
    assert corpus(metric, REFS, HYPS) == pytest.approx(200.0 / 3.0)


def test_id_perm_is_undefined_without_permutations():
    metric = IdentityPerPermutationMetric()
    assert math.isnan(corpus(metric, ["a b", "c"], ["a", "d"]))
    batch = metric.corpus_score(np.array([[0.0, 0.0], [1.0, 4.0]]), 2)
    assert math.isnan(batch[0]) and batch[1] == 25.0


def test_id_perm_interval_is_exact_for_few_permutations():
    """2 identical outputs among 300, the only permutations: Id/PERM = 100 rests on 2 trials, so
    its interval is Clopper-Pearson's for 2 of 2 (scipy), not the bootstrap's [100, 100]."""
    from scipy.stats import binomtest

    from harness.stats import metric_score

    stats = np.zeros((300, 2))
    stats[:2] = 1.0  # [identical, permutation]
    score = metric_score(IdentityPerPermutationMetric(), [stats], seed=3)
    exact = binomtest(2, 2).proportion_ci(confidence_level=0.95, method="exact")
    assert (score.value, score.interval, score.support) == (100.0, "clopper-pearson", 2)
    assert score.ci95 == pytest.approx((100.0 * exact.low, 100.0))
    assert score.ci95[0] == pytest.approx(100.0 * 0.025 ** 0.5)  # k = n: low = (a/2)^(1/n)
    assert score.undefined_resamples is None  # an exact interval draws no resamples


def test_id_perm_bootstrap_counts_resamples_without_permutations():
    """The percentile bootstrap of the same case is still the point 100, but the resamples that
    drew neither permutation are counted, not dropped: the same draws, counted independently."""
    from harness.stats import bootstrap_ci

    stats = np.zeros((300, 2))
    stats[:2] = 1.0
    interval = bootstrap_ci(IdentityPerPermutationMetric(), stats, resamples=1000, seed=3)
    counts = np.random.default_rng(3).multinomial(300, np.full(300, 1 / 300), size=1000)
    expected = int((counts[:, :2].sum(axis=1) == 0).sum())  # about 1000 * (298/300)^300 = 134
    assert 80 < expected < 200
    assert (interval.low, interval.high, interval.undefined) == (100.0, 100.0, expected)


def test_id_perm_without_permutations_has_the_whole_range():
    from harness.stats import bootstrap_ci, metric_score

    score = metric_score(IdentityPerPermutationMetric(), [np.zeros((5, 2))], seed=3)
    assert (score.value, score.ci95, score.support) == (None, (0.0, 100.0), 0)
    interval = bootstrap_ci(IdentityPerPermutationMetric(), np.zeros((5, 2)), seed=3)
    assert math.isnan(interval.low) and math.isnan(interval.high)
    assert interval.undefined == interval.resamples == 1000


# (successes, trials) of REFS/HYPS below: Id 2 of 5 pairs, PERM 3 of 5, Id/PERM 2 of 3 permutations
PROPORTIONS = {"id": (2, 5), "perm": (3, 5), "id-perm": (2, 3)}


@pytest.mark.parametrize("name", ["id", "perm", "id-perm", "id:raw", "perm:raw", "id-perm:raw"])
def test_exact_match_metrics_declare_their_proportion(name):
    from harness.protocols import proportion_counts

    call = registered()[name]
    metric = call["factory"](call["options"](), BuildContext())
    stats = metric.sentence_statistics(REFS, HYPS, reference_raw=REFS)
    successes, trials, scale = proportion_counts(metric, stats.sum(axis=0), len(stats))
    assert (float(successes), float(trials), scale) == (*PROPORTIONS[name.split(":")[0]], 100.0)
    assert float(metric.corpus_score(stats.sum(axis=0), len(stats))) == pytest.approx(
        100.0 * successes / trials)
    # batched over resamples like corpus_score: one (successes, trials) per row of totals
    batch = np.stack([stats.sum(axis=0), stats[:1].sum(axis=0)])
    successes, trials, _ = proportion_counts(metric, batch, len(stats))
    assert successes.shape == trials.shape == (2,)


def test_bleu_is_no_proportion():
    from harness.protocols import proportion_counts

    assert proportion_counts(BleuMetric(), np.zeros(10), 1) is None


def test_comparison_is_case_sensitive_on_the_strings_given():
    assert corpus(IdentityMetric(), ["The cat"], ["the cat"]) == 0.0


@pytest.mark.parametrize("metric", [IdentityMetric(), PermutationMetric(),
                                    IdentityPerPermutationMetric()])
def test_overlap_metrics_refuse_mismatched_lengths(metric):
    with pytest.raises(ValueError):
        metric.sentence_statistics(["a", "b"], ["a"])


@pytest.mark.parametrize("metric", [IdentityMetric(), PermutationMetric(),
                                    IdentityPerPermutationMetric(), BleuMetric()])
def test_metrics_satisfy_the_protocol(metric):
    assert isinstance(metric, Metric)
    check_metric(metric)


# --- raw text ---------------------------------------------------------------------------------

# What the samples hold: the normalised input (lower case, digits -> 0), the raw input, and a
# decoder output, which is always normalised.
NORMALISED = ["the cat sat .", "anna paid 000 euros", "he left", "b a"]
RAW = ["The cat sat .", "Anna paid 120 euros", "he left", "b a"]
OUTPUTS = ["the cat sat .", "anna paid 000 euros", "left he", "a b"]
# normalised: identical 1 1 0 0, permutation 1 1 1 1 -> Id 50, PERM 100, Id/PERM 50
# raw:        identical 0 0 0 0, permutation 0 0 1 1 -> Id 0,  PERM 50,  Id/PERM 0


@pytest.mark.parametrize("metric_class, normalised, raw", [
    (IdentityMetric, 50.0, 0.0),
    (PermutationMetric, 100.0, 50.0),
    (IdentityPerPermutationMetric, 50.0, 0.0),
])
def test_raw_text_compares_with_the_raw_input(metric_class, normalised, raw):
    assert corpus(metric_class(), NORMALISED, OUTPUTS) == pytest.approx(normalised)
    metric = metric_class(text="raw")
    assert metric.requires == ("reference_raw",)
    stats = metric.sentence_statistics(NORMALISED, OUTPUTS, reference_raw=RAW)
    assert float(metric.corpus_score(stats.sum(0), len(stats))) == pytest.approx(raw)


def test_raw_text_needs_the_raw_references():
    metric = IdentityMetric(text="raw")
    with pytest.raises(ValueError, match="reference_raw"):
        metric.sentence_statistics(NORMALISED, OUTPUTS)
    with pytest.raises(ValueError):
        metric.sentence_statistics(NORMALISED, OUTPUTS, reference_raw=RAW[:2])
    with pytest.raises(ValueError):
        IdentityMetric(text="lowercase")
    with pytest.raises(ValidationError):
        ExactMatchOptions(text="lowercase")


def test_the_score_stage_passes_reference_raw_to_raw_metrics():
    # harness.stages.score passes each name in `requires` as a keyword list of sample fields.
    records = [{"reference": n, "reference_raw": r, "hypothesis": h}
               for n, r, h in zip(NORMALISED, RAW, OUTPUTS)]
    metric = PermutationMetric(text="raw")
    fields = {name: [record[name] for record in records] for name in metric.requires}
    stats = metric.sentence_statistics([r["reference"] for r in records],
                                       [r["hypothesis"] for r in records], **fields)
    assert stats[:, 0].tolist() == [0, 0, 1, 1]


# --- BLEU ---------------------------------------------------------------------------------------

BLEU_REFS = [
    "the cat sat on the mat .",
    "a quick brown fox jumps over the lazy dog",
    "hello world",
    "it is raining today in berlin , said the man .",
    "we will see .",
    "The President met the Minister on Tuesday .",
    "numbers like 3.14 and 1,000 are tokenised by 13a",
    "short",
    "one two three",
    "exactly the same sentence here",
    "prices rose by 5 % in 2008 , the report said .",
    "\" the point is , \" stoller adds , \" i 'm not sure .",
    "what ?",
    "she visits italy",
    "Mixed CASE words Here",
    "a b c d e f g h",
    "repeated repeated repeated words",
    "end",
    "the economy grew faster than expected last year",
    "no overlap at all",
]
BLEU_HYPS = [
    "the cat sat on a mat .",
    "the lazy dog jumps over a quick brown fox",
    "",
    "it is raining in berlin today , the man said .",
    "we will see .",
    "the president met the minister on tuesday .",
    "numbers like 3.14 and 1,000 are tokenized by 13a",
    "short",
    "one two",
    "exactly the same sentence here",
    "prices rose 5 % in 2008 , said the report .",
    "\" the point is , \" stoller adds , \" i 'm sure .",
    "what",
    "she is a nurse",
    "mixed case words here",
    "h g f e d c b a",
    "repeated words repeated repeated repeated",
    "",
    "the economy grew faster than expected",
    "completely different tokens entirely",
]


def sacre(hyps: list[str], refs: list[str], **kwargs) -> float:
    return sacrebleu.corpus_bleu(hyps, [refs], **kwargs).score


@pytest.mark.parametrize("lowercase", [False, True])
def test_bleu_equals_sacrebleu_corpus_bleu(lowercase):
    metric = BleuMetric(lowercase=lowercase)
    assert corpus(metric, BLEU_REFS, BLEU_HYPS) == pytest.approx(
        sacre(BLEU_HYPS, BLEU_REFS, lowercase=lowercase), abs=1e-9)


def test_bleu_equals_sacrebleu_on_many_subsets():
    # Subsets exercise brevity penalties, unmatched orders and exact matches in varied mixes.
    rng = np.random.default_rng(3)
    metric = BleuMetric()
    stats = metric.sentence_statistics(BLEU_REFS, BLEU_HYPS)
    for _ in range(40):
        size = int(rng.integers(1, len(BLEU_REFS) + 1))
        pick = rng.choice(len(BLEU_REFS), size=size, replace=False)
        refs, hyps = [BLEU_REFS[i] for i in pick], [BLEU_HYPS[i] for i in pick]
        ours = float(metric.corpus_score(stats[pick].sum(axis=0), size))
        assert ours == pytest.approx(sacre(hyps, refs), abs=1e-9), (refs, hyps)


@pytest.mark.parametrize("pairs", [
    (["hello world"], [""]),                       # empty hypothesis
    (["a b"], ["a b"]),                            # exact match shorter than 4 tokens
    (["a b c"], ["a b"]),                          # short and brief
    (["one two three four"], ["one two three four"]),
    (["a b c d e"], ["a x c y e"]),                # matches only unigrams
    ([""], [""]),
])
def test_bleu_edge_cases_equal_sacrebleu(pairs):
    refs, hyps = pairs
    assert corpus(BleuMetric(), refs, hyps) == pytest.approx(sacre(hyps, refs), abs=1e-9)


@pytest.mark.parametrize("smooth_method", ["exp", "floor", "add-k", "none"])
def test_bleu_smoothing_matches_sacrebleu(smooth_method):
    metric = BleuMetric(smooth_method=smooth_method)
    assert corpus(metric, BLEU_REFS[:6], BLEU_HYPS[:6]) == pytest.approx(
        sacre(BLEU_HYPS[:6], BLEU_REFS[:6], smooth_method=smooth_method), abs=1e-9)


def test_bleu_is_corpus_level_not_one_fused_segment():
    refs, hyps = ["a b c d", "e f g h"], ["a b", "c d e f g h"]
    ours = corpus(BleuMetric(), refs, hyps)
    assert ours == pytest.approx(sacre(hyps, refs), abs=1e-9)
    # Fusing the sentences into one segment (the released code) lets n-grams match across
    # sentence boundaries and scores 100 here; corpus BLEU does not.
    fused = sacre([" ".join(hyps)], [" ".join(refs)])
    assert fused == pytest.approx(100.0) and ours < 60.0


def test_bleu_statistics_layout():
    stats = BleuMetric().sentence_statistics(["the cat sat on the mat"], ["the cat sat"])
    assert stats.shape == (1, 10)
    assert stats[0].tolist() == [3, 6, 3, 2, 1, 0, 3, 2, 1, 0]


def test_bleu_vectorised_scores_equal_a_loop():
    metric = BleuMetric()
    stats = metric.sentence_statistics(BLEU_REFS, BLEU_HYPS)
    rng = np.random.default_rng(0)
    counts = rng.multinomial(len(stats), np.full(len(stats), 1 / len(stats)), size=50)
    totals = counts @ stats
    batch = metric.corpus_score(totals, len(stats))
    assert batch.shape == (50,)
    loop = [float(metric.corpus_score(row, len(stats))) for row in totals]
    assert batch.tolist() == pytest.approx(loop, abs=1e-12)
    # Also over two leading dimensions.
    assert metric.corpus_score(totals.reshape(5, 10, -1), len(stats)).shape == (5, 10)


def test_bleu_from_statistics_equals_sacrebleu_compute_bleu():
    rng = np.random.default_rng(7)
    for _ in range(200):
        totals_n = np.sort(rng.integers(0, 30, size=4))[::-1]
        correct = np.array([rng.integers(0, t + 1) for t in totals_n])
        sys_len, ref_len = int(totals_n[0]), int(rng.integers(1, 40))
        row = np.array([sys_len, ref_len, *correct, *totals_n], dtype=float)
        for smooth in ("exp", "floor", "add-k", "none"):
            expected = sacrebleu.BLEU.compute_bleu(
                correct.tolist(), totals_n.tolist(), sys_len, ref_len, smooth_method=smooth).score
            assert float(bleu_from_statistics(row, smooth)) == pytest.approx(expected, abs=1e-9)


def test_overlap_vectorised_scores_equal_a_loop():
    for metric in (IdentityMetric(), PermutationMetric(), IdentityPerPermutationMetric()):
        stats = metric.sentence_statistics(REFS * 4, HYPS * 4)
        counts = np.random.default_rng(1).multinomial(20, np.full(20, 0.05), size=30)
        totals = counts @ stats
        loop = [float(metric.corpus_score(row, 20)) for row in totals]
        assert metric.corpus_score(totals, 20).tolist() == pytest.approx(loop)


def test_bleu_signature_is_sacrebleus():
    signature = BleuMetric(lowercase=True, tokenize="intl").signature()
    assert signature.startswith("nrefs:1|case:lc|eff:no|tok:intl|smooth:exp|version:")
    assert signature.endswith(sacrebleu.__version__)


def test_bleu_equals_sacrebleu_on_random_pairs():
    rng = np.random.default_rng(11)
    words = ["the", "a", "of", "cat", "dog", "sat", "on", "mat", "and", ",", ".", "is", "was"]

    def sentence(low: int) -> str:
        return " ".join(rng.choice(words, size=int(rng.integers(low, 16))))

    refs = [sentence(1) for _ in range(36)]
    hyps = [sentence(0) for _ in range(36)]
    assert corpus(BleuMetric(), refs, hyps) == pytest.approx(sacre(hyps, refs), abs=1e-9)
