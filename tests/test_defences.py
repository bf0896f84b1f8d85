"""The first-party defences against independent computations (numpy, scikit-learn, scipy),
the conformance kit's check, the hook that registers them, and how the defence stage seeds
their noise (independent across levels, defences and encoders; the defence's own secret seed)."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from pydantic import ValidationError
from scipy import integrate, stats
from sklearn.decomposition import PCA

from harness.protocols import BuildContext
from harness.registry.loader import load_registry
from harness.testing import check_defence
from harness.testing.defences import default_vectors

X = default_vectors(300, 12, seed=3)


def built(name: str, **options: object):
    registry = load_registry()
    info = registry.get("defence", name)
    defence = registry.create("defence", name, info.options(**options), BuildContext())
    defence.fit(X)
    return defence


@pytest.mark.parametrize(("name", "options", "randomised"), [
    ("gaussian", {"scale": 0.5}, True), ("laplace", {"epsilon": 2.0}, True),
    ("gaussian-dp", {"epsilon": 0.5}, True),
    ("gaussian-dp", {"epsilon": 4.0, "calibration": "analytic"}, True),
    ("quantise", {"bits": 3}, False), ("binarise", {}, False), ("pca", {"dims": 5}, False),
    ("rotation", {"key": 4}, False)])
def test_every_first_party_defence_conforms(name: str, options: dict, randomised: bool) -> None:
    registry = load_registry()
    defence = registry.create("defence", name, registry.get("defence", name).options(**options),
                              BuildContext())
    assert check_defence(defence) is randomised
    assert check_defence(defence, X) is randomised


def test_gaussian_noise_is_scaled_to_each_dimensions_spread() -> None:
    defence = built("gaussian", scale=0.5)
    out = defence.transform(X, np.random.default_rng(11))
    sigma = X.astype(np.float64).std(axis=0)
    expected = X + np.random.default_rng(11).standard_normal(X.shape) * 0.5 * sigma
    np.testing.assert_allclose(out, expected.astype(np.float32), rtol=1e-6, atol=1e-6)
    big = default_vectors(20000, 12, seed=5)
    defence.fit(big)
    noise = (defence.transform(big, np.random.default_rng(1)) - big) / big.std(axis=0)
    np.testing.assert_allclose(noise.std(axis=0), 0.5, rtol=0.03)


def test_laplace_clips_to_the_quantile_norm_and_adds_noise_of_scale_2c_over_epsilon() -> None:
    defence = built("laplace", epsilon=2.0, clip_quantile=0.5)
    norms = np.abs(X.astype(np.float64)).sum(axis=1)
    clip = np.median(norms)
    assert defence.clip == pytest.approx(clip)
    assert defence.noise_scale == pytest.approx(2 * clip / 2.0)
    clipped = X * np.minimum(1.0, clip / norms)[:, None]
    np.testing.assert_allclose(defence.clipped(X), clipped, rtol=1e-12)
    assert np.abs(defence.clipped(X)).sum(axis=1).max() <= clip * (1 + 1e-12)
    out = defence.transform(X, np.random.default_rng(2))
    expected = clipped + np.random.default_rng(2).laplace(0, clip, size=X.shape)
    np.testing.assert_allclose(out, expected.astype(np.float32), rtol=1e-6, atol=1e-5)


def test_quantisation_keeps_2_to_the_bits_values_per_dimension_within_half_a_step() -> None:
    defence = built("quantise", bits=3)
    out = defence.transform(X, np.random.default_rng(0)).astype(np.float64)
    low, high = X.min(axis=0).astype(np.float64), X.max(axis=0).astype(np.float64)
    step = (high - low) / 7
    assert all(len(np.unique(out[:, d])) <= 8 for d in range(X.shape[1]))
    assert (np.abs(out - X) <= step / 2 + 1e-5).all()
    grid = (out - low) / step
    np.testing.assert_allclose(grid, np.rint(grid), atol=1e-4)
    one_bit = built("quantise", bits=1).transform(X, np.random.default_rng(0))
    assert set(np.unique(one_bit[:, 0])) <= {np.float32(low[0]), np.float32(high[0])}


def test_binarisation_is_the_sign_about_the_training_median() -> None:
    out = built("binarise").transform(X, np.random.default_rng(0))
    expected = np.where(X >= np.median(X.astype(np.float64), axis=0), 1.0, -1.0)
    np.testing.assert_array_equal(out, expected.astype(np.float32))


def test_pca_equals_scikit_learns_up_to_each_components_sign() -> None:
    defence = built("pca", dims=5)
    out = defence.transform(X, np.random.default_rng(0)).astype(np.float64)
    reference = PCA(n_components=5, svd_solver="full").fit(X.astype(np.float64)).transform(X)
    signs = np.sign((out * reference).sum(axis=0))
    np.testing.assert_allclose(out, reference * signs, atol=1e-4)
    assert defence.output_dim(12) == 5 and built("pca", dims=50).output_dim(12) == 12


def test_the_rotation_is_orthogonal_and_keeps_every_distance() -> None:
    defence = built("rotation", key=4)
    q = defence.rotation
    np.testing.assert_allclose(q.T @ q, np.eye(12), atol=1e-12)
    gaussian = np.random.default_rng(4).standard_normal((12, 12))
    reference, r = np.linalg.qr(gaussian)
    np.testing.assert_allclose(q, reference * np.sign(np.diag(r)), atol=1e-12)
    out = defence.transform(X, np.random.default_rng(0)).astype(np.float64)
    x = X.astype(np.float64)
    np.testing.assert_allclose(out @ out.T, x @ x.T, rtol=1e-5, atol=1e-4)
    other = built("rotation", key=5).transform(X, np.random.default_rng(0))
    assert not np.allclose(other, out, atol=1e-3)  # another key, another rotation


def test_the_kit_refuses_a_defence_that_ignores_its_generator() -> None:
    class Unseeded:
        def fit(self, vectors):
            pass

        def transform(self, vectors, rng):
            return (vectors + np.random.standard_normal(vectors.shape)).astype(np.float32)

        def output_dim(self, dim):
            return dim

        def describe(self):
            return "noise from the global generator"

    with pytest.raises(AssertionError, match="not reproducible"):
        check_defence(Unseeded())


def test_the_kit_refuses_a_defence_that_noises_every_row_alike() -> None:
    """One noise vector broadcast over the block: rows are not noised independently."""
    class Shared:
        def fit(self, vectors):
            pass

        def transform(self, vectors, rng):
            return (vectors + rng.standard_normal(vectors.shape[1])).astype(np.float32)

        def output_dim(self, dim):
            return dim

        def describe(self):
            return "one noise vector for the whole block"

    with pytest.raises(AssertionError, match="one row repeated in a block the same noise"):
        check_defence(Shared())


def test_the_kit_refuses_a_wrong_width() -> None:
    class Narrow:
        def fit(self, vectors):
            pass

        def transform(self, vectors, rng):
            return vectors[:, :3].astype(np.float32)

        def output_dim(self, dim):
            return dim

        def describe(self):
            return "drops dimensions it does not declare"

    with pytest.raises(AssertionError, match=r"output_dim\(16\) = 16"):
        check_defence(Narrow())


def test_laplace_budget_is_epsilon_per_vector_and_epsilon_over_d_per_dimension() -> None:
    defence = built("laplace", epsilon=2.0)
    assert defence.budget(12) == {"epsilon": 2.0, "epsilon_per_dimension": pytest.approx(2 / 12)}
    assert defence.describe() == ("L1 clip, Laplace noise: epsilon 2 per vector, 0.167 per "
                                  "dimension of 12")


def test_the_gaussian_mechanism_clips_to_the_l2_quantile_and_adds_the_classic_sigma() -> None:
    defence = built("gaussian-dp", epsilon=0.5, delta=1e-5, clip_quantile=0.5)
    x = X.astype(np.float64)
    norms = np.sqrt((x * x).sum(axis=1))
    clip = np.median(norms)
    assert defence.clip == pytest.approx(clip)
    # Dwork & Roth 2014, Theorem A.1, with sensitivity 2C
    sigma = math.sqrt(2 * math.log(1.25 / 1e-5)) * 2 * clip / 0.5
    assert defence.sigma == pytest.approx(sigma, rel=1e-12)
    clipped = x * np.minimum(1.0, clip / norms)[:, None]
    np.testing.assert_allclose(defence.clipped(X), clipped, rtol=1e-12)
    assert np.sqrt((defence.clipped(X) ** 2).sum(axis=1)).max() <= clip * (1 + 1e-12)
    out = defence.transform(X, np.random.default_rng(2))
    expected = clipped + np.random.default_rng(2).standard_normal(X.shape) * sigma
    np.testing.assert_allclose(out, expected.astype(np.float32), rtol=1e-6, atol=1e-3)
    assert defence.budget(12) == {"epsilon": 0.5, "delta": 1e-5,
                                  "epsilon_per_dimension": pytest.approx(0.5 / math.sqrt(12))}
    assert "epsilon 0.5, delta 1e-05 per vector, 0.144 per dimension of 12" in (
        defence.describe())


def test_the_gaussian_noise_norm_grows_with_the_square_root_of_the_width() -> None:
    """|noise|_2^2 / sigma^2 over n vectors of width d is chi-square with n d degrees of
    freedom: the noise's L2 norm per vector is about sigma sqrt(d)."""
    defence = built("gaussian-dp", epsilon=0.5)
    noise = defence.transform(X, np.random.default_rng(5)) - defence.clipped(X)
    total = float((noise.astype(np.float64) ** 2).sum()) / defence.sigma ** 2
    n, d = X.shape
    chi2 = stats.chi2(n * d)
    assert chi2.ppf(0.0005) < total < chi2.ppf(0.9995)


