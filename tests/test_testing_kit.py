"""The conformance kit (harness.testing): it passes on first-party components and fails, with a
message saying what to do, on deliberately broken ones."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.protocols import BuildContext, is_positional
from harness.registry.components import Registry
from harness.registry.loader import load_registry
from harness.synthetic import generate_sentences
from harness.testing import check_decoder, check_encoder, check_metric, check_registration
from harness.text.subwords import SubwordVocab, train_subword_vocab


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> SubwordVocab:
    """A tiny BPE vocabulary with 16-d subword vectors (about a second to train)."""
    sentences = generate_sentences("quickstart", 300, 1)[:200]
    return train_subword_vocab(sentences, tmp_path_factory.mktemp("vocab"), bpe_size=200, dim=16,
                               epochs=1)



def build(registry: Registry, kind: str, name: str, context: BuildContext, **options: Any) -> Any:
    info = registry.get(kind, name)
    return registry.create(kind, name, info.options(**options), context)


# ---------------------------------------------------------------------- first-party components


def test_avg_encoder_conforms(registry: Registry, vocab: SubwordVocab) -> None:
    check_encoder(build(registry, "encoder", "avg", BuildContext(vocab=vocab)))


@pytest.mark.parametrize("name", ["id", "perm", "id-perm", "bleu", "token-f1"])
def test_first_party_metric_conforms(registry: Registry, name: str) -> None:
    check_metric(build(registry, "metric", name, BuildContext()))


def test_cosine_conforms_given_an_encoder(registry: Registry, vocab: SubwordVocab) -> None:
    cosine = build(registry, "metric", "cosine", BuildContext())
    encoder = build(registry, "encoder", "avg", BuildContext(vocab=vocab))
    with pytest.raises(AssertionError, match=r"re-encodes the outputs.*check_metric\(\.\.\., encode="):
        check_metric(cosine)
    check_metric(cosine, encode=encoder.encode, score_range=(-100.0, 100.0))


@pytest.mark.parametrize("experts", [1, 3])
def test_mos_lstm_decoder_conforms(registry: Registry, vocab: SubwordVocab, one_thread: None,
                                   experts: int) -> None:
    import torch

    torch.manual_seed(0)
    model = build(registry, "decoder", "mos-lstm", BuildContext(vocab=vocab, input_dim=16),
                  hidden=24, experts=experts)
    model.train()
    check_decoder(model, vocab_size=len(vocab), input_dim=16)
    assert model.training, "check_decoder must restore the model's training mode"
    assert all(p.grad is None for p in model.parameters()), "check_decoder left gradients"


def test_first_party_plugins_register_cleanly() -> None:
    import harness_plugins.decoders
    import harness_plugins.encoders
    import harness_plugins.encoders.models
    import harness_plugins.encoders.multiview
    import harness_plugins.metrics
    import harness_plugins.tasks

    infos = [*check_registration(harness_plugins.encoders, "harness-encoders"),
             *check_registration(harness_plugins.encoders.models, "harness-model-encoders"),
             *check_registration(harness_plugins.encoders.multiview, "harness-multiview"),
             *check_registration(harness_plugins.decoders, "harness-decoders"),
             *check_registration(harness_plugins.metrics, "harness-metrics"),
             *check_registration(harness_plugins.tasks, "harness-tasks")]
    assert {"avg", "sbert", "multiview-d", "mos-lstm", "id", "bleu", "mr", "syn-order"} <= {
        info.name for info in infos}


# --------------------------------------------------------------------------- broken encoders


class ToyEncoder:
    """A correct encoder (character histogram of a-z) whose subclasses break one rule each."""

    @property
    def dim(self) -> int:
        return 26

    def fingerprint(self) -> str:
        return "toy/1"

    def _row(self, sentence: str) -> np.ndarray:
        row = np.zeros(26, dtype=np.float32)
        for char in sentence.lower():
            if "a" <= char <= "z":
                row[ord(char) - ord("a")] += 1.0
        return row

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        return np.stack([self._row(s) for s in sentences]) if sentences else np.zeros((0, 26),
                                                                                         np.float32)


class WrongShape(ToyEncoder):
    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        return super().encode(sentences)[:, :-1]


class ReturnsNaN(ToyEncoder):
    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        out = super().encode(sentences)
        # Normalising by the digit count divides by zero for sentences without digits.
        digits = np.array([[sum(c.isdigit() for c in s)] for s in sentences], dtype=np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):
            return out / digits


class ReturnsList(ToyEncoder):
    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> Any:
        return super().encode(sentences).tolist()


class ReturnsIntegers(ToyEncoder):
    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        return super().encode(sentences).astype(np.int64)


class BatchNormalised(ToyEncoder):
    """Subtracts the batch mean: each vector depends on its batch-mates."""

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        rows = []
        for start in range(0, len(sentences), batch_size):
            chunk = super().encode(sentences[start:start + batch_size])
            rows.append(chunk - chunk.mean(axis=0))
        return np.concatenate(rows) if rows else np.zeros((0, 26), np.float32)


class OrderDependent(ToyEncoder):
    """Adds the row index: depends on where a sentence sits in the list."""

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        out = super().encode(sentences)
        return out + np.arange(len(sentences), dtype=np.float32)[:, None]


class Noisy(ToyEncoder):
    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        out = super().encode(sentences)
        return out + np.random.default_rng().normal(size=out.shape).astype(np.float32)


class EmptyFails(ToyEncoder):
    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        return np.stack([self._row(s) for s in sentences])


class UnstableFingerprint(ToyEncoder):
    calls = 0

    def fingerprint(self) -> str:
        self.calls += 1
        return f"toy/{self.calls}"


class ZeroDim(ToyEncoder):
    @property
    def dim(self) -> int:
        return 0


class NoFingerprint:
    dim = 3

    def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
        return np.zeros((len(sentences), 3), np.float32)


def test_toy_encoder_passes() -> None:
    check_encoder(ToyEncoder())


@pytest.mark.parametrize(("encoder", "message"), [
    (WrongShape(), r"returned shape \(9, 25\), expected \(9, 26\)"),
    (ReturnsNaN(), "non-finite value .* in row 0"),
    (ReturnsList(), "returned list, not a numpy array"),
    (ReturnsIntegers(), "returned dtype int64.*floating-point"),
    (BatchNormalised(), "depends on batch_size"),
    (OrderDependent(), "depends on the order"),
    (Noisy(), "not deterministic.*eval mode"),
    (EmptyFails(), r"encode\(\[\]\) raised"),
    (UnstableFingerprint(), "fingerprint.* changed between two calls"),
    (ZeroDim(), "dim is 0"),
    (NoFingerprint(), "does not implement harness.protocols.Encoder .missing: fingerprint"),
], ids=lambda value: None if isinstance(value, str) else type(value).__name__)
def test_broken_encoder_fails_clearly(encoder: Any, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        check_encoder(encoder)


def test_encoder_alone_vs_batch() -> None:
    class PadsToLongest(ToyEncoder):
        """Adds the batch's longest length, as unmasked padding would."""

        def encode(self, sentences: Sequence[str], batch_size: int = 256) -> np.ndarray:
            out = super().encode(sentences)
            longest = max((len(s) for s in sentences), default=0)
            return out + np.float32(longest)

    with pytest.raises(AssertionError, match="batch_size|alone than in a batch"):
        check_encoder(PadsToLongest())


