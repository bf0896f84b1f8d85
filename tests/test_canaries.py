"""The privacy analysis's canaries without a run: their entities and frames against the corpus
generator's word lists, the refusal of a canary decoding would cut or <unk> would spoil, the
spec's checks, and exposure (Carlini et al. 2019, Sec. 4) by hand and on stub likelihoods."""

from __future__ import annotations

import math
import re
import zlib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import bootstrap

from harness.analyses.privacy.canaries import (
    ENTITY_TYPES,
    canaries,
    canary_set,
    check_canaries,
    lexicon,
    recovered,
    recovery_counts,
)
from harness.analyses.privacy.checks import FLOOR_ENCODER
from harness.analyses.privacy.entities import FRAMES, entity_values, fewest_words, final_stop
from harness.analyses.privacy.exposure import (
    chance_exposure,
    exposure,
    exposures,
    mean_interval,
    rank,
    variant_nll,
)
from harness.errors import HarnessError, SpecError
from harness.registry.loader import load_registry
from harness.spec import load_spec
from harness.synthetic import vocabulary
from tests.test_spec import line_of, write

QUICKSTART = lexicon(entity_values("quickstart"))


def zero_digits(sentence: str) -> str:
    return re.sub("[0-9]", "0", sentence.lower())


# ------------------------------------------------------------------ entities, frames, recovery


def test_the_entities_and_frames_are_the_quickstart_corpus_own_words() -> None:
    """Every word of every canary the quickstart's lists make is a word the generator emits:
    nothing the attacker's training text could not hold."""
    words = vocabulary("quickstart")
    for frame in FRAMES:
        assert {w for w in frame.split() if not w.startswith("{")} <= words
    for kind, values in QUICKSTART.items():
        assert len(values) >= 7, kind
        assert {w.lower() for value in values for w in value.split()} <= words, kind
    found = canaries(40, seed=3, values=QUICKSTART, stop=" .")  # as the generator ends them
    assert {w.lower() for c in found for w in c.sentence.split()} <= words
    assert max(len(c.sentence.split()) for c in found) == fewest_words(40) + 1 == 7


def test_canaries_end_their_sentences_as_the_corpus_does() -> None:
    """Tokenised text (the quickstart's "... Marco .") gets " ."; running text "Marco."."""
    assert final_stop(["anna gave the bread to marco .", "who is it ?", "tom ran ."]) == " ."
    assert final_stop(["Tom ran.", "He stopped .", "Mary laughed.", "Why?"]) == "."
    assert final_stop(["no stop at all"]) == final_stop([]) == "."
    running = canaries(5, seed=3, values=QUICKSTART)
    assert all(c.sentence.endswith(".") and not c.sentence.endswith(" .") for c in running)
    # the entity is matched in 13a tokens: "rome." holds "rome"
    (kind, entity), *_ = running[0].entities
    assert recovered(entity, running[0].sentence) == (True, True)


def test_values_are_normalised_deduplicated_and_kept_only_where_the_vocabulary_writes_them(
        ) -> None:
    zeroed = lexicon(entity_values("quickstart"), zero_digits)
    # the digits 1-20 become "0" and "00"; the number words stay
    assert zeroed["number"][:2] == ("0", "00") and "twelve" in zeroed["number"]
    assert len(zeroed["number"]) == 2 + len(set(QUICKSTART["number"]) - {str(n) for n in
                                                                         range(1, 21)})
    kept = lexicon(entity_values(None), represents=lambda text: "z" not in text.lower())
    assert "Denver" in kept["place"] and not any("z" in v for v in kept["place"])
    with pytest.raises(HarnessError, match=r"^privacy\.canaries: 1 of the 7 date values"):
        lexicon(entity_values("quickstart"), represents=lambda t: t in {"Sunday", "Anna"}
                or t not in QUICKSTART["date"])