def hockey_stick(epsilon: float, sigma: float, sensitivity: float) -> float:
    """delta(epsilon) of N(0, sigma^2) against N(Delta, sigma^2), integrated numerically:
    the integral of max(0, p(x) - e^epsilon q(x)) over x (the privacy profile of the Gaussian
    mechanism along the direction the two inputs differ in)."""
    def excess(x: float) -> float:
        log_p = stats.norm.logpdf(x, 0, sigma)
        log_q = stats.norm.logpdf(x, sensitivity, sigma)
        return max(0.0, math.exp(log_p) - math.exp(epsilon + log_q))

    edge = sensitivity / 2 - epsilon * sigma ** 2 / sensitivity  # where p = e^epsilon q
    value, _ = integrate.quad(excess, edge - 40 * sigma, edge, epsabs=1e-14, epsrel=1e-10,
                              limit=400)
    return value


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0, 20.0])
def test_the_analytic_sigma_is_the_smallest_meeting_delta_by_scipys_integral(
        epsilon: float) -> None:
    defence = built("gaussian-dp", epsilon=epsilon, delta=1e-5, calibration="analytic")
    sigma, sensitivity = defence.sigma, 2 * defence.clip
    assert hockey_stick(epsilon, sigma, sensitivity) == pytest.approx(1e-5, rel=1e-5)
    assert hockey_stick(epsilon, 0.99 * sigma, sensitivity) > 1.05e-5  # any less noise fails
    if epsilon < 1:  # the analytic sigma is below the classic one (Balle & Wang 2018, Fig. 1)
        assert sigma < math.sqrt(2 * math.log(1.25e5)) * sensitivity / epsilon
    per_dimension = defence.budget(12)["epsilon_per_dimension"]
    assert per_dimension < epsilon
    assert hockey_stick(per_dimension, sigma, sensitivity / math.sqrt(12)) == pytest.approx(
        1e-5, rel=1e-5)


