"""The effective number of independent encoders behind a correlation over families."""

from __future__ import annotations

import numpy as np
import pytest

from harness.stats.clusters import effective_number, intraclass_correlation


def test_icc_and_effective_number_by_hand():
    # families A = {1, 2, 3}, B = {7, 8, 9}: grand mean 5, MSB = 3 (9) + 3 (9) = 54 (1 df),
    # MSW = 4 / 4 = 1, k0 = (6 - 18/6) / 1 = 3: ICC = (54 - 1) / (54 + 2) = 53/56
    values = dict(zip("abcdef", [1.0, 2.0, 3.0, 7.0, 8.0, 9.0]))
    families = {"a": "A", "b": "A", "c": "A", "d": "B", "e": "B", "f": "B"}
    icc = intraclass_correlation(values, families)
    assert icc == pytest.approx(53 / 56)
    # Deff = 1 + (18/6 - 1) 53/56
    assert effective_number([3, 3], icc) == pytest.approx(6 / (1 + 2 * 53 / 56))


def test_unequal_families_use_the_snedecor_cochran_average_size():
    # A = {0, 2} (mean 1), B = {4, 5, 6} (mean 5), c alone = {10}: N = 6, g = 3, grand mean 4.5
    values = {"a1": 0.0, "a2": 2.0, "b1": 4.0, "b2": 5.0, "b3": 6.0, "c": 10.0}
    families = {"a1": "A", "a2": "A", "b1": "B", "b2": "B", "b3": "B"}
    msb = (2 * (1 - 4.5) ** 2 + 3 * (5 - 4.5) ** 2 + 1 * (10 - 4.5) ** 2) / 2
    msw = (1 + 1 + 1 + 0 + 1) / 3
    k0 = (6 - (4 + 9 + 1) / 6) / 2
    expected = (msb - msw) / (msb + (k0 - 1) * msw)
    assert intraclass_correlation(values, families) == pytest.approx(expected)
    assert effective_number([2, 3, 1], expected) == pytest.approx(
        6 / (1 + ((4 + 9 + 1) / 6 - 1) * expected))


def test_no_family_effect_leaves_n_and_identical_families_leave_the_families():
    values = {str(i): float(i) for i in range(6)}
    assert intraclass_correlation(values, {}) == 0.0  # no encoder shares a family
    assert effective_number([1] * 6, 0.0) == 6
    same = dict(zip("abcdef", [1.0, 1.0, 1.0, 5.0, 5.0, 5.0]))
    families = {"a": "A", "b": "A", "c": "A", "d": "B", "e": "B", "f": "B"}
    assert intraclass_correlation(same, families) == 1.0
    assert effective_number([3, 3], 1.0) == pytest.approx(2.0)


def test_icc_averages_near_zero_without_a_family_effect():
    """Independent values in families of 5: the estimator is unbiased up to its clipping, so
    the unclipped mean is near 0 and the clipped one small (simulation, 2,000 draws)."""
    rng = np.random.default_rng(0)
    families = {f"e{i}": f"f{i // 5}" for i in range(25)}
    found = [intraclass_correlation({k: float(v) for k, v in zip(families, rng.normal(size=25))},
                                    families) for _ in range(2000)]
    assert np.mean(found) < 0.1 and np.median(found) < 0.05
