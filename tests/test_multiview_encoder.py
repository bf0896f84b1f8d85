"""The multi-view encoders end to end on tiny generated corpora: registration, conformance,
training (U orthonormal, loss decreasing, resume), the Table 2 representations, save/load."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import harness_plugins.encoders.multiview as multiview
from harness.errors import DataError, HarnessError
from harness.protocols import BuildContext
from harness.testing import check_encoder, check_registration
from harness_plugins.encoders.multiview.encoder import (
    MultiViewEncoder,
    build_encoder,
    component_sample,
)
from harness_plugins.encoders.multiview.objectives import DiscriminativeObjective
from harness_plugins.encoders.multiview.orthonormal import singular_value_deviation
from harness_plugins.encoders.multiview.training import (
    OrderedCorpus,
    TrainingConfig,
    discriminative_batches,
    epoch_generator,
    fit_objective,
)
from harness_plugins.encoders.multiview.word_vectors import train_word_vectors

NAMES = ["multiview-g", "multiview-g:f", "multiview-g:g", "multiview-d", "multiview-d:f",
         "multiview-d:g", "invertible-linear", "invertible-bijective"]
OPTIONS = {"multiview-g": multiview.GenerativeOptions,
           "multiview-d": multiview.DiscriminativeOptions,
           "invertible-linear": multiview.GenerativeOptions,
           "invertible-bijective": multiview.BijectiveOptions}
TINY = {"preset": "small", "hidden": 8, "word_dim": 8, "batch_size": 16, "epochs": 2,
        "pc_sentences": 200}


def topical_corpus(documents: int = 60, sentences: int = 3, seed: int = 0) -> list[str]:
    """Return ordered text: documents of a few sentences drawn mostly from one topic's words,
    separated by blank lines, so that neighbouring sentences share words."""
    rng = random.Random(seed)
    topics = [[f"{name}{i}" for i in range(10)]
              for name in ("sea", "farm", "city", "space", "court", "food", "music", "sport")]
    common = ["the", "a", "and", "of", "is", "was", "to", "in"]
    lines = []
    for _ in range(documents):
        topic = rng.choice(topics)
        for _ in range(sentences):
            lines.append(" ".join(rng.choice(topic) if rng.random() < 0.8 else rng.choice(common)
                                  for _ in range(rng.randint(4, 8))))
        lines.append("")
    return lines


CORPUS = topical_corpus()


def encoder(name: str, workdir: Path | None = None, **options) -> MultiViewEncoder:
    family = name.partition(":")[0]
    return build_encoder(name, OPTIONS[family](**{**TINY, **options}), workdir=workdir,
                         progress=False)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("multiview-work")


# --- registration -----------------------------------------------------------------------------

def test_registration() -> None:
    infos = check_registration(multiview, name="harness-multiview")
    assert sorted(i.name for i in infos) == sorted(NAMES)
    assert all(i.trainable and i.kind == "encoder" and i.status() == "ok" for i in infos)


def test_registration_imports_nothing_heavy() -> None:
    code = ("import sys, harness_plugins.encoders.multiview as m; "
            "print([x for x in ('torch', 'fasttext', 'numpy.linalg', 'safetensors') "
            "if x in sys.modules])")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout
    assert output.strip() == "[]"


def test_factory_builds_from_options_and_context(tmp_path) -> None:
    info = {i.name: i for i in check_registration(multiview)}["multiview-d:g"]
    built = info.factory(info.options(preset="small", hidden=4),
                         BuildContext(seed=3, workdir=tmp_path))
    assert isinstance(built, MultiViewEncoder)
    assert (built.settings.view, built.settings.hidden, built.settings.seed) == ("g", 4, 3)
    assert built.settings.window == 3 and built.settings.batch_size == 128  # preset + default
    assert built.workdir == tmp_path and built.dim == 8


# --- conformance ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_check_encoder(name: str, workdir: Path) -> None:
    fitted = encoder(name, workdir)
    fitted.fit(CORPUS)
    check_encoder(fitted)
    check_encoder(fitted, CORPUS[:12] + ["sea1 unknownword", "x"])


@pytest.mark.parametrize("name,dim", [("multiview-d", 14 * 8), ("multiview-g:f", 8 * 8),
                                      ("multiview-g:g", 6 * 8), ("invertible-bijective", 12 * 8)])
def test_supervised_representation(name: str, dim: int, workdir: Path) -> None:
    fitted = encoder(name, workdir, representation="supervised")
    assert fitted.dim == dim
    fitted.fit(CORPUS)
    check_encoder(fitted)


def test_unfitted_encoder_refuses_to_encode() -> None:
    unfitted = encoder("multiview-d")
    assert unfitted.dim == 16
    with pytest.raises(HarnessError, match="not fitted"):
        unfitted.fingerprint()
    with pytest.raises(HarnessError, match="not fitted"):
        unfitted.encode(["a"])


# --- training ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["multiview-g", "invertible-bijective"])
def test_u_singular_values_are_one_after_training(name: str, workdir: Path) -> None:
    fitted = encoder(name, workdir)
    fitted.fit(CORPUS)
    h = fitted.objective.h
    weight = h.weight if name == "multiview-g" else h.projection.weight
    values = torch.linalg.svdvals(weight.detach())
    assert float((values - 1).abs().max()) < 1e-2
    assert fitted.summary["u_deviation_final"] < 1e-4


def test_the_update_holds_u_near_orthonormal_during_training() -> None:
    """Before the final settling: Adam's steps push U away from orthonormality; the per-step
    update (b = 0.01) holds it several times closer than no update does (~360 steps)."""
    deviations = {}
    for beta in (0.0, 0.01):
        fitted = encoder("multiview-g", beta=beta, epochs=8, batch_size=4)
        fitted.fit(CORPUS)
        deviations[beta] = (fitted.summary["u_deviation_trained"] if beta
                            else singular_value_deviation(fitted.objective.h.weight))
    assert deviations[0.0] > 0.5  # without the update U drifts far
    assert deviations[0.01] < 0.3 * deviations[0.0]


def test_bijective_decoder_inverts_exactly_after_training(workdir: Path) -> None:
    fitted = encoder("invertible-bijective", workdir)
    fitted.fit(CORPUS)
    bijection = fitted.objective.h.bijection
    with torch.no_grad():
        z = torch.randn(64, 16, generator=torch.Generator().manual_seed(0))
        assert float((bijection.inverse(bijection(z)) - z).abs().max()) < 1e-5
        x = torch.from_numpy(fitted.words.vectors[1:65])
        assert float((fitted.objective.h(fitted.objective.h.inverse(x)) - x).abs().max()) < 1e-5


def test_discriminative_loss_decreases() -> None:
    words = train_word_vectors(CORPUS, dim=16, epochs=5, min_count=1)
    corpus = OrderedCorpus.from_sentences(CORPUS, words)
    config = TrainingConfig(kind="discriminative", epochs=6, batch_size=24, lr=1e-2, clip=1.0,
                            seed=1, window=1)
    torch.manual_seed(0)
    objective = DiscriminativeObjective(words.vectors, hidden=16)
    held_out = list(discriminative_batches(corpus, config, epoch_generator(99, 0)))

    def loss() -> float:
        with torch.no_grad():
            return float(np.mean([float(objective.loss(b)) for b in held_out]))

    before = loss()
    fit_objective(objective, corpus, config, progress=False)
    after = loss()
    assert after < 0.9 * before
    assert float(objective.log_temperature.detach().exp()) < 1.0  # tau learnt, sharpened


def test_resumed_training_ends_with_the_same_weights(tmp_path) -> None:
    words = train_word_vectors(CORPUS, dim=8, epochs=2, min_count=1)
    corpus = OrderedCorpus.from_sentences(CORPUS, words)

    def run(epochs: int, checkpoints: Path | None) -> DiscriminativeObjective:
        torch.manual_seed(0)
        objective = DiscriminativeObjective(words.vectors, hidden=8)
        config = TrainingConfig(kind="discriminative", epochs=epochs, batch_size=16, lr=1e-2,
                                clip=1.0, seed=1, window=2)
        fit_objective(objective, corpus, config, checkpoint_dir=checkpoints, progress=False)
        return objective

    straight = run(3, None)
    run(1, tmp_path)  # "killed" after its first epoch
    assert json.loads((tmp_path / "state.json").read_text())["history"][-1]["epoch"] == 1
    resumed = run(3, tmp_path)
    for key, value in straight.state_dict().items():
        assert torch.equal(value, resumed.state_dict()[key]), key

    torch.manual_seed(0)
    other = DiscriminativeObjective(words.vectors, hidden=8)
    config = TrainingConfig(kind="discriminative", epochs=3, batch_size=8, lr=1e-2, clip=1.0,
                            seed=1, window=2)
    with pytest.raises(DataError, match="delete the directory"):
        fit_objective(other, corpus, config, checkpoint_dir=tmp_path, progress=False)


def test_fit_is_deterministic_and_views_share_training(workdir: Path) -> None:
    alone = encoder("multiview-d")
    alone.fit(CORPUS)
    shared = encoder("multiview-d", workdir)
    shared.fit(CORPUS)
    assert alone.fingerprint() == shared.fingerprint()
    view = encoder("multiview-d:f", workdir)
    view.fit(CORPUS)
    for key, value in shared.objective.state_dict().items():
        assert torch.equal(value, view.objective.state_dict()[key]), key
    assert view.history == shared.history


def test_generative_fit_needs_adjacent_sentences() -> None:
    lonely = [line for sentence in CORPUS[:20] if sentence for line in (sentence, "")]
    with pytest.raises(DataError, match="adjacent sentences"):
        encoder("multiview-g").fit(lonely)


# --- representations (Table 2) ----------------------------------------------------------------

def _post_processed(z: np.ndarray, u: np.ndarray) -> np.ndarray:
    z = z - np.outer(z @ u, u)
    return z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)


def test_generative_g_is_the_transposed_decoder_on_mean_word_vectors(workdir: Path) -> None:
    fitted = encoder("multiview-g:g", workdir)
    fitted.fit(CORPUS)
    sentences = ["sea1 sea2 the", "farm3 unknownword"]
    u_matrix = fitted.objective.h.weight.detach().double().numpy()
    means = np.stack([fitted.words.vectors[fitted.words.ids(s)].mean(axis=0) for s in sentences])
    expected = _post_processed(means @ u_matrix, fitted.components["g"].double().numpy())
    assert np.allclose(fitted.encode(sentences), expected, atol=1e-5)


def test_generative_g_has_the_cosines_of_average_word_vectors_without_their_component(
        workdir: Path) -> None:
    """With U U^T = I, U^T is an isometry: g's cosines are those of avg + WR over the same word
    vectors (multi-view Tables 3 and 6 report 67.8 for both), whatever the training did."""
    fitted = encoder("multiview-g:g", workdir)
    fitted.fit(CORPUS)
    words = fitted.words

    def mean_vectors(sentences: list[str]) -> np.ndarray:
        return np.stack([words.vectors[words.ids(s)].mean(axis=0) for s in sentences])

    top = np.linalg.svd(mean_vectors(component_sample(CORPUS, 200)).astype(np.float64))[2][0]
    sentences = [s for s in CORPUS[:16] if s]
    expected = _post_processed(mean_vectors(sentences).astype(np.float64), top)
    got = fitted.encode(sentences).astype(np.float64)
    assert np.allclose(got @ got.T, expected @ expected.T, atol=1e-4)


@pytest.mark.parametrize("representation", ["unsupervised", "supervised"])
def test_ensemble_combines_the_views(representation: str, workdir: Path) -> None:
    both, f, g = (encoder(name, workdir, representation=representation)
                  for name in ("multiview-d", "multiview-d:f", "multiview-d:g"))
    for fitted in (both, f, g):
        fitted.fit(CORPUS)
    sentences = CORPUS[:6] + ["unknownword"]  # CORPUS[3] is blank
    parts = (f.encode(sentences), g.encode(sentences))
    expected = (parts[0] + parts[1]) / 2 if representation == "unsupervised" \
        else np.concatenate(parts, axis=1)
    assert np.allclose(both.encode(sentences), expected, atol=1e-6)
    norms = [np.linalg.norm(p, axis=1) for p in parts]
    # l2-normalised views; a blank sentence is zero in both, absent words are zero in g only.
    assert np.allclose(norms[0][[0, 1, 2, 4, 5, 6]], 1.0, atol=1e-5)
    assert np.allclose(norms[1][[0, 1, 2, 4, 5]], 1.0, atol=1e-5)
    assert norms[0][3] == 0 and norms[1][3] == 0 and norms[1][6] == 0


def test_post_processing_removes_the_fit_corpus_component(workdir: Path) -> None:
    fitted = encoder("multiview-d:g", workdir)
    fitted.fit(CORPUS)
    pooled = fitted._pooled([s for s in CORPUS if s], batch_size=64)["g"].double().numpy()
    top = np.linalg.svd(pooled, full_matrices=False)[2][0]
    assert abs(float(fitted.components["g"].double().numpy() @ top)) > 1 - 1e-6


# --- save / load --------------------------------------------------------------------------------

def test_load_restores_and_refuses_other_settings(tmp_path, workdir: Path) -> None:
    fitted = encoder("invertible-linear", workdir)
    fitted.fit(CORPUS)
    fitted.save(tmp_path)
    restored = encoder("invertible-linear")
    restored.load(tmp_path)
    assert restored.fingerprint() == fitted.fingerprint()
    assert np.array_equal(restored.encode(CORPUS[:5]), fitted.encode(CORPUS[:5]))
    with pytest.raises(DataError, match="other settings"):
        encoder("invertible-linear", hidden=6).load(tmp_path)
    with pytest.raises(DataError, match="missing"):
        encoder("invertible-linear").load(tmp_path / "nothing")


# --- through the core -----------------------------------------------------------------------

RUN_SPEC = """
name: multiview-tiny
seed: 3
device: cpu
corpus:
  train: {generate: quickstart, sentences: 300}
  test: {generate: quickstart, sentences: 20, seed: 9}
  normalise: {lowercase: true, digits: zero}