def test_the_classic_calibration_refuses_epsilon_of_1_or_more() -> None:
    options = load_registry().get("defence", "gaussian-dp").options
    with pytest.raises(ValidationError, match=r"classic calibration holds for epsilon < 1 "
                                              r"\(Dwork & Roth 2014, Theorem A.1\), not 1"):
        options(epsilon=1.0)
    assert options(epsilon=1.0, calibration="analytic").epsilon == 1.0


# ------------------------------------------------------------- how the stage seeds the noise

N, D = 5000, 8  # two blocks of the test split (BLOCK = 4096 rows)
CLEAN = default_vectors(N, D, seed=9)


def entry_of(name: str, seed: int | None = None, **options: object):
    from harness.spec import DefenceEntry

    info = load_registry().get("defence", name)
    return DefenceEntry(name=name, seed=seed).resolved(info, info.options(**options))


def encoded_vectors(root: Path, encoder: str = "avg", model: object = None):
    from harness.stages.encode import Encoded

    folder = root / f"clean-{encoder}"
    folder.mkdir(parents=True, exist_ok=True)
    for split in ("train", "test"):
        np.save(folder / f"{split}.npy", CLEAN)
    return Encoded(encoder=encoder, keys={"train": f"{encoder}-a", "test": f"{encoder}-b"},
                   dim=D, directories={"train": folder, "test": folder},
                   identity={"encoder": {"name": encoder, "options": {}}}, model=model,
                   plugin="harness-encoders")