class ToyPositional:
    """A positional encoder (`harness.protocols.PositionalEncoder`): row p of a split is
    (p, the split's number); a plain call's rows are (i, -1)."""

    dim = 2
    positional = True

    def fingerprint(self) -> str:
        return "toy-positional/1"

    def encode(self, sentences: Sequence[str], batch_size: int = 256, *,
               split: str | None = None, start: int = 0) -> np.ndarray:
        rows = np.arange(start, start + len(sentences), dtype=np.float32)
        column = np.full(len(sentences), {"train": 0.0, "test": 1.0, None: -1.0}[split],
                         dtype=np.float32)
        return np.stack([rows, column], axis=1)


class IgnoresStart(ToyPositional):
    """Numbers rows from the call's first sentence: a vector depends on how the split is cut."""

    def encode(self, sentences: Sequence[str], batch_size: int = 256, *,
               split: str | None = None, start: int = 0) -> np.ndarray:
        return super().encode(sentences, batch_size, split=split)


class PlainGivesTrainRows(ToyPositional):
    """Answers a plain call with the train split's rows: re-encoded outputs would match."""

    def encode(self, sentences: Sequence[str], batch_size: int = 256, *,
               split: str | None = None, start: int = 0) -> np.ndarray:
        return super().encode(sentences, batch_size, split=split or "train", start=start)


def test_positional_encoder_passes_though_its_vectors_follow_rows() -> None:
    """The plain batching checks would fail it (a row's vector depends on its place); the kit
    checks it as the encode stage calls it instead."""
    encoder = ToyPositional()
    assert is_positional(encoder)
    check_encoder(encoder)
    not_positional = ToyPositional()
    not_positional.positional = False
    with pytest.raises(AssertionError, match="depends on the order"):
        check_encoder(not_positional)