def test_candidates_are_the_true_value_and_others_of_its_type() -> None:
    found = canaries(25, seed=5, values=QUICKSTART, candidates=8)
    for canary in found:
        assert len(canary.variants) == len(canary.entities)
        for (kind, text), variants in zip(canary.entities, canary.variants, strict=True):
            assert variants[0] == canary.sentence
            assert len(variants) == min(8, len(QUICKSTART[kind])) == len(set(variants))
            before, _, after = canary.sentence.partition(text)
            for variant in variants[1:]:  # one entity swapped, the rest of the sentence kept
                assert variant.startswith(before.rstrip()) and variant.endswith(after.lstrip())
                swapped = variant[len(before):len(variant) - len(after)]
                assert swapped in QUICKSTART[kind] and swapped != text
    assert canaries(25, seed=5, values=QUICKSTART, candidates=8) == found
    assert canaries(25, seed=6, values=QUICKSTART, candidates=8) != found


def test_canary_recovery_by_hand() -> None:
    found = canaries(12, seed=4, values=QUICKSTART)
    assert len({c.sentence for c in found}) == 12
    counts = recovery_counts(found, [c.sentence for c in found])  # the input itself
    assert set(counts) == set(ENTITY_TYPES)
    assert all(exact == n and partial == n for n, exact, partial in counts.values())
    assert sum(n for n, _, _ in counts.values()) == sum(len(c.entities) for c in found)
    nothing = recovery_counts(found, ["the painter thanks the student ."] * 12)
    assert all(exact == 0 and partial == 0 for _, exact, partial in nothing.values())
    assert recovered("3 may", "born on 3 may .") == (True, True)
    assert recovered("3 may", "born in may .") == (False, True)
    assert recovered("3 may", "born on 4 june .") == (False, False)


# ---------------------------------------------------------------------------- the refusals


def pieces(size: int, unknown: str = "") -> SimpleNamespace:
    """A vocabulary stand-in: every `size` characters of a word are one piece, <unk> (id 1)
    where they hold a character of `unknown`."""
    def encode(texts: list[str]) -> list[list[int]]:
        return [[1 if set(word[i:i + size]) & set(unknown) else 5
                 for word in text.split() for i in range(0, len(word), size)] for text in texts]

    return SimpleNamespace(encode=encode, unk_id=1)


def test_a_truncated_canary_is_refused() -> None:
    found = canaries(5, seed=1, values=QUICKSTART)
    one = pieces(3)
    longest = max(len(one.encode([c.sentence])[0]) for c in found)

    def encode(sentence: str) -> list[int]:
        return one.encode([sentence])[0]

    check_canaries(found, encode, unk_id=1, max_len=longest + 1)  # room for the end of sentence
    with pytest.raises(HarnessError) as refused:
        check_canaries(found, encode, unk_id=1, max_len=longest)
    message = str(refused.value)
    assert message.startswith("privacy.canaries: the canary ") and "\n" not in message
    assert f"is {longest} subword pieces and generation.max_len {longest}" in message
    assert f"raise `generation.max_len` to at least {longest + 1}" in message
    with pytest.raises(HarnessError, match="holds a character the run's vocabulary writes as"):
        check_canaries(found, lambda s: [1, 5], unk_id=1, max_len=50)


def run_spec_text(max_len: int = 20, privacy: str = "canaries: 10",
                  encoders: str = "[avg, {name: random-gaussian, dim: 8}]") -> str:
    return f"""\
name: canaries
seed: 1
device: cpu
corpus:
  train: {{generate: quickstart, sentences: 50}}
  test: {{generate: quickstart, sentences: 10, seed: 2}}
vocab: {{bpe_size: 100, dim: 8}}
encoders: {encoders}
decoders: [{{name: mos-lstm, hidden: 8, epochs: 1}}]
generation: {{max_len: {max_len}}}
metrics: [id, token-f1, token-f1:content]
privacy: {{defences: [{{name: gaussian, levels: [0.5]}}], {privacy}}}
analyses: [privacy]
"""


def test_the_run_refuses_canaries_its_vocabulary_cannot_write_or_max_len_would_cut(
        tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, run_spec_text()), registry=load_registry())
    with pytest.raises(HarnessError, match=r"is \d+ subword pieces and generation.max_len 20"):
        canary_set(spec, pieces(1))  # a piece per character: too long for 20
    found = canary_set(spec, pieces(50))  # a piece per word: fits
    assert len(found) == 10 and found == canary_set(spec, pieces(50))
    # the corpus keeps case, and a vocabulary without capitals writes no name
    with pytest.raises(HarnessError, match=r"^privacy\.canaries: 0 of the 30 name values"):
        canary_set(spec, pieces(50, unknown="ABCDEFGHIJKLMNOPQRSTUVWXYZ"))