def defended(root: Path, entry, *, encoder: str = "avg", cache: str = "cache",
             spec_seed: int = 1, model: object = None):
    """The defended Encoded and its level's summary, through the stage and a cache."""
    from harness.analyses.privacy.defend import defend_encoded
    from harness.stages.base import RunContext
    from harness.util.cache import Cache

    ctx = RunContext(spec=SimpleNamespace(seed=spec_seed), cache=Cache(root / cache))  # type: ignore[arg-type]
    return defend_encoded(ctx, encoded_vectors(root, encoder, model), entry)


def noise(root: Path, entry, **given: object) -> np.ndarray:
    """The defended test vectors minus the clean ones, in units of each dimension's spread."""
    out, _ = defended(root, entry, **given)
    return (np.asarray(out.vectors("test"), dtype=np.float64) - CLEAN) / CLEAN.std(axis=0)


def correlation(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(a.ravel(), b.ravel())[0, 1])


BOUND = 6 / math.sqrt(N * D)
"""|r| of two independent noise arrays of N D draws stays below 6 standard errors."""


def test_two_levels_of_a_defence_draw_independent_noise(tmp_path: Path) -> None:
    """Gaussian noise at scales 0.5 and 2: with shared draws z, y1 = x + 0.5 z and y2 = x + 2 z
    would give x = (2 y1 - 0.5 y2) / 1.5 exactly; with independent draws that combination is x
    plus noise of sd sqrt(0.5^2 2^2 + 2^2 0.5^2) / 1.5 = sqrt(2) / 1.5 spreads."""
    low, high = noise(tmp_path, entry_of("gaussian", scale=0.5)), noise(
        tmp_path, entry_of("gaussian", scale=2.0))
    np.testing.assert_allclose([low.std(), high.std()], [0.5, 2.0], rtol=0.03)
    assert abs(correlation(low, high)) < BOUND
    # y1 = x + low, y2 = x + high (in spreads): with shared draws, high = 4 low and x is back
    x = CLEAN / CLEAN.std(axis=0)
    combined = (2.0 * (x + low) - 0.5 * (x + high)) / 1.5 - x
    assert combined.std() == pytest.approx(math.sqrt(2) / 1.5, rel=0.03)


def test_defences_and_encoders_draw_independent_noise(tmp_path: Path) -> None:
    gaussian = noise(tmp_path, entry_of("gaussian", scale=1.0))
    other_encoder = noise(tmp_path, entry_of("gaussian", scale=1.0), encoder="gem")
    assert abs(correlation(gaussian, other_encoder)) < BOUND
    laplace, _ = defended(tmp_path, entry_of("laplace", epsilon=1.0))
    lap_noise = np.asarray(laplace.vectors("test"), dtype=np.float64) - built_clipped(
        "laplace", epsilon=1.0)
    assert abs(correlation(gaussian, lap_noise)) < BOUND


