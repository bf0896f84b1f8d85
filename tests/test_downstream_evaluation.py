"""SentEval's classifier, validation schemes, relatedness model and STS scoring."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.spatial.distance import cosine as scipy_cosine
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold

from harness.errors import HarnessError
from harness.util.vectors import row_cosines as cosine
from harness_plugins.tasks.senteval import evaluation
from harness_plugins.tasks.senteval.batched import one_at_a_time
from harness_plugins.tasks.senteval.classifier import SentEvalClassifier, make_optimizer
from harness_plugins.tasks.senteval.configs import CONFIGS, get_config
from harness_plugins.tasks.senteval.relatedness import (
    _SoftmaxRegression,
    fit_relatedness,
    tai_targets,
)
from harness_plugins.tasks.senteval.sts import SubsetScore, score_subset, score_year
from harness_plugins.tasks.senteval.tasks import f1_percent

PROTOTYPING = CONFIGS["prototyping"]


def separable(n: int, dim: int = 8, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two well-separated Gaussian blobs: any sound logistic regression gets them all right."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    x = rng.normal(size=(n, dim)).astype(np.float32) * 0.3
    x[:, 0] += np.where(y == 1, 3.0, -3.0)
    return x, y


def test_configs_are_senteval_readme_settings() -> None:
    proto, literature = get_config("prototyping"), get_config("literature")
    assert (proto.kfold, proto.classifier.optim, proto.classifier.batch_size,
            proto.classifier.tenacity, proto.classifier.epoch_size) == (5, "rmsprop", 128, 3, 2)
    assert (literature.kfold, literature.classifier.optim, literature.classifier.batch_size,
            literature.classifier.tenacity, literature.classifier.epoch_size) == (10, "adam", 64,
                                                                                  5, 4)
    assert proto.classifier.nhid == literature.classifier.nhid == 0
    with pytest.raises(HarnessError, match="unknown downstream config 'fast'"):
        get_config("fast")


def test_weights_start_from_torch_seeded_with_seed_and_global_rngs_are_untouched() -> None:
    numpy_state, torch_state = np.random.get_state()[1].copy(), torch.get_rng_state().clone()
    classifier = SentEvalClassifier(8, 3, l2reg=1e-3, config=PROTOTYPING.classifier, seed=1111)
    torch.manual_seed(1111)
    reference = torch.nn.Linear(8, 3)
    assert torch.equal(classifier.model[0].weight, reference.weight)
    torch.set_rng_state(torch_state)
    x, y = separable(40)
    classifier.fit(x, y, validation_split=0.05)
    assert np.array_equal(np.random.get_state()[1], numpy_state)
    assert torch.equal(torch.get_rng_state(), torch_state)


def test_separable_data_is_learned() -> None:
    x, y = separable(200)
    classifier = SentEvalClassifier(8, 2, l2reg=1e-5, config=PROTOTYPING.classifier, seed=1)
    assert classifier.fit(x[:150], y[:150], validation_data=(x[150:], y[150:])) == 1.0
    assert classifier.score(x[150:], y[150:]) == 1.0
    assert classifier.predict(x[150:]).tolist() == y[150:].tolist()


@pytest.mark.parametrize("name", ["prototyping", "literature"])
def test_early_stopping_follows_tenacity(name: str) -> None:
    settings = CONFIGS[name].classifier
    x, y = separable(40)
    # Dev accuracy never improves after the first evaluation: SentEval stops after
    # 1 + tenacity + 1 evaluations, each after epoch_size passes.
    flat = SentEvalClassifier(8, 2, l2reg=0.0, config=settings, seed=3)
    flat._accuracy = lambda *_: 0.5
    assert flat.fit(x, y, validation_data=(x, y)) == 0.5
    assert flat.passes == (settings.tenacity + 2) * settings.epoch_size
    # The failure counter is never reset by an improvement (prototyping: tenacity 3):
    # 0.5 0.6 | 0.6 (1) | 0.7 | 0.7 (2) 0.7 (3) | 0.7 stops: 7 evaluations.
    if name == "prototyping":
        sequence = iter([0.5, 0.6, 0.6, 0.7, 0.7, 0.7, 0.7, 0.9])
        bumpy = SentEvalClassifier(8, 2, l2reg=0.0, config=settings, seed=3)
        bumpy._accuracy = lambda *_: next(sequence)
        assert bumpy.fit(x, y, validation_data=(x, y)) == 0.7
        assert bumpy.passes == 7 * settings.epoch_size


def test_optimizer_strings_as_senteval_parses_them() -> None:
    parameters = [torch.nn.Parameter(torch.zeros(2))]
    sgd = make_optimizer("sgd,lr=0.1", parameters, 1e-3)
    assert isinstance(sgd, torch.optim.SGD)
    assert sgd.param_groups[0]["lr"] == 0.1 and sgd.param_groups[0]["weight_decay"] == 1e-3
    assert isinstance(make_optimizer("rmsprop", parameters, 0.0), torch.optim.RMSprop)
    with pytest.raises(HarnessError, match="unknown optimiser 'lbfgs'"):
        make_optimizer("lbfgs", parameters, 0.0)
    with pytest.raises(HarnessError, match="sgd needs a learning rate"):
        make_optimizer("sgd", parameters, 0.0)


def test_same_seed_gives_the_same_result() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=(120, 6)).astype(np.float32)
    y = (x[:, 0] + rng.normal(size=120) > 0).astype(np.int64)
    runs = [evaluation.split(x[:80], y[:80], x[80:100], y[80:100], x[100:], y[100:], 2,
                             PROTOTYPING, seeds=[1])[0] for _ in range(2)]
    assert runs[0].test_accuracy == runs[1].test_accuracy
    assert runs[0].dev_accuracy == runs[1].dev_accuracy and runs[0].l2reg == runs[1].l2reg
    assert np.array_equal(runs[0].predictions, runs[1].predictions)


def test_inner_kfold_on_separable_data_and_its_folds_are_sklearns(monkeypatch) -> None:
    x, y = separable(60)
    seen: list[tuple[int, ...]] = []
    real_fit = SentEvalClassifier.fit

    def recording_fit(self, x_fit, y_fit, **kwargs):
        seen.append(tuple(np.round(x_fit[:, 0], 4)[:3]))
        return real_fit(self, x_fit, y_fit, **kwargs)

    monkeypatch.setattr(SentEvalClassifier, "fit", recording_fit)
    result, = evaluation.inner_kfold(x, y, 2, PROTOTYPING, seeds=[1111], trainer=one_at_a_time)
    assert result.test_accuracy == 100.0 and result.dev_accuracy == 100.0
    # 5 outer folds x (4 penalties x 5 inner folds + 1 refit), the first fit on the first folds
    assert len(seen) == 5 * (4 * 5 + 1)
    outer = StratifiedKFold(n_splits=5, shuffle=True, random_state=1111)
    train, _ = next(iter(outer.split(x, y)))
    inner = StratifiedKFold(n_splits=5, shuffle=True, random_state=1111)
    inner_train, _ = next(iter(inner.split(x[train], y[train])))
    assert seen[0] == tuple(np.round(x[train][inner_train][:, 0], 4)[:3])


def test_kfold_predicts_the_test_set() -> None:
    x, y = separable(80, seed=2)
    result, = evaluation.kfold(x[:60], y[:60], x[60:], y[60:], 2, PROTOTYPING, seeds=[4])
    assert result.test_accuracy == 100.0 and result.predictions.tolist() == y[60:].tolist()


def test_tai_targets_hand_computed() -> None:
    targets = tai_targets(np.array([3.6, 1.0, 5.0, 4.0, 0.0, 0.4]))
    assert targets == pytest.approx(np.array([
        [0, 0, 0.4, 0.6, 0],  # 3.6 = 0.4 * 3 + 0.6 * 4
        [1, 0, 0, 0, 0],
        [0, 0, 0, 0, 1],
        [0, 0, 0, 1, 0],
        [0, 0, 0, 0, 0],  # STS-B's 0: SentEval's encoding leaves it all zero
        [0.4, 0, 0, 0, 0],
    ]))
    scores = np.linspace(1, 5, 17)
    assert tai_targets(scores) @ np.arange(1, 6) == pytest.approx(scores)


def test_relatedness_model_learns_informative_features() -> None:
    rng = np.random.default_rng(0)
    scores = rng.uniform(1, 5, size=260)
    x = np.c_[scores, rng.normal(size=(260, 3))].astype(np.float32)
    fitted = fit_relatedness(x[:160], scores[:160], x[160:210], scores[160:210], x[210:],
                             scores[210:], seed=1)
    assert fitted.pearson > 0.95 and fitted.dev_pearson > 0.95
    assert fitted.pearson == pytest.approx(pearsonr(fitted.predictions, scores[210:])[0])
    assert fitted.mse == pytest.approx(np.mean((fitted.predictions - scores[210:]) ** 2))
    assert ((fitted.predictions >= 1) & (fitted.predictions <= 5)).all()


def test_relatedness_steps_equal_autograd_and_torch_adam() -> None:
    # The written-out gradient and Adam update against torch's autograd and torch.optim.Adam
    # at its defaults, on the same batches from the same initial weights.
    rng = np.random.default_rng(2)
    x = torch.as_tensor(rng.normal(size=(300, 6)), dtype=torch.float32)
    y = torch.as_tensor(tai_targets(rng.uniform(1, 5, size=300)))
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Softmax(dim=1))
    ours = _SoftmaxRegression(reference[0].weight.detach(), reference[0].bias.detach())
    optimizer = torch.optim.Adam(reference.parameters())
    for step in range(200):
        batch = slice(64 * (step % 4), 64 * (step % 4) + 64)
        loss = torch.nn.functional.mse_loss(reference(x[batch]), y[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ours.step(x[batch], y[batch])
    assert torch.allclose(ours.params[0], reference[0].weight.detach(), rtol=1e-4, atol=1e-6)
    assert torch.allclose(ours.params[1], reference[0].bias.detach(), rtol=1e-4, atol=1e-6)
    assert torch.allclose(ours.probabilities(x), reference(x).detach(), atol=1e-6)


def test_cosine_matches_scipy_and_zero_vectors_score_zero() -> None:
    rng = np.random.default_rng(1)
    u, v = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    expected = [1 - scipy_cosine(a, b) for a, b in zip(u, v)]
    assert cosine(u, v).tolist() == pytest.approx(expected)
    assert cosine(np.zeros((1, 4)), v[:1]).tolist() == [0.0]


def test_sts_means_and_weighted_means_hand_computed() -> None:
    subsets = {"a": SubsetScore(pearson=0.5, spearman=0.4, n=100),
               "b": SubsetScore(pearson=0.8, spearman=0.6, n=300)}
    year = score_year(subsets)
    assert year.pearson_mean == pytest.approx(0.65)
    assert year.pearson_wmean == pytest.approx((0.5 * 100 + 0.8 * 300) / 400)
    assert year.spearman_mean == pytest.approx(0.5)
    assert year.spearman_wmean == pytest.approx((0.4 * 100 + 0.6 * 300) / 400)
    system, gold = np.array([0.1, 0.4, 0.2, 0.9]), np.array([1.0, 3.0, 2.5, 4.0])
    score = score_subset(system, gold)
    assert score.pearson == pytest.approx(pearsonr(system, gold)[0])
    assert score.spearman == pytest.approx(spearmanr(system, gold)[0]) and score.n == 4


def test_f1_matches_sklearn() -> None:
    gold = np.array([1, 1, 0, 0, 1, 0, 1])
    predicted = np.array([1, 0, 0, 1, 1, 0, 1])
    assert f1_percent(gold, predicted) == round(100 * f1_score(gold, predicted), 2)
    assert f1_percent(np.zeros(3, int), np.zeros(3, int)) == 0.0