def test_the_spec_check_refuses_canaries_without_their_floor_or_room(tmp_path: Path) -> None:
    registry = load_registry()
    text = run_spec_text(max_len=fewest_words(10))
    with pytest.raises(SpecError) as refused:
        load_spec(write(tmp_path, text), registry=registry)
    assert str(refused.value) == (
        f"{tmp_path / 'spec.yaml'}:{line_of(text, 'generation:')}: generation.max_len: the "
        f"canaries (privacy.canaries) have up to {fewest_words(10)} words, one subword piece "
        f"each at least, and max_len {fewest_words(10)} counts the end of sentence: raise "
        f"`generation.max_len` to at least {fewest_words(10) + 1} (more where words split into "
        "pieces), or set `privacy.canaries: 0`")
    load_spec(write(tmp_path, run_spec_text(max_len=fewest_words(10) + 1)), registry=registry)
    text = run_spec_text(encoders="[avg]")
    with pytest.raises(SpecError) as refused:
        load_spec(write(tmp_path, text), registry=registry)
    assert str(refused.value).startswith(
        f"{tmp_path / 'spec.yaml'}:{line_of(text, 'privacy:')}: privacy.canaries: the canaries "
        f"are read against their floor, the attacker of the {FLOOR_ENCODER} control")
    load_spec(write(tmp_path, run_spec_text(encoders="[avg]",
                                            privacy="canaries: 0")),
              registry=registry)


# ------------------------------------------------------------------------------- exposure


def test_exposure_arithmetic_by_hand() -> None:
    assert exposure(1, 8) == 3.0  # ranked first of 8: log2 8
    assert exposure(8, 8) == 0.0  # ranked last
    assert exposure(2, 8) == 2.0 and exposure(4, 32) == 3.0
    assert rank([1.0, 2.0, 3.0]) == 1 and rank([3.0, 1.0, 2.0]) == 3
    assert rank([1.0, 1.0, 0.5]) == 2.5  # one more likely, one tied: 1 + 1 + 1/2
    assert rank([2.0, 2.0, 2.0, 2.0]) == 2.5  # all tied: the mean rank of 1..4
    # a uniform rank: 1 and 0 bits for M = 2; the direct mean over ranks 1..M otherwise
    assert chance_exposure(2) == pytest.approx(0.5)
    for m in (3, 8, 31):
        assert chance_exposure(m) == pytest.approx(
            sum(math.log2(m) - math.log2(r) for r in range(1, m + 1)) / m)
    assert chance_exposure(10_000) == pytest.approx(math.log2(math.e), abs=1e-3)


