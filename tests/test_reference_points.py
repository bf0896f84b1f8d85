"""Control encoders as reference points: declared at registration, kept out of the correlations
across encoders and their ranks unless a spec includes them; and the chance level of a metric
measured in the encoder's own space (cosine)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from harness.analyses.correlation.correlate import correlate_diagnostics
from harness.analyses.downstream.scores import Downstream
from harness.protocols import InputEncoding, Options, has_chance_level, unrelated_pairing
from harness.registry.components import RegistrationError, make_info
from harness.registry.loader import load_registry
from harness.spec import load_spec
from harness.stats.correlation import fisher_interval
from harness.util.vectors import row_cosines
from harness_plugins.metrics.cosine import CosineMetric
from harness_plugins.metrics.overlap import IdentityMetric

STUDIED = ["a", "b", "c", "d", "e"]
ID = {"a": 30.0, "b": 10.0, "c": 25.0, "d": 5.0, "e": 20.0, "noise": 0.0}
MR = {"a": 70.0, "b": 74.0, "c": 69.0, "d": 71.0, "e": 73.0, "noise": 50.0}


def correlations(controls: tuple[str, ...]):
    downstream = Downstream(source="", tasks=["MR"], scores={e: {"MR": v} for e, v in MR.items()})
    return correlate_diagnostics({"id": ID}, downstream, method="spearman", decoder="lstm",
                                 rank_by="id", controls=controls)


def test_controls_are_left_out_of_the_correlations_and_ranks():
    """A control last on both axes drags rho up: with it rho over 6 encoders is scipy's on all
    six; without it, scipy's on the five studied."""
    out = correlations(("noise",))
    cell = out.matrix["id"]["MR"]
    expected = spearmanr([ID[e] for e in STUDIED], [MR[e] for e in STUDIED])[0]
    assert cell.n == 5 and cell.rho == pytest.approx(expected)
    assert out.controls == ["noise"]
    assert "noise" not in out.ranks["downstream"] and "noise" not in out.ranks["id"]
    assert "noise" not in out.diagnostics["id"]
    assert cell.ci95 == pytest.approx(fisher_interval(expected, 5))
    included = correlations(())
    everyone = list(ID)
    assert included.matrix["id"]["MR"].rho == pytest.approx(
        spearmanr([ID[e] for e in everyone], [MR[e] for e in everyone])[0])
    assert included.matrix["id"]["MR"].rho > cell.rho


def test_every_cell_carries_its_holm_adjusted_p():
    out = correlations(())
    cell = out.matrix["id"]["MR"]
    assert cell.p_holm == pytest.approx(cell.p)  # one test: Holm changes nothing
    assert (out.interval, out.correction) == ("fisher-z", "holm")


def _spec(tmp_path: Path, controls: str | None):
    path = tmp_path / "spec.yaml"
    extra = f"comparison: {{controls: {controls}}}\n" if controls else ""
    path.write_text("name: t\ncorpus:\n  train: {generate: quickstart, sentences: 100}\n"
                    "  test: {generate: quickstart, sentences: 20}\n"
                    "encoders: [avg, hier, random-gaussian, {name: random-lstm, dim: 8}]\n"
                    + extra, encoding="utf-8")
    return load_spec(path, (), load_registry())


def test_the_spec_excludes_controls_by_default_and_includes_them_on_request(tmp_path: Path):
    names = ["avg", "hier", "random-gaussian", "random-lstm"]
    spec = _spec(tmp_path, None)
    assert spec.controls() == ["random-gaussian", "random-lstm"]
    assert spec.studied(names) == ["avg", "hier"]
    assert _spec(tmp_path, "include").studied(names) == names


def test_only_encoders_are_declared_controls():
    info = make_info("encoder", "mine", lambda options, context: None, control=True)
    assert info.control is True
    with pytest.raises(RegistrationError, match="only encoders"):
        make_info("metric", "mine", lambda options, context: None, control=True,
                  options=Options)


@pytest.mark.parametrize("n", [2, 3, 10, 500])
def test_unrelated_pairing_is_a_derangement(n):
    unrelated = unrelated_pairing(n, seed=4)
    assert sorted(unrelated.tolist()) == list(range(n))
    assert not np.any(unrelated == np.arange(n))
    assert np.array_equal(unrelated, unrelated_pairing(n, seed=4))


def test_cosine_chance_is_the_cosine_to_an_unrelated_sentence():
    rng = np.random.default_rng(0)
    vectors = (rng.standard_normal((50, 8)) + 3.0).astype(np.float32)  # pooled: all alike
    encoding = InputEncoding(name="avg", vectors=vectors, encode=lambda s: vectors[:len(s)])
    unrelated = unrelated_pairing(50, seed=1)
    metric = CosineMetric()
    chance = metric.chance_statistics(encoding, unrelated)
    assert chance.shape == (50, 1)
    expected = [float(vectors[j] @ vectors[i] / np.linalg.norm(vectors[j])
                      / np.linalg.norm(vectors[i])) for i, j in enumerate(unrelated)]
    assert chance[:, 0] == pytest.approx(expected, rel=1e-5)
    assert chance.mean() > 0.8  # a high cosine between unrelated sentences: the right floor
    assert np.allclose(chance[:, 0], row_cosines(vectors[unrelated], vectors))
    assert has_chance_level(metric) and not has_chance_level(IdentityMetric())
