"""The first-party defences against independent computations (numpy, scikit-learn), the
conformance kit's check, and the hook that registers them."""

from __future__ import annotations

import numpy as np
import pytest
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