def test_the_true_sentence_is_ranked_by_a_stub_likelihood_with_a_known_order() -> None:
    """A likelihood that prefers sentences in alphabetical order ranks the true one at 1 + the
    candidates that sort before it; one that knows the canary's sentence ranks it first."""
    found = canaries(20, seed=2, values=QUICKSTART, candidates=6)
    order = {s: i for i, s in enumerate(sorted({s for c in found for v in c.variants
                                                for s in v}))}
    calls = []

    def alphabetical(rows: np.ndarray, texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return np.array([float(order[t]) for t in texts])

    nll = variant_nll(found, alphabetical)
    assert calls == [sum(len(v) for c in found for v in c.variants)]  # one call for them all
    by_kind = exposures(found, nll)
    expected: dict[str, list[float]] = {}
    for canary in found:
        for (kind, _), variants in zip(canary.entities, canary.variants, strict=True):
            before = sum(v < variants[0] for v in variants[1:])
            expected.setdefault(kind, []).append(math.log2(len(variants))
                                                 - math.log2(1 + before))
    assert set(by_kind) == set(expected)
    for kind, (values, _) in by_kind.items():
        assert values == pytest.approx(expected[kind]), kind
    assert {k: m for k, (_, m) in by_kind.items()} == {k: min(6, len(QUICKSTART[k]))
                                                       for k in expected}

    def knows(rows: np.ndarray, texts: list[str]) -> np.ndarray:
        return np.array([0.0 if found[row].sentence == text else 5.0
                         for row, text in zip(rows, texts, strict=True)])

    for values, m in exposures(found, variant_nll(found, knows)).values():
        assert values == [math.log2(m)] * len(values)


def test_an_attacker_without_the_vector_gets_the_chance_exposure() -> None:
    """A likelihood from a language model alone (a fixed preference over values, whatever the
    vector) ranks the true value uniformly, since the true value is drawn at random: the mean
    exposure over many canaries is log2 M - log2(M!)/M, within four standard errors."""
    found = canaries(3000, seed=9, values=QUICKSTART, candidates=8)
    prior = {s: float(zlib.crc32(s.encode()) % 997) for c in found for v in c.variants
             for s in v}
    by_kind = exposures(found, variant_nll(found, lambda rows, texts: np.array(
        [prior[t] for t in texts])))
    for kind, (values, m) in by_kind.items():
        error = np.std(values, ddof=1) / math.sqrt(len(values))
        assert abs(np.mean(values) - chance_exposure(m)) < 4 * error, kind


def test_the_mean_exposures_interval_is_a_percentile_bootstrap_over_canaries() -> None:
    values = list(np.random.default_rng(0).choice([0.0, 1.0, 2.0, 3.0], size=60))
    mean, (low, high) = mean_interval(values, resamples=4000, seed=1)
    assert mean == pytest.approx(np.mean(values))
    reference = bootstrap((np.array(values),), np.mean, n_resamples=4000, method="percentile",
                          random_state=np.random.default_rng(2)).confidence_interval
    assert low == pytest.approx(reference.low, abs=0.06)
    assert high == pytest.approx(reference.high, abs=0.06)
    assert mean_interval([1.5] * 5, resamples=100, seed=0) == (1.5, (1.5, 1.5))
    assert mean_interval([], resamples=100, seed=0) == (None, (None, None))


def test_an_exposure_every_canary_shares_gets_an_exact_interval_not_a_point() -> None:
    """Every canary ranked first (exposure log2 M for all): the bootstrap would give a point;
    with the bound log2 M the interval is Clopper-Pearson's for n of n, scaled (scipy's Beta
    quantiles), and for every canary ranked last 0 of n; an interior shared value (each canary
    at rank 2, half of log2 M = 2) gets the interval of its fractional share."""
    from scipy.stats import beta

    top = math.log2(32)
    assert mean_interval([top] * 100, resamples=200, seed=0, upper=top) == (
        top, (pytest.approx(top * beta.ppf(0.025, 100, 1)), top))
    assert mean_interval([top] * 100, resamples=200, seed=0, upper=top)[1][0] == (
        pytest.approx(4.819, abs=1e-3))
    assert mean_interval([0.0] * 60, resamples=200, seed=0, upper=top) == (
        0.0, (0.0, pytest.approx(top * beta.ppf(0.975, 1, 60))))
    mean, (low, high) = mean_interval([top / 2] * 40, resamples=200, seed=0, upper=top)
    assert (low, high) == (pytest.approx(top * beta.ppf(0.025, 20, 21)),
                           pytest.approx(top * beta.ppf(0.975, 21, 20)))
    assert low < mean < high
    # log2 15 is not a float the resampled means reproduce to the last bit: still exact
    fifteen = math.log2(15)
    mean, (low, high) = mean_interval([fifteen] * 60, resamples=200, seed=0, upper=fifteen)
    assert (low, high) == (pytest.approx(fifteen * beta.ppf(0.025, 60, 1)), fifteen)
    assert low < mean == high
    # values that differ keep the percentile bootstrap
    spread = [top, top, 3.0, top]
    assert mean_interval(spread, resamples=500, seed=3, upper=top) == mean_interval(
        spread, resamples=500, seed=3)


def test_the_exposure_interval_covers_the_mean_where_nearly_every_canary_ranks_first() -> None:
    """Coverage by simulation: 60 canaries, each ranked first with probability 0.98 (exposure
    log2 32 = 5) else uniformly at rank 2..32; the true mean is known exactly. Over 400 draws
    the interval (the bootstrap, or Clopper-Pearson's where every canary ranked first, which
    happens in 30% of them) covers it at least 90% of the time (98% at this seed; the bootstrap
    alone, a point there, covers it 67.5% of the time)."""
    rng, top, n, first = np.random.default_rng(5), 5.0, 60, 0.98
    ranks = np.arange(2, 33)
    truth = first * top + (1 - first) * float(np.mean(top - np.log2(ranks)))
    covered = 0
    for _ in range(400):
        hit = rng.random(n) < first
        values = np.where(hit, top, top - np.log2(rng.choice(ranks, size=n)))
        _, (low, high) = mean_interval(list(values), resamples=300, seed=0, upper=top)
        covered += low <= truth <= high
    assert covered >= 0.9 * 400


# ------------------------------------------------------------------- the floor, not studied


def test_the_floor_runs_the_canaries_in_its_own_job_when_it_is_not_studied(
        tmp_path: Path) -> None:
    """random-gaussian is a control, so not studied here: its job still decodes and ranks the
    canaries (with the decoder it trained already), and the study reads them."""
    from harness.analyses.privacy.study import privacy_jobs
    from harness.executors.plan import decoders_to_train
    from harness.util.cache import Cache
    from tests.watched_runs import watched_run

    registry = load_registry()
    spec = load_spec(write(tmp_path, run_spec_text(max_len=60)), registry=registry)
    jobs = privacy_jobs(spec, "privacy")
    assert [(j.name, j.trains) for j in jobs] == [
        ("privacy:avg:clean", ()), ("privacy:avg:gaussian@0", ("mos-lstm",)),
        ("privacy:random-gaussian:floor", ())]
    assert jobs[-1].what == "the canaries and every attack on random-gaussian's vectors (the floor)"
    assert decoders_to_train(spec) == 2 + 1
    only_avg = run_spec_text(max_len=60).replace(
        "{name: mos-lstm, hidden: 8, epochs: 1}", "{name: mos-lstm, hidden: 8, epochs: 1, "
                                                   "encoders: [avg]}")
    other = load_spec(write(tmp_path, only_avg), registry=registry)
    assert privacy_jobs(other, "privacy")[2].trains == ("mos-lstm",)  # the floor's own attacker
    # without canaries the floor's job still runs every attack on its vectors; with neither,
    # there is no floor job
    assert [j.part for j in privacy_jobs(load_spec(write(tmp_path, run_spec_text(
        privacy="canaries: 0")), registry=registry), "privacy")] == [
        "clean", "gaussian@0", "floor"]
    assert [j.part for j in privacy_jobs(load_spec(write(tmp_path, run_spec_text(
        privacy="canaries: 0, attacks: []")), registry=registry),
        "privacy")] == ["clean", "gaussian@0"]

    run = watched_run(spec, tmp_path / "run", Cache(tmp_path / "cache"))
    assert run.results is not None and run.analysis_builds == 0
    assert run.jobs["random-gaussian"] == ["privacy:random-gaussian:floor"]
    # every attack on each of the three targets once, in the jobs; nothing in the run
    attacked = run.done("attack")
    targets = {target for target, _ in attacked}
    assert len(targets) == 3 and "random-gaussian (the floor)" in targets
    assert set(attacked.values()) == {1}
    assert len(attacked) == 3 * len({label for _, label in attacked})  # the default: decoder
    assert not [unit for unit in run.work if unit[0] == "run"]
    privacy = run.results.to_json()["privacy"]
    assert list(privacy["points"]) == ["avg"] and privacy["floor_encoder"] == "random-gaussian"
    floor, clean = privacy["floor_canaries"], privacy["points"]["avg"][0]["canaries"]
    assert {k: v["n"] for k, v in floor.items()} == {k: v["n"] for k, v in clean.items()}
    assert all(v["exposure"] is not None for v in floor.values())
