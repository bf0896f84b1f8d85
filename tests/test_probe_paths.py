"""Interpolation summaries and noise scoring on constructed cases whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest

from harness.analyses.probes.interpolation import (
    alphas,
    interpolate_paths,
    path_vectors,
    summarise_path,
    summarise_paths,
)
from harness.analyses.probes.noise import noise_robustness, noise_scales, noisy_vectors, score_noise


def test_alphas_run_from_x_to_y_evenly() -> None:
    assert alphas(5) == [1.0, 0.75, 0.5, 0.25, 0.0]
    assert alphas(2) == [1.0, 0.0]
    with pytest.raises(ValueError):
        alphas(1)
    x, y = np.array([4.0, 0.0]), np.array([0.0, 8.0])
    assert path_vectors(x, y, 3).tolist() == [[4.0, 0.0], [2.0, 4.0], [0.0, 8.0]]


def test_a_path_that_switches_halfway() -> None:
    path = summarise_path("x .", "y .", [1.0, 0.75, 0.5, 0.25, 0.0],
                          ["x .", "x .", "w .", "y  .", "y ."])
    assert (path.distinct, path.start_reproduced, path.end_reproduced) == (3, True, True)
    assert path.first_change == 0.5


def test_a_path_that_never_changes_and_misses_its_end() -> None:
    path = summarise_path("x .", "y .", [1.0, 0.5, 0.0], ["z .", "z .", "z ."])
    assert (path.distinct, path.start_reproduced, path.end_reproduced) == (1, False, False)
    assert path.first_change is None


def test_the_summary_of_several_paths() -> None:
    paths = [summarise_path("x .", "y .", [1.0, 0.5, 0.0], outputs)
             for outputs in (["x .", "m .", "y ."], ["x .", "x .", "x ."],
                             ["q .", "q .", "y ."])]
    summary = summarise_paths(paths, 3)
    assert summary.mean_distinct == pytest.approx((3 + 1 + 2) / 3)
    # ends reproduced: x and y, x only, y only: 4 of 6
    assert (summary.ends_reproduced.successes, summary.ends_reproduced.support) == (4, 6)
    assert summary.ends_reproduced.value == pytest.approx(400 / 6)
    assert summary.changed == 2 and summary.mean_first_change == pytest.approx(0.25)


def test_interpolating_decodes_every_point_of_every_path_in_one_batch() -> None:
    """A 1-d encoder and a decoder with thresholds at 0.4 and 5: both paths of 5 steps cross
    theirs between alpha 0.75 and 0.5."""
    vectors = {"x .": np.array([0.0]), "y .": np.array([1.0]), "u .": np.array([10.0])}
    batches = []

    def encode(sentences: list[str]) -> np.ndarray:
        return np.stack([vectors[s] for s in sentences])

    def decode(batch: np.ndarray) -> list[str]:
        batches.append(len(batch))
        return ["x ." if v[0] < 0.4 else "y ." if v[0] < 5 else "u ." for v in batch]

    summary = interpolate_paths([("x .", "y ."), ("y .", "u .")], 5, encode, decode)
    assert batches == [10]
    first, second = summary.paths
    assert first.outputs == ["x .", "x .", "y .", "y .", "y ."] and first.first_change == 0.5
    assert second.outputs == ["y .", "y .", "u .", "u .", "u ."] and second.first_change == 0.5
    assert summary.ends_reproduced.value == 100.0 and summary.changed == 2
    assert summary.mean_first_change == 0.5


def test_noise_scales_start_at_zero_and_are_sorted() -> None:
    assert noise_scales([1.0, 0.25, 0.5]) == [0.0, 0.25, 0.5, 1.0]


def test_noise_is_seeded_relative_to_each_dimensions_spread_and_shared_across_scales() -> None:
    vectors = np.zeros((2000, 3))
    sigma = np.array([1.0, 10.0, 0.0])
    clean, half, full = noisy_vectors(vectors, sigma, [0.0, 0.5, 1.0], seed=7)
    assert np.all(clean == 0)
    assert np.allclose(half * 2, full)  # one draw, scaled
    assert full.std(axis=0) == pytest.approx([1.0, 10.0, 0.0], rel=0.05)
    again = noisy_vectors(vectors, sigma, [1.0], seed=7)[0]
    other = noisy_vectors(vectors, sigma, [1.0], seed=8)[0]
    assert np.array_equal(full, again) and not np.array_equal(full, other)


def test_noise_scores_known_outputs() -> None:
    references = ["a b c d .", "e f g h .", "i j k l .", "m n o p ."]
    outputs = [references,
               [*references[:2], "x y z w .", "m n o p ."],
               ["", "", "", ""]]
    robustness = score_noise(references, outputs, [0.0, 0.5, 1.0], seed=3)
    ids = [p.id for p in robustness.points]
    assert [(r.successes, r.support) for r in ids] == [(4, 4), (3, 4), (0, 4)]
    assert [r.value for r in ids] == [100.0, 75.0, 0.0]
    assert ids[0].ci95[0] == pytest.approx(39.76, abs=0.01) and ids[0].ci95[1] == 100.0
    bleus = [p.bleu for p in robustness.points]
    assert bleus[0] == pytest.approx(100.0) and 0 < bleus[1] < 100 and bleus[2] == 0.0
    assert (robustness.sentences, robustness.seed) == (4, 3)


def test_noise_robustness_decodes_every_scale_in_one_batch() -> None:
    """A decoder that recovers a sentence while its vector stays within 0.5 of the clean one:
    more noise, fewer recovered."""
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((300, 4)) * 10
    references = [f"s{i} ." for i in range(300)]
    clean = {tuple(v): r for v, r in zip(vectors.astype(np.float32), references)}
    calls = []

    def decode(batch: np.ndarray) -> list[str]:
        calls.append(len(batch))
        keys = np.array(list(clean))
        out = []
        for v in batch:
            distance = np.abs(keys - v).max(axis=1)
            out.append(clean[tuple(keys[distance.argmin()])] if distance.min() < 0.5 else "")
        return out

    robustness = noise_robustness(vectors, np.full(4, 1.0), references, [0.1, 1.0, 5.0], 1,
                                  decode)
    assert calls == [1200]
    values = [p.id.value for p in robustness.points]
    assert [p.scale for p in robustness.points] == [0.0, 0.1, 1.0, 5.0]
    assert values[0] == 100.0 and values[1] == 100.0
    assert values[1] > values[2] > values[3]