def built_clipped(name: str, **options: object) -> np.ndarray:
    registry = load_registry()
    defence = registry.create("defence", name, registry.get("defence", name).options(**options),
                              BuildContext())
    defence.fit(CLEAN)
    return defence.clipped(CLEAN)


def test_reruns_give_the_same_vectors_and_the_secret_seed_other_noise(tmp_path: Path) -> None:
    """Another defence seed: other noise, of the same scale, about the same clean vectors."""
    first = noise(tmp_path, entry_of("gaussian", scale=1.0), cache="one")
    again = noise(tmp_path, entry_of("gaussian", scale=1.0), cache="two")  # a fresh cache
    np.testing.assert_array_equal(first, again)
    # no `seed`: the spec's; an explicit seed equal to it draws the same noise
    np.testing.assert_array_equal(first, noise(tmp_path, entry_of("gaussian", 1, scale=1.0),
                                               cache="three"))
    secret = noise(tmp_path, entry_of("gaussian", 2**100 + 7, scale=1.0), cache="four")
    assert abs(correlation(first, secret)) < BOUND
    for drawn in (first, secret):  # each the clean vectors plus unit noise: mean 0, sd 1
        assert abs(drawn.mean()) < 6 / math.sqrt(N * D)
        assert drawn.std() == pytest.approx(1.0, rel=0.03)
    np.testing.assert_array_equal(np.load(tmp_path / "clean-avg" / "test.npy"), CLEAN)


def test_text_encoded_through_two_levels_gets_independent_noise(tmp_path: Path) -> None:
    """Sentences outside the corpus (downstream tasks, canaries) are records keyed by their
    text (`record_rng`, stream "record")."""
    sentences = [f"sentence {i}" for i in range(N)]
    inner = SimpleNamespace(dim=D, fingerprint=lambda: "fixed",
                            encode=lambda batch, batch_size: CLEAN[:len(batch)])

    def text_noise(scale: float, seed: int | None = None) -> np.ndarray:
        out, _ = defended(tmp_path, entry_of("gaussian", seed, scale=scale), model=inner)
        vectors = out.encode(sentences, batch_size=N)
        return (vectors.astype(np.float64) - CLEAN) / (scale * CLEAN.std(axis=0))

    one = text_noise(1.0)
    np.testing.assert_array_equal(one, text_noise(1.0))
    assert abs(correlation(one, text_noise(2.0))) < BOUND
    assert abs(correlation(one, text_noise(1.0, seed=12345))) < BOUND


def by_text(batch, batch_size) -> np.ndarray:
    """An encoder whose vector of "sentence i" is row i of CLEAN, whatever shares the call."""
    return CLEAN[[int(sentence.split()[-1]) for sentence in batch]]


TEXT_ENCODER = SimpleNamespace(dim=D, fingerprint=lambda: "by-text", encode=by_text)


def test_a_stored_sentence_gets_one_vector_alone_or_among_63_others(tmp_path: Path) -> None:
    """A record's noise is keyed by the record, not by the call that stores it: sentence 7
    encoded alone, last of 64 and first of 64 gets the same defended vector (and the same
    in a rerun)."""
    out, _ = defended(tmp_path, entry_of("gaussian", scale=1.0), model=TEXT_ENCODER)
    alone = out.encode(["sentence 7"])[0]
    others = [f"sentence {i}" for i in range(100, 163)]
    np.testing.assert_array_equal(out.encode([*others, "sentence 7"])[-1], alone)
    np.testing.assert_array_equal(out.encode(["sentence 7", *others])[0], alone)
    assert not np.array_equal(alone, CLEAN[7])  # noised
    again, _ = defended(tmp_path, entry_of("gaussian", scale=1.0), model=TEXT_ENCODER,
                        cache="other")
    np.testing.assert_array_equal(again.encode(["sentence 7"])[0], alone)


