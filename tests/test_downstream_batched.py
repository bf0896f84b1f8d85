"""SentEval's classifier fits trained together (`batched.stacked`) against the same fits trained
one at a time (`SentEvalClassifier`, as SentEval does): one fit alone is the same bit for bit;
many, each keeps its own seed, permutations, early stopping and optimiser state; every procedure
scores the same up to float summation order."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from harness_plugins.tasks.senteval import evaluation
from harness_plugins.tasks.senteval.batched import (
    FitGroup,
    one_at_a_time,
    stackable,
    stacked,
    trainer_for,
)
from harness_plugins.tasks.senteval.classifier import SentEvalClassifier
from harness_plugins.tasks.senteval.configs import CONFIGS, L2_GRID, ClassifierConfig

PROTOTYPING, LITERATURE = CONFIGS["prototyping"], CONFIGS["literature"]


def noisy_classes(n: int, dim: int, classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Features whose classes overlap (so that fits improve for a while, then stop)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim)).astype(np.float32)
    w = rng.standard_normal((dim, classes))
    y = np.argmax(x @ w + 2.0 * rng.standard_normal((n, classes)), axis=1).astype(np.int64)
    return x, y


@pytest.mark.parametrize("config", [PROTOTYPING, LITERATURE], ids=["rmsprop", "adam"])
@pytest.mark.parametrize("held_out", [False, True], ids=["dev-rows", "hold-out"])
def test_a_batch_of_one_fit_is_sentevals_classifier_bit_for_bit(config, held_out) -> None:
    x, y = noisy_classes(700, 24, 3, seed=1)
    train, dev, test = np.arange(500), np.arange(500, 600), np.arange(600, 700)
    group = (FitGroup(train=train, seed=1113, l2regs=(1e-3,), hold_out=0.05) if held_out
             else FitGroup(train=train, dev=dev, seed=1113, l2regs=(1e-3,)))
    (fit,) = stacked(x, y, [group], 3, config.classifier, "cpu")

    alone = SentEvalClassifier(24, 3, l2reg=1e-3, config=config.classifier, seed=1113)
    if held_out:
        best = alone.fit(x[train], y[train], validation_split=0.05)
    else:
        best = alone.fit(x[train], y[train], validation_data=(x[dev], y[dev]))
    layer = alone.model[0]
    assert torch.equal(fit.weight[0], layer.weight.detach())
    assert torch.equal(fit.bias[0], layer.bias.detach())
    assert fit.dev_accuracy == (best,) and fit.passes == (alone.passes,)
    assert alone.passes > config.classifier.epoch_size  # trained past the first evaluation
    assert fit.score(x[test], y[test], 0) == alone.score(x[test], y[test])
    assert np.array_equal(fit.predict(x[test], 0), alone.predict(x[test]))


@pytest.mark.parametrize("config", [PROTOTYPING, LITERATURE], ids=["rmsprop", "adam"])
def test_stacked_fits_keep_their_own_seed_permutations_stopping_and_state(config) -> None:
    x, y = noisy_classes(900, 16, 2, seed=2)
    groups = [
        FitGroup(train=np.arange(0, 601), dev=np.arange(700, 900), seed=1111, l2regs=L2_GRID),
        # other rows and count (another last batch), another seed, penalties stopping otherwise
        FitGroup(train=np.arange(50, 700), dev=np.arange(700, 800), seed=7,
                 l2regs=(1e-1, 1e-5, 3e-1, 1e-2)),
        FitGroup(train=np.arange(100, 650), seed=1111, l2regs=(1e-4, 1e-2, 1e-3, 1e-5),
                 hold_out=0.1),
    ]
    together = stacked(x, y, groups, 2, config.classifier, "cpu")
    alone = one_at_a_time(x, y, groups, 2, config.classifier, "cpu")
    passes = set()
    for group, fit, reference in zip(groups, together, alone):
        assert fit.passes == reference.passes
        assert fit.dev_accuracy == reference.dev_accuracy
        passes.update(fit.passes)
        for i in range(len(group.l2regs)):
            layer = reference.models[i].model[0]
            # the same steps; a batched product may sum in another order (last bits)
            torch.testing.assert_close(fit.weight[i], layer.weight.detach(), rtol=1e-4,
                                       atol=1e-5)
            torch.testing.assert_close(fit.bias[i], layer.bias.detach(), rtol=1e-4, atol=1e-5)
    assert len(passes) >= 2  # fits stopped at different times: the stopped ones were masked out


def test_a_fit_stops_at_max_epoch() -> None:
    x, y = noisy_classes(300, 8, 2, seed=3)
    settings = ClassifierConfig(optim="rmsprop", batch_size=32, tenacity=1000, epoch_size=2,
                                max_epoch=5)
    group = FitGroup(train=np.arange(200), dev=np.arange(200, 300), seed=1, l2regs=(0.0, 1e-2))
    (fit,) = stacked(x, y, [group], 2, settings, "cpu")
    (reference,) = one_at_a_time(x, y, [group], 2, settings, "cpu")
    # SentEval's loop: `while epochs <= max_epoch`, epoch_size passes at a time: 0, 2, 4 -> 6.
    assert fit.passes == reference.passes == (6, 6)


def one_example(n: int) -> float:
    return 100.0 / n + 1e-9


def agree(batched: list[evaluation.Validation], alone: list[evaluation.Validation],
          n_test: int) -> None:
    """Item by item: the same seed and L2 penalties, the test accuracy within one test
    example's worth."""
    assert [v.seed for v in batched] == [v.seed for v in alone]
    for b, a in zip(batched, alone):
        assert b.l2reg == a.l2reg
        assert abs(b.test_accuracy - a.test_accuracy) <= one_example(n_test)
        assert abs(b.dev_accuracy - a.dev_accuracy) <= one_example(n_test)