@pytest.mark.parametrize(("encoder", "message"), [
    (IgnoresStart(), "with split='train' depends on the batching: batches of 1"),
    (PlainGivesTrainRows(), "without a split gives the train split's rows"),
], ids=lambda value: None if isinstance(value, str) else type(value).__name__)
def test_broken_positional_encoder_fails_clearly(encoder: Any, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        check_encoder(encoder)


# ---------------------------------------------------------------------------- broken metrics


class ToyMetric:
    """Percentage of exact matches; subclasses break one rule each."""

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        return np.array([[float(r == h)] for r, h in zip(references, hypotheses)]).reshape(-1, 1)

    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        return 100.0 * np.asarray(totals, dtype=np.float64)[..., 0] / count


class OutOfRange(ToyMetric):
    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        return np.asarray(totals, dtype=np.float64)[..., 0] * 1000.0


class NotVectorised(ToyMetric):
    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        totals = np.asarray(totals, dtype=np.float64)
        return np.asarray(100.0 * totals.reshape(-1)[0] / count)


class Inverted(ToyMetric):
    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        return 100.0 - super().corpus_score(totals, count)


class MutatesTotals(ToyMetric):
    def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
        score = super().corpus_score(totals, count)
        totals[...] = 0.0
        return score


class CorpusLevelRows(ToyMetric):
    """Writes the corpus mean into every row: rows depend on the other pairs."""

    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        rows = super().sentence_statistics(references, hypotheses)
        return np.full_like(rows, rows.mean())


class NaNStatistics(ToyMetric):
    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        rows = super().sentence_statistics(references, hypotheses)
        lengths = np.array([[len(h.split())] for h in hypotheses], dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return rows / lengths * lengths


class FlatStatistics(ToyMetric):
    def sentence_statistics(self, references: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        return super().sentence_statistics(references, hypotheses)[:, 0]


def test_toy_metric_passes() -> None:
    check_metric(ToyMetric())


@pytest.mark.parametrize(("metric", "message"), [
    (OutOfRange(), r"outside \[0.0, 100.0\].*0-100 scale"),
    (NotVectorised(), r"over a \(5, 1\) batch of totals.*totals\[\.\.\., j\]"),
    (Inverted(), "identical to their references score 0.0"),
    (MutatesTotals(), "modified the totals"),
    (CorpusLevelRows(), "different statistics alone than among other pairs"),
    (NaNStatistics(), "non-finite statistic in row 4"),
    (FlatStatistics(), r"returned shape \(8,\), expected \(8, k\)"),
], ids=lambda value: None if isinstance(value, str) else type(value).__name__)
def test_broken_metric_fails_clearly(metric: Any, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        check_metric(metric)


def test_metric_with_another_scale() -> None:
    class Perplexity(ToyMetric):
        def corpus_score(self, totals: np.ndarray, count: int) -> np.ndarray:
            return 1000.0 - super().corpus_score(totals, count)

    with pytest.raises(AssertionError, match="outside"):
        check_metric(Perplexity())
    check_metric(Perplexity(), score_range=(0.0, 1000.0), higher_is_better=False)


# --------------------------------------------------------------------------- broken decoders


def _toy_decoder(vocab_size: int = 11, input_dim: int = 4) -> Any:
    """A conditional GRU language model; subclasses break one rule each."""
    import torch
    from torch import nn

    class ToyDecoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(vocab_size, 8)
            self.rnn = nn.GRU(8 + input_dim, 12, batch_first=True)
            self.out = nn.Linear(12, vocab_size)

        def forward(self, inputs: torch.Tensor, vectors: torch.Tensor) -> torch.Tensor:
            return self._run(inputs, vectors, self.initial_state(vectors))[0]

        def initial_state(self, vectors: torch.Tensor) -> torch.Tensor:
            return vectors.new_zeros(1, vectors.size(0), 12)

        def step(self, tokens: torch.Tensor, vectors: torch.Tensor,
                 state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            log_probs, state = self._run(tokens.unsqueeze(1), vectors, state)
            return log_probs.squeeze(1), state

        def reorder_state(self, state: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
            return state.index_select(1, index)

        def _run(self, inputs: torch.Tensor, vectors: torch.Tensor,
                 state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            x = torch.cat([self.embed(inputs),
                           vectors.unsqueeze(1).expand(-1, inputs.size(1), -1)], dim=-1)
            h, state = self.rnn(x, state)
            return self.logits(h).log_softmax(-1), state

        def logits(self, h: torch.Tensor) -> torch.Tensor:
            return self.out(h)

    return ToyDecoder


def test_toy_decoder_passes(one_thread: None) -> None:
    check_decoder(_toy_decoder()(), vocab_size=11, input_dim=4)


def test_broken_decoders_fail_clearly(one_thread: None) -> None:
    import torch

    base = _toy_decoder()

    class Unnormalised(base):
        def _run(self, inputs, vectors, state):
            x = torch.cat([self.embed(inputs),
                           vectors.unsqueeze(1).expand(-1, inputs.size(1), -1)], dim=-1)
            h, state = self.rnn(x, state)
            return self.out(h), state

    class StepIgnoresState(base):
        def step(self, tokens, vectors, state):
            return super().step(tokens, vectors, self.initial_state(vectors))

    class ReorderIgnoresIndex(base):
        def reorder_state(self, state, index):
            return state[:, : index.numel()]

    class Peeks(base):
        """Sees the whole sequence: adds the mean of all inputs' embeddings at every step."""

        def forward(self, inputs, vectors):
            out = super().forward(inputs, vectors)
            future = self.logits_from_embedding(self.embed(inputs).mean(dim=1))
            return (out + future[:, None, :]).log_softmax(-1)

        def logits_from_embedding(self, embedded):
            return embedded.sum(dim=-1, keepdim=True) * torch.arange(11.0)

    class WrongVocab(base):
        def forward(self, inputs, vectors):
            return super().forward(inputs, vectors)[..., :-1]

    cases = [(Unnormalised, "not return normalised log-probabilities"),
             (StepIgnoresState, "step disagrees with forward at position 1"),
             (ReorderIgnoresIndex, "reorder_state does not select rows"),
             (WrongVocab, r"expected a tensor of shape \(3, 6, 11\)")]
    for broken, message in cases:
        with pytest.raises(AssertionError, match=message):
            check_decoder(broken(), vocab_size=11, input_dim=4)
    # Peeking changes both the causal prefix and step agreement; either message is right.
    with pytest.raises(AssertionError, match="not causal|step disagrees"):
        check_decoder(Peeks(), vocab_size=11, input_dim=4)
    with pytest.raises(AssertionError, match="is not a torch.nn.Module"):
        check_decoder(object(), vocab_size=11, input_dim=4)


# ------------------------------------------------------------------------ broken registrations


def test_registration_kit_reports_broken_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1]))
    from tests.fake_plugins import good_encoder, misspelt_hook, raises, wrong_type

    (info,) = check_registration(good_encoder)
    assert (info.kind, info.name) == ("encoder", "fake-length")
    for module, message in [(wrong_type, "factory must be callable"),
                            (misspelt_hook, "unknown hook 'register_encoder'"),
                            (raises, "raised RuntimeError")]:
        with pytest.raises(AssertionError, match=f"failed to register: .*{message}"):
            check_registration(module)


def test_registration_kit_spots_missing_hookimpl_marker() -> None:
    import types

    module = types.ModuleType("unmarked")

    def register_encoders(register: Any) -> None:
        register("unmarked", lambda options, context: None, description="x")

    module.register_encoders = register_encoders  # type: ignore[attr-defined]
    with pytest.raises(AssertionError, match=r"decorate register_encoders with @hookimpl "
                                             r"\(from harness\.plugin import hookimpl\)"):
        check_registration(module)


def test_registration_kit_warns_of_an_unmarked_hook_beside_a_marked_one() -> None:
    """A plugin whose encoders register but whose metric hook lacks @hookimpl would lose the
    metric silently: the kit warns."""
    import types

    from harness.registry.hookspecs import hookimpl

    module = types.ModuleType("half-marked")

    @hookimpl
    def register_encoders(register: Any) -> None:
        register("marked", lambda options, context: None, description="x")

    def register_metrics(register: Any) -> None:
        register("unmarked", lambda options, context: None, description="x")

    module.register_encoders = register_encoders  # type: ignore[attr-defined]
    module.register_metrics = register_metrics  # type: ignore[attr-defined]
    with pytest.warns(UserWarning, match="register_metrics is not marked @hookimpl"):
        (info,) = check_registration(module)
    assert info.name == "marked"


def test_registration_kit_calls_availability_as_harness_list_does() -> None:
    """An availability check written as the plugin guide shows takes `options` (None from
    `harness list`); one without parameters is called with none. Both pass the kit; one that
    raises or returns an empty message fails it."""
    import types

    from harness.registry.hookspecs import hookimpl

    seen: list[Any] = []

    def needs_options(options: Any) -> str | None:  # no default: called with options=None
        seen.append(options)
        return None

    def cannot_run() -> str:
        return "download it first"

    def broken(options: Any = None) -> str:
        raise OSError("disk gone")

    def check(availability: Any) -> list[Any]:
        module = types.ModuleType("with-availability")

        @hookimpl
        def register_encoders(register: Any) -> None:
            register("checked", lambda options, context: None, description="x",
                     availability=availability)

        module.register_encoders = register_encoders  # type: ignore[attr-defined]
        return check_registration(module)

    (info,) = check(needs_options)
    assert seen and all(s is None for s in seen) and info.status() == "ok"
    (info,) = check(cannot_run)
    assert info.status() == "unavailable: download it first"
    with pytest.raises(AssertionError, match=r"availability\(\) raised OSError: disk gone"):
        check(broken)
    with pytest.raises(AssertionError, match="availability\\(\\) returned ''"):
        check(lambda: "")


def test_registration_kit_warns_of_a_required_option_a_bare_name_leaves_out(
        tmp_path: Path) -> None:
    """An attack whose options require `pairs` (no default) registers and runs when a spec sets
    it, but a spec that lists it by bare name is refused by `harness validate` ("required field
    is missing"). The kit says so first, in one line naming the plugin, the attack, the option
    and what to do: a warning, as the core accepts the component when the spec sets it."""
    import types

    import pluggy
    from pydantic import Field

    from harness.errors import SpecError
    from harness.plugin import Inversion, Options, ThreatModel
    from harness.registry import hookspecs
    from harness.registry.hookspecs import hookimpl
    from harness.registry.loader import register_plugin
    from harness.spec.load import load_spec

    class NeedsPairs(Options):
        pairs: int = Field(ge=1, description="leaked pairs it is given")

    class Defaults(Options):
        pairs: int = Field(10, ge=1, description="leaked pairs it is given")

    class Vote:
        def __init__(self, options: Any, context: Any) -> None:
            self.threat = ThreatModel(leaked=options.pairs)
            self.label = f"vote-{options.pairs}"

        def fit(self, inputs: Any) -> None:
            pass

        def invert(self, vectors: Any) -> Inversion:
            return Inversion(sentences=["" for _ in vectors])

    module = types.ModuleType("needs-pairs")

    @hookimpl
    def register_attacks(register: Any) -> None:
        register("needs-pairs", Vote, options=NeedsPairs, description="needs its pairs")
        register("has-defaults", Vote, options=Defaults, description="pairs by default")

    module.register_attacks = register_attacks  # type: ignore[attr-defined]
    with pytest.warns(UserWarning) as caught:
        infos = check_registration(module, "v2s-needs")
    assert sorted(info.name for info in infos) == ["has-defaults", "needs-pairs"]
    assert [str(w.message) for w in caught] == [
        "plugin 'v2s-needs': attack 'needs-pairs': option `pairs` is required and has no "
        "default, so a spec that lists 'needs-pairs' by bare name is refused (`harness "
        "validate`: pairs: required field is missing); give `pairs` a default in NeedsPairs, "
        "or document that a spec must set it"]

    # the core: the bare name is refused with what the kit quoted; the option given, it loads
    registry = load_registry()
    manager = pluggy.PluginManager("harness")
    manager.add_hookspecs(hookspecs)
    assert register_plugin(manager, registry, module, "v2s-needs") is None
    spec = ("name: bare\n"
            "corpus:\n"
            "  train: {generate: quickstart, sentences: 200}\n"
            "  test: {generate: quickstart, sentences: 50, seed: 2}\n"
            "encoders: [avg]\n"
            "decoders: [mos-lstm]\n"
            "metrics: [token-f1, token-f1:content]\n"
            "privacy: {defences: [rotation], canaries: 0, attacks: [decoder, ATTACK]}\n"
            "analyses: [privacy]\n")
    bare, given = tmp_path / "bare.yaml", tmp_path / "given.yaml"
    bare.write_text(spec.replace("ATTACK", "needs-pairs"))
    given.write_text(spec.replace("ATTACK", "{name: needs-pairs, pairs: 10}"))
    with pytest.raises(SpecError, match=r"privacy\.attacks\.1\.pairs: required field is missing"):
        load_spec(bare, registry=registry)
    load_spec(given, registry=registry)