def test_a_corpus_rows_noise_is_keyed_by_its_split_and_position(tmp_path: Path) -> None:
    """Row i of the test split is the defence's transform of clean row i under row i's own
    generator (`record_rng(seed, key, "test", i)`), in either block of the split."""
    from harness.analyses.privacy.defend import encoder_key, noise_key, record_rng
    from harness_plugins.defences.transforms import GaussianNoise

    entry = entry_of("gaussian", scale=1.0)
    out, _ = defended(tmp_path, entry)
    stored = np.asarray(out.vectors("test"))
    reference = GaussianNoise(1.0)
    reference.fit(CLEAN)
    key = noise_key(entry, encoder_key(encoded_vectors(tmp_path)))
    for row in (0, 1, 4095, 4096, N - 1):
        expected = reference.transform(CLEAN[row:row + 1], record_rng(1, key, "test", row))
        np.testing.assert_array_equal(stored[row], expected[0])


def test_a_query_draws_fresh_noise_never_a_stored_records(tmp_path: Path) -> None:
    """An attacker's query of a stored sentence gets the clean vector plus noise of the
    level's scale that is independent of the stored record's noise, and of every other
    call's (even one asking for the same sentences)."""
    out, _ = defended(tmp_path, entry_of("gaussian", scale=1.0), model=TEXT_ENCODER)
    sentences = [f"sentence {i}" for i in range(N)]
    spread = CLEAN.std(axis=0)
    stored = (out.encode(sentences).astype(np.float64) - CLEAN) / spread
    first, second = ((out.model.query(sentences, call).astype(np.float64) - CLEAN) / spread
                     for call in ("attack#0", "attack#1"))
    for drawn in (first, second):
        assert drawn.std() == pytest.approx(1.0, rel=0.03)
        assert abs(correlation(drawn, stored)) < BOUND
    assert abs(correlation(first, second)) < BOUND
    np.testing.assert_array_equal(out.model.query(sentences[:3], "attack#0"),
                                  out.model.query(sentences[:3], "attack#0"))


def test_the_stage_records_the_budget_of_a_defence_that_has_one(tmp_path: Path) -> None:
    _, laplace = defended(tmp_path, entry_of("laplace", epsilon=2.0))
    assert laplace.budget == {"epsilon": 2.0, "epsilon_per_dimension": 2.0 / D}
    assert laplace.describes.endswith("0.25 per dimension of 8")
    _, gaussian = defended(tmp_path, entry_of("gaussian", scale=1.0))
    assert gaussian.budget is None
    from harness.analyses.privacy.results import PrivacyPoint  # results.json: only with one

    point = PrivacyPoint(defence="laplace", level=2.0)
    assert point.model_copy(update={"budget": laplace.budget}).model_dump(mode="json")[
        "budget"] == {"epsilon": 2.0, "epsilon_per_dimension": 0.25}
    assert "budget" not in point.model_dump(mode="json")


def test_the_defence_seed_stays_out_of_the_spec_record_and_hash(tmp_path: Path) -> None:
    from harness.analyses.privacy.spec import studied_defences
    from harness.errors import SpecError
    from harness.spec import load_spec

    text = ("name: t\nseed: 3\ncorpus: {train: {generate: quickstart, sentences: 50}, "
            "test: {generate: quickstart, sentences: 10}}\nencoders: [avg]\n"
            "privacy: {defences: [{name: gaussian-dp, levels: [0.5, 0.9]SEED}]}\n"
            "analyses: [downstream]\n")
    secret = 2**127 + 12345
    specs = []
    for seed in (f", seed: {secret}", ", seed: 11", ""):
        path = tmp_path / f"spec{len(specs)}.yaml"
        path.write_text(text.replace("SEED", seed), encoding="utf-8")
        specs.append(load_spec(path, registry=load_registry()))
    hidden, other, default = specs
    assert [level.noise_seed(3) for level in studied_defences(hidden)[0].at_levels()] == [
        secret] * 2
    assert studied_defences(default)[0].at_levels()[0].noise_seed(3) == 3
    assert hidden.record() == other.record() == default.record()
    assert "seed" not in hidden.record()["privacy"]["defences"][0]
    assert str(secret) not in str(hidden.record())
    assert hidden.sha256 == other.sha256 == default.sha256
    path = tmp_path / "refused.yaml"
    path.write_text(text.replace("0.9]SEED", "2]"), encoding="utf-8")
    with pytest.raises(SpecError, match="level 2 of `epsilon`: .*classic calibration"):
        load_spec(path, registry=load_registry())