SEEDS = [1111, 1112, 1113]


def test_inner_kfold_batched_agrees_with_one_at_a_time() -> None:
    x, y = noisy_classes(400, 12, 2, seed=4)
    batched = evaluation.inner_kfold(x, y, 2, PROTOTYPING, seeds=SEEDS)
    alone = evaluation.inner_kfold(x, y, 2, PROTOTYPING, seeds=SEEDS, trainer=one_at_a_time)
    agree(batched, alone, 80)  # each outer fold tests 80 examples


@pytest.mark.parametrize("config", [PROTOTYPING, LITERATURE], ids=["prototyping", "literature"])
def test_kfold_batched_agrees_with_one_at_a_time(config) -> None:
    x, y = noisy_classes(500, 12, 4, seed=5)
    args = (x[:400], y[:400], x[400:], y[400:], 4, config)
    batched = evaluation.kfold(*args, seeds=SEEDS)
    alone = evaluation.kfold(*args, seeds=SEEDS, trainer=one_at_a_time)
    agree(batched, alone, 100)


def test_split_batched_agrees_with_one_at_a_time() -> None:
    x, y = noisy_classes(600, 12, 3, seed=6)
    args = (x[:400], y[:400], x[400:500], y[400:500], x[500:], y[500:], 3, PROTOTYPING)
    batched = evaluation.split(*args, seeds=SEEDS)
    alone = evaluation.split(*args, seeds=SEEDS, trainer=one_at_a_time)
    agree(batched, alone, 100)
    for b, a in zip(batched, alone):
        assert np.sum(b.predictions != a.predictions) <= 1


def test_seeds_evaluated_together_are_each_seed_alone() -> None:
    x, y = noisy_classes(400, 12, 2, seed=7)
    together = evaluation.inner_kfold(x, y, 2, PROTOTYPING, seeds=[1, 2])
    alone = [evaluation.inner_kfold(x, y, 2, PROTOTYPING, seeds=[seed])[0] for seed in (1, 2)]
    agree(together, alone, 80)