vocab: {bpe_size: 150, dim: 8, epochs: 1}
encoders:
  - {name: multiview-d, preset: small, hidden: 8, word_dim: 8, epochs: 1, pc_sentences: 100}
  - {name: invertible-bijective, preset: small, hidden: 8, word_dim: 8, epochs: 1,
     representation: supervised}
decoders: [{name: simple-lstm, hidden: 16, epochs: 1, batch_size: 32}]
generation: {beam: 1, max_len: 10}
metrics: [id]
report: {formats: [md]}
"""


@pytest.mark.slow
def test_runs_through_the_harness_and_is_fitted_once(tmp_path: Path) -> None:
    from harness.registry.loader import load_registry
    from harness.runner import run_spec
    from harness.spec import load_spec
    from harness.util.cache import Cache

    registry = load_registry()
    assert registry.get("encoder", "multiview-d").plugin == "harness-multiview"
    (tmp_path / "spec.yaml").write_text(RUN_SPEC)
    spec = load_spec(tmp_path / "spec.yaml", registry=registry)
    first = run_spec(spec, tmp_path / "run", cache=Cache(tmp_path / "cache")).to_json()
    assert [(r["encoder"], r["dim"]) for r in first["runs"]] == [
        ("multiview-d", 16), ("invertible-bijective", 12 * 8)]
    again = Cache(tmp_path / "cache")
    second = run_spec(spec, tmp_path / "run2", cache=again).to_json()
    assert again.builds == 0 and second["runs"] == first["runs"]