def test_a_randomised_defence_redraws_the_training_split_with_independent_noise(
        tmp_path: Path) -> None:
    """The adaptive attacker's fresh draws (`Encoded.redraw`): each draw the clean vectors plus
    noise of the level's scale, independent of the stored split's noise and of each other,
    the same in every run; a deterministic defence has none."""
    out, _ = defended(tmp_path, entry_of("gaussian", scale=1.0))
    assert out.redraw is not None
    spread = CLEAN.std(axis=0)
    stored = (np.asarray(out.vectors("train"), dtype=np.float64) - CLEAN) / spread
    second, third = ((out.redraw(draw).astype(np.float64) - CLEAN) / spread for draw in (2, 3))
    for drawn in (second, third):
        assert drawn.std() == pytest.approx(1.0, rel=0.03)
        assert abs(correlation(drawn, stored)) < BOUND
    assert abs(correlation(second, third)) < BOUND
    np.testing.assert_array_equal(out.redraw(2), out.redraw(2))
    again, _ = defended(tmp_path, entry_of("gaussian", scale=1.0), cache="other")
    np.testing.assert_array_equal(out.redraw(2), again.redraw(2))
    for name, options in (("pca", {"dims": 4}), ("quantise", {"bits": 2}), ("rotation", {})):
        fixed, _ = defended(tmp_path, entry_of(name, **options))
        assert fixed.redraw is None, name


def test_an_older_spec_with_top_level_defences_runs_with_a_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """`defences:` is the privacy analysis's (`privacy.defences`): an older spec's top-level
    list is read as that, with a deprecation warning naming its file and line, and resolves to
    the same defences and the same record; both at once is a one-line error."""
    from harness.analyses.privacy.spec import studied_defences
    from harness.errors import SpecError
    from harness.spec import load_spec

    head = ("name: t\nseed: 3\ncorpus: {train: {generate: quickstart, sentences: 50}, "
            "test: {generate: quickstart, sentences: 10}}\nencoders: [avg]\n"
            "analyses: [downstream]\n")
    old, new, both = (tmp_path / f"{name}.yaml" for name in ("old", "new", "both"))
    old.write_text(head + "defences:\n  - {name: gaussian, levels: [0.5, 1]}\n  - rotation\n",
                   encoding="utf-8")
    new.write_text(head + "privacy:\n  defences:\n    - {name: gaussian, levels: [0.5, 1]}\n"
                          "    - rotation\n", encoding="utf-8")
    registry = load_registry()
    with caplog.at_level("WARNING", logger="harness.spec"):
        before = load_spec(old, registry=registry)
    (warning,) = [r.getMessage() for r in caplog.records if "deprecated" in r.getMessage()]
    assert warning.startswith(f"{old}:6: the top-level `defences:` is deprecated")
    after = load_spec(new, registry=registry)
    assert [(d.name, len(d.at_levels())) for d in studied_defences(before)] == [
        ("gaussian", 2), ("rotation", 1)]
    assert before.record()["privacy"] == after.record()["privacy"]
    both.write_text(new.read_text(encoding="utf-8") + "defences: [rotation]\n",
                    encoding="utf-8")
    with pytest.raises(SpecError, match=r"both\.yaml:10: defences: and privacy.defences are "
                                        r"both given"):
        load_spec(both, registry=registry)