@pytest.mark.parametrize("settings", [
    ClassifierConfig(nhid=50), ClassifierConfig(optim="adagrad"),
    ClassifierConfig(optim="sgd,lr=0.1,momentum=0.9"), ClassifierConfig(optim="adam,amsgrad=1"),
])
def test_what_is_not_stacked_is_trained_one_at_a_time(settings) -> None:
    assert not stackable(settings) and trainer_for(settings) is one_at_a_time
    x, y = noisy_classes(60, 4, 2, seed=8)
    with pytest.raises(ValueError, match="one_at_a_time"):
        stacked(x, y, [FitGroup(train=np.arange(60), seed=1, l2regs=(0.0,), hold_out=0.1)], 2,
                settings, "cpu")


def test_sgd_is_stacked_and_exact() -> None:
    settings = ClassifierConfig(optim="sgd,lr=0.1", batch_size=16, tenacity=2, epoch_size=1)
    assert stackable(settings) and trainer_for(settings) is stacked
    x, y = noisy_classes(200, 6, 2, seed=9)
    group = FitGroup(train=np.arange(150), dev=np.arange(150, 200), seed=3, l2regs=(1e-3,))
    (fit,) = stacked(x, y, [group], 2, settings, "cpu")
    (reference,) = one_at_a_time(x, y, [group], 2, settings, "cpu")
    assert torch.equal(fit.weight[0], reference.models[0].model[0].weight.detach())
    assert fit.passes == reference.passes


def test_groups_gathered_in_chunks_train_as_all_at_once(monkeypatch) -> None:
    from harness_plugins.tasks.senteval import batched

    x, y = noisy_classes(600, 16, 3, seed=10)
    groups = [FitGroup(train=np.arange(lo, lo + 400), dev=np.arange(500, 600), seed=seed,
                       l2regs=L2_GRID) for lo, seed in ((0, 1), (50, 2), (100, 3))]
    together = stacked(x, y, groups, 3, PROTOTYPING.classifier, "cpu")
    monkeypatch.setattr(batched, "GATHER_BUDGET", 1)  # one group per chunk
    assert batched._chunks(3, 128 * 16) == [slice(0, 1), slice(1, 2), slice(2, 3)]
    chunked = stacked(x, y, groups, 3, PROTOTYPING.classifier, "cpu")
    for a, b in zip(together, chunked):
        assert a.passes == b.passes and a.dev_accuracy == b.dev_accuracy
        torch.testing.assert_close(a.weight, b.weight, rtol=1e-4, atol=1e-5)


def test_a_group_without_training_rows_steps_never_and_others_go_on() -> None:
    # A refit of one row holds that row out (at least one dev row): nothing is left to train on.
    x, y = noisy_classes(300, 8, 2, seed=11)
    groups = [FitGroup(train=np.arange(1), seed=5, l2regs=(1e-3,), hold_out=0.05),
              FitGroup(train=np.arange(1, 300), seed=5, l2regs=(1e-3,), hold_out=0.05)]
    together = stacked(x, y, groups, 2, LITERATURE.classifier, "cpu")
    alone = one_at_a_time(x, y, groups, 2, LITERATURE.classifier, "cpu")
    for fit, reference in zip(together, alone):
        assert fit.passes == reference.passes and fit.dev_accuracy == reference.dev_accuracy
    assert torch.equal(together[0].weight[0], alone[0].models[0].model[0].weight.detach())


def test_bad_rounds_are_refused() -> None:
    x, y = noisy_classes(100, 4, 2, seed=12)
    with pytest.raises(ValueError, match="dev rows"):
        stacked(x, y, [FitGroup(train=np.arange(50), dev=np.arange(0), seed=1, l2regs=(0.0,))],
                2, PROTOTYPING.classifier, "cpu")
    with pytest.raises(ValueError, match="labels run from 0 to 2"):
        stacked(x, np.where(y == 1, 2, 0), [FitGroup(train=np.arange(50), dev=np.arange(50, 100),
                                                     seed=1, l2regs=(0.0,))],
                2, PROTOTYPING.classifier, "cpu")
    with pytest.raises(ValueError, match="same number of L2"):
        stacked(x, y, [FitGroup(train=np.arange(50), dev=np.arange(50, 100), seed=1,
                                l2regs=(0.0,)),
                       FitGroup(train=np.arange(50), dev=np.arange(50, 100), seed=1,
                                l2regs=(0.0, 1e-3))], 2, PROTOTYPING.classifier, "cpu")
