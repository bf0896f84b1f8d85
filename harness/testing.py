"""Conformance checks that plugin authors call from their own tests (cf. scikit-learn's
`check_estimator`).

    from harness.testing import check_encoder, check_metric, check_registration

    import my_plugin

    def test_registration():
        check_registration(my_plugin)

    def test_encoder():
        check_encoder(my_plugin.MyEncoder(dim=32))

Each check raises `AssertionError` whose message says what is wrong and what to do, and returns
None when the component behaves as the core expects. The checks test what the core relies on:
shapes and dtypes, determinism, independence from batching, and for metrics the additive
statistics the core bootstraps. They are explicit `raise`s, not `assert` statements, so they also
run under `python -O`.

numpy is imported at module level; torch only inside `check_decoder`.
"""

from __future__ import annotations

import inspect
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.protocols import (
    ComponentInfo,
    ConditionalLanguageModel,
    Encoder,
    Metric,
    Options,
    TrainableEncoder,
)

if TYPE_CHECKING:
    import torch

__all__ = [
    "DEFAULT_SENTENCES",
    "check_decoder",
    "check_encoder",
    "check_metric",
    "check_registration",
]

DEFAULT_SENTENCES: tuple[str, ...] = (
    "the cat sat on the mat .",
    "a dog barked .",
    "hello",
    "she gave her brother a book about the history of rome yesterday .",
    "two plus two is four",
    "the the the the",
    "did you see the film , or did you read the book ?",
    "birds fly south in the winter .",
    "It was 1999 when Anna moved to Paris.",
)
"""Small English sentences of varied length, case, punctuation and repetition."""


def _fail(problem: str, advice: str) -> AssertionError:
    """An AssertionError saying what is wrong and what to do about it."""
    return AssertionError(f"{problem}. To fix: {advice}.")


def _name(component: object) -> str:
    return type(component).__name__


def _max_difference(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0.0))


# --------------------------------------------------------------------------------------- encoder


def _encode_checked(encoder: Any, sentences: list[str], dim: int, call: str,
                    batch_size: int | None = None) -> np.ndarray:
    """Return `encoder.encode(...)` after checking type, shape, dtype and finiteness."""
    name = _name(encoder)
    try:
        output = (encoder.encode(sentences) if batch_size is None
                  else encoder.encode(sentences, batch_size=batch_size))
    except Exception as exc:
        raise _fail(f"{name}.{call} raised {type(exc).__name__}: {exc}",
                    "encode(sentences, batch_size=256) must accept any list of strings, "
                    "including an empty list") from exc
    if not isinstance(output, np.ndarray):
        raise _fail(f"{name}.{call} returned {type(output).__name__}, not a numpy array",
                    "return np.asarray(...) of floats (convert torch tensors with "
                    ".detach().cpu().numpy())")
    expected = (len(sentences), dim)
    if output.shape != expected:
        raise _fail(f"{name}.{call} returned shape {output.shape}, expected {expected} "
                    f"({len(sentences)} sentences x dim {dim})",
                    "return one row per input sentence, each of length `dim`")
    if not np.issubdtype(output.dtype, np.floating):
        raise _fail(f"{name}.{call} returned dtype {output.dtype}",
                    "return a floating-point array (float32 is usual)")
    finite = np.isfinite(output)
    if not finite.all():
        row = int(np.flatnonzero(~finite.all(axis=1))[0])
        raise _fail(f"{name}.{call} returned a non-finite value (NaN or inf) in row {row}, "
                    f"sentence {sentences[row]!r}",
                    "guard divisions (e.g. normalising a zero vector, averaging zero tokens)")
    return output


def check_encoder(encoder: Any, sentences: Sequence[str] | None = None, *,
                  rtol: float = 1e-4, atol: float = 1e-5) -> None:
    """Return None if `encoder` behaves as the core expects of an `Encoder`; else raise.

    Checks that it satisfies the `harness.protocols.Encoder` protocol; `dim` is a positive int;
    `fingerprint()` is a non-empty string, the same on every call; `encode` returns a finite
    float array of shape (n, dim); encoding is deterministic; the result does not depend on
    `batch_size`, on the order of the sentences or on which other sentences share the batch; an
    empty list gives shape (0, dim). A `TrainableEncoder` must be fitted before the check; its
    `save`/`load` round trip must give the same vectors.

    `sentences` defaults to `DEFAULT_SENTENCES`; `rtol`/`atol` bound the numerical differences
    allowed between batchings (padding in batched models may cause tiny ones).
    """
    name = _name(encoder)
    if not isinstance(encoder, Encoder):
        missing = [m for m in ("dim", "fingerprint", "encode") if not hasattr(encoder, m)]
        raise _fail(f"{name} does not implement harness.protocols.Encoder (missing: "
                    f"{', '.join(missing) or 'nothing by name, but the protocol check failed'})",
                    "give it a `dim` property, `fingerprint() -> str` and "
                    "`encode(sentences, batch_size=256) -> np.ndarray`")
    sentences = list(DEFAULT_SENTENCES if sentences is None else sentences)
    if len(sentences) < 2:
        raise ValueError("check_encoder needs at least two sentences")

    dim = encoder.dim
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim <= 0:
        raise _fail(f"{name}.dim is {dim!r}", "`dim` must be a positive int (for a trainable "
                    "encoder, known once fitted: call fit before check_encoder)")
    dim = int(dim)

    fingerprint = encoder.fingerprint()
    if not isinstance(fingerprint, str) or not fingerprint.strip():
        raise _fail(f"{name}.fingerprint() returned {fingerprint!r}",
                    "return a non-empty string identifying options, weights and plugin version: "
                    "the cache keys encoded vectors on it")
    if encoder.fingerprint() != fingerprint:
        raise _fail(f"{name}.fingerprint() changed between two calls",
                    "derive it only from options, weights identity and version (no time, "
                    "random numbers or object ids), or the cache never hits")

    reference = _encode_checked(encoder, sentences, dim, "encode(sentences)")
    again = _encode_checked(encoder, sentences, dim, "encode(sentences) (second call)")
    if not np.allclose(reference, again, rtol=rtol, atol=atol):
        raise _fail(f"{name}.encode is not deterministic: two calls on the same sentences "
                    f"differ by up to {_max_difference(reference, again):.3g}",
                    "put the model in eval mode (no dropout) and seed any sampling")

    for batch_size in (1, 3, 64):
        batched = _encode_checked(encoder, sentences, dim,
                                  f"encode(sentences, batch_size={batch_size})", batch_size)
        if not np.allclose(reference, batched, rtol=rtol, atol=atol):
            raise _fail(f"{name}.encode depends on batch_size: batch_size={batch_size} differs "
                        f"from the default by up to {_max_difference(reference, batched):.3g}",
                        "encode each batch independently and mask padding so it does not "
                        "change the vectors")

    order = list(reversed(range(len(sentences))))
    reordered = _encode_checked(encoder, [sentences[i] for i in order], dim,
                                "encode(reversed sentences)")
    if not np.allclose(reference[order], reordered, rtol=rtol, atol=atol):
        raise _fail(f"{name}.encode depends on the order of the sentences (reversing the list "
                    f"changes rows by up to {_max_difference(reference[order], reordered):.3g})",
                    "a sentence's vector must depend on that sentence only (no batch statistics)")
    for row, sentence in enumerate(sentences):
        alone = _encode_checked(encoder, [sentence], dim, f"encode([{sentence!r}])")
        if not np.allclose(reference[row], alone[0], rtol=rtol, atol=atol):
            raise _fail(f"{name}.encode gives {sentence!r} a different vector alone than in a "
                        f"batch with other sentences (up to "
                        f"{_max_difference(reference[row], alone[0]):.3g})",
                        "a sentence's vector must depend on that sentence only (no batch "
                        "normalisation, shared padding lengths must be masked)")

    _encode_checked(encoder, [], dim, "encode([])")

    if isinstance(encoder, TrainableEncoder):
        with tempfile.TemporaryDirectory() as directory:
            encoder.save(Path(directory))
            encoder.load(Path(directory))
        restored = _encode_checked(encoder, sentences, dim, "encode(sentences) after save/load")
        if not np.allclose(reference, restored, rtol=rtol, atol=atol):
            raise _fail(f"{name}: vectors change after save() then load() (up to "
                        f"{_max_difference(reference, restored):.3g})",
                        "save every fitted parameter and restore it exactly in load()")


# ---------------------------------------------------------------------------------------- metric


def _default_pairs() -> tuple[list[str], list[str]]:
    """References and hypotheses covering identity, permutation, partial overlap and empty."""
    references = list(DEFAULT_SENTENCES[:8])
    hypotheses = [
        references[0],                                     # identical
        "barked a dog .",                                  # a permutation
        "hello there",                                     # longer
        "she gave her sister a book about rome .",         # partial overlap, shorter
        "",                                                # decoders can produce nothing
        "the the the the",                                 # identical, repeated words
        "did you see the book ?",                          # partial overlap
        "an entirely unrelated output sentence",           # unrelated
    ]
    return references, hypotheses


def _statistics_checked(metric: Any, references: list[str], hypotheses: list[str],
                        call: str) -> np.ndarray:
    """Return `metric.sentence_statistics(...)` as float64 after checking shape and values."""
    name = _name(metric)
    try:
        raw = metric.sentence_statistics(references, hypotheses)
    except Exception as exc:
        raise _fail(f"{name}.{call} raised {type(exc).__name__}: {exc}",
                    "sentence_statistics must accept any equal-length lists of strings, "
                    "including empty hypotheses") from exc
    stats = np.asarray(raw)
    if stats.ndim != 2 or stats.shape[0] != len(references) or stats.shape[1] < 1:
        raise _fail(f"{name}.{call} returned shape {stats.shape}, expected "
                    f"({len(references)}, k) with k >= 1",
                    "return one row of additive statistics per (reference, hypothesis) pair")
    if not np.issubdtype(stats.dtype, np.number) or np.issubdtype(stats.dtype, np.complexfloating):
        raise _fail(f"{name}.{call} returned dtype {stats.dtype}",
                    "return real numbers (counts or sums)")
    stats = stats.astype(np.float64)
    if not np.isfinite(stats).all():
        row = int(np.flatnonzero(~np.isfinite(stats).all(axis=1))[0])
        raise _fail(f"{name}.{call} returned a non-finite statistic in row {row} "
                    f"(reference {references[row]!r}, hypothesis {hypotheses[row]!r})",
                    "statistics must be finite so the core can sum and resample them; divide "
                    "only in corpus_score")
    return stats


def _score_checked(metric: Any, totals: np.ndarray, count: int, call: str,
                   score_range: tuple[float, float] | None) -> float:
    """Return a scalar `corpus_score` as a float after checking it is finite and in range."""
    name = _name(metric)
    before = totals.copy()
    try:
        raw = metric.corpus_score(totals, count)
    except Exception as exc:
        raise _fail(f"{name}.{call} raised {type(exc).__name__}: {exc}",
                    "corpus_score(totals, count) must accept summed statistics of shape (k,) "
                    "or (..., k)") from exc
    if not np.array_equal(before, totals):
        raise _fail(f"{name}.{call} modified the totals array it was given",
                    "copy before changing (the core reuses totals across bootstrap resamples)")
    value = np.asarray(raw)
    if value.shape != () or not np.issubdtype(value.dtype, np.number):
        raise _fail(f"{name}.{call} returned {raw!r} (shape {value.shape}) for totals of shape "
                    f"{totals.shape}", "return one number for a (k,) vector of totals")
    score = float(value)
    if np.isinf(score):
        raise _fail(f"{name}.{call} returned {score}", "return a finite score, or NaN where the "
                    "score is undefined (e.g. an empty denominator)")
    if np.isnan(score):
        return score  # undefined for these statistics: allowed, and left out of intervals
    # A little slack: e.g. BLEU of identical text is exp(mean(log 100)) = 100.00000000000004.
    slack = 1e-9 * max(1.0, abs(score))
    if score_range is not None and not score_range[0] - slack <= score <= score_range[1] + slack:
        raise _fail(f"{name}.{call} returned {score}, outside [{score_range[0]}, "
                    f"{score_range[1]}]", "report scores on the paper's 0-100 scale, or pass "
                    "score_range=None/(low, high) to check_metric for another scale")
    return score


def check_metric(metric: Any, references: Sequence[str] | None = None,
                 hypotheses: Sequence[str] | None = None, *,
                 score_range: tuple[float, float] | None = (0.0, 100.0),
                 higher_is_better: bool = True, batches: int = 5, seed: int = 0) -> None:
    """Return None if `metric` behaves as the core expects of a `Metric`; else raise.

    Checks that it satisfies `harness.protocols.Metric`; `sentence_statistics` returns a finite
    (n, k) array, the same on every call, whose rows depend only on their own pair (the core
    bootstraps by resampling rows); `corpus_score` of the summed statistics is one finite number
    in `score_range` (the paper's 0-100 scale by default) and leaves its input unchanged;
    `corpus_score` over a (B, k) batch of totals equals B separate calls (the core scores all
    bootstrap resamples at once, and per-sentence scores as `corpus_score(stats, 1)`); identical
    hypotheses score at least as well as different ones (`higher_is_better=False` reverses it).

    The default pairs include identical, permuted, partially overlapping, unrelated and empty
    hypotheses.
    """
    name = _name(metric)
    if not isinstance(metric, Metric):
        raise _fail(f"{name} does not implement harness.protocols.Metric",
                    "give it `sentence_statistics(references, hypotheses) -> (n, k) array` and "
                    "`corpus_score(totals, count) -> score(s)`")
    if (references is None) != (hypotheses is None):
        raise ValueError("pass both references and hypotheses, or neither")
    if references is None or hypotheses is None:
        references, hypotheses = _default_pairs()
    references, hypotheses = list(references), list(hypotheses)
    if len(references) != len(hypotheses) or len(references) < 2:
        raise ValueError("check_metric needs two or more (reference, hypothesis) pairs")
    n = len(references)

    stats = _statistics_checked(metric, references, hypotheses, "sentence_statistics(refs, hyps)")
    k = stats.shape[1]
    again = _statistics_checked(metric, references, hypotheses,
                                "sentence_statistics(refs, hyps) (second call)")
    if not np.array_equal(stats, again):
        raise _fail(f"{name}.sentence_statistics is not deterministic",
                    "seed or remove any randomness: the cache stores statistics once")
    for row in range(n):
        alone = _statistics_checked(metric, references[row:row + 1], hypotheses[row:row + 1],
                                    f"sentence_statistics on pair {row} alone")
        if alone.shape[1] != k or not np.allclose(alone[0], stats[row]):
            raise _fail(f"{name}.sentence_statistics gives pair {row} ({references[row]!r}, "
                        f"{hypotheses[row]!r}) different statistics alone than among other pairs",
                        "each row must depend on its own pair only: put corpus-level "
                        "computation in corpus_score")

    _score_checked(metric, stats.sum(axis=0), n, "corpus_score(stats.sum(axis=0), n)",
                   score_range)

    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=batches).astype(np.float64)
    totals = counts @ stats
    try:
        batched = np.asarray(metric.corpus_score(totals.copy(), n), dtype=np.float64)
    except Exception as exc:
        raise _fail(f"{name}.corpus_score on a ({batches}, {k}) batch of totals raised "
                    f"{type(exc).__name__}: {exc}",
                    "index statistics as totals[..., j] so leading batch dimensions work") from exc
    looped = np.array([_score_checked(metric, totals[b], n, f"corpus_score(resample {b}, n)",
                                      score_range) for b in range(batches)])
    if batched.shape != (batches,) or not np.allclose(batched, looped, equal_nan=True):
        raise _fail(f"{name}.corpus_score over a ({batches}, {k}) batch of totals returned "
                    f"{batched.tolist() if batched.size <= 10 else batched.shape} but one call "
                    f"per row gives {looped.tolist()}",
                    "vectorise over leading dimensions: index totals[..., j], never totals[j]")
    per_sentence = np.asarray(metric.corpus_score(stats.copy(), 1), dtype=np.float64)
    if per_sentence.shape != (n,) or np.isinf(per_sentence).any():
        raise _fail(f"{name}.corpus_score(stats, 1) returned shape {per_sentence.shape} or "
                    "infinite values; the core reads it as per-sentence scores",
                    "vectorise over leading dimensions; return NaN only where a score is "
                    "undefined")

    identical = _statistics_checked(metric, references, references,
                                    "sentence_statistics(refs, refs)")
    best = _score_checked(metric, identical.sum(axis=0), n, "corpus_score of identical pairs",
                          score_range)
    shifted = references[1:] + references[:1]
    different = _statistics_checked(metric, references, shifted,
                                    "sentence_statistics(refs, other sentences)")
    worse = _score_checked(metric, different.sum(axis=0), n, "corpus_score of different pairs",
                           score_range)
    # An undefined score for unrelated pairs (NaN: Id/PERM without permutations) has no order
    # to check; identical pairs must have a defined one.
    ordered = np.isnan(worse) or (best >= worse if higher_is_better else best <= worse)
    if np.isnan(best) or not ordered:
        raise _fail(f"{name}: hypotheses identical to their references score {best}, "
                    f"unrelated ones {worse}", "identical output must score at least as well; "
                    "pass higher_is_better=False for a metric where lower is better")


# --------------------------------------------------------------------------------------- decoder


def check_decoder(model: Any, vocab_size: int, input_dim: int, *, batch_size: int = 3,
                  length: int = 6, seed: int = 0, atol: float = 1e-4) -> None:
    """Return None if `model` behaves as the core expects of a `ConditionalLanguageModel`.

    Checks that it is a `torch.nn.Module` implementing the protocol; `forward(inputs, vectors)`
    returns finite log-probabilities of shape (B, T, V) that are normalised (logsumexp over V is
    0) and causal (a prefix's outputs do not change when tokens are appended); stepping through
    a sequence with `initial_state`/`step` gives the same log-probabilities as `forward`;
    `reorder_state` selects rows, duplicates included, as beam search needs; and a loss on the
    output back-propagates to some parameter. Runs in eval mode and restores the model's mode.
    """
    import torch

    name = _name(model)
    if not isinstance(model, torch.nn.Module):
        raise _fail(f"{name} is not a torch.nn.Module", "subclass torch.nn.Module: the core's "
                    "trainer moves, trains and saves it as one")
    if not isinstance(model, ConditionalLanguageModel):
        missing = [m for m in ("forward", "initial_state", "step", "reorder_state")
                   if not hasattr(model, m)]
        raise _fail(f"{name} does not implement harness.protocols.ConditionalLanguageModel "
                    f"(missing: {', '.join(missing)})",
                    "implement forward, initial_state, step and reorder_state")
    if batch_size < 2 or length < 2:
        raise ValueError("check_decoder needs batch_size >= 2 and length >= 2")

    parameters = list(model.parameters())
    device = parameters[0].device if parameters else torch.device("cpu")
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randint(0, vocab_size, (batch_size, length), generator=generator).to(device)
    vectors = torch.randn(batch_size, input_dim, generator=generator).to(device)

    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            full = _forward_checked(model, inputs, vectors, vocab_size)
            _check_causal(model, inputs, vectors, full, atol)
            _check_steps(model, inputs, vectors, full, atol)
            _check_reorder(model, inputs, vectors, atol)
        _check_gradient(model, inputs, vectors)
    finally:
        model.train(was_training)


def _forward_checked(model: Any, inputs: torch.Tensor, vectors: torch.Tensor,
                     vocab_size: int) -> torch.Tensor:
    """Return `model(inputs, vectors)` after checking shape, finiteness and normalisation."""
    import torch

    name = _name(model)
    try:
        out = model(inputs, vectors)
    except Exception as exc:
        raise _fail(f"{name}.forward(inputs {tuple(inputs.shape)}, vectors "
                    f"{tuple(vectors.shape)}) raised {type(exc).__name__}: {exc}",
                    "forward takes token ids (B, T) and sentence vectors (B, D)") from exc
    expected = (inputs.size(0), inputs.size(1), vocab_size)
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != expected:
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise _fail(f"{name}.forward returned {shape}, expected a tensor of shape {expected}",
                    "return next-token log-probabilities for every position")
    if not torch.isfinite(out).all():
        raise _fail(f"{name}.forward returned non-finite log-probabilities",
                    "compute log_softmax in float32 and avoid log(0)")
    total = torch.logsumexp(out.double(), dim=-1)
    worst = float(total.abs().max())
    if worst > 1e-3:
        raise _fail(f"{name}.forward does not return normalised log-probabilities "
                    f"(logsumexp over the vocabulary is off by up to {worst:.3g})",
                    "return log_softmax(logits), not logits or probabilities")
    return out


def _check_causal(model: Any, inputs: torch.Tensor, vectors: torch.Tensor, full: torch.Tensor,
                  atol: float) -> None:
    prefix = inputs.size(1) // 2
    head = model(inputs[:, :prefix], vectors)
    difference = float((head - full[:, :prefix]).abs().max())
    if difference > atol:
        raise _fail(f"{_name(model)}.forward is not causal: the log-probabilities of the first "
                    f"{prefix} positions change by {difference:.3g} when later tokens are "
                    "appended", "position t may only see inputs[:, :t+1] (and the vector)")


def _check_steps(model: Any, inputs: torch.Tensor, vectors: torch.Tensor, full: torch.Tensor,
                 atol: float) -> None:
    name = _name(model)
    state = model.initial_state(vectors)
    for t in range(inputs.size(1)):
        log_probs, state = model.step(inputs[:, t], vectors, state)
        if tuple(log_probs.shape) != (inputs.size(0), full.size(-1)):
            raise _fail(f"{name}.step returned shape {tuple(log_probs.shape)}, expected "
                        f"{(inputs.size(0), full.size(-1))}", "step returns (B, V) "
                        "log-probabilities for one token per row, and the new state")
        difference = float((log_probs - full[:, t]).abs().max())
        if difference > atol:
            raise _fail(f"{name}.step disagrees with forward at position {t} (by "
                        f"{difference:.3g})", "initial_state + step must reproduce forward "
                        "exactly: search uses step, training uses forward")


def _check_reorder(model: Any, inputs: torch.Tensor, vectors: torch.Tensor, atol: float) -> None:
    import torch

    name = _name(model)
    state = model.initial_state(vectors)
    for t in range(inputs.size(1) - 1):
        _, state = model.step(inputs[:, t], vectors, state)
    batch, last = inputs.size(0), inputs[:, -1]
    expected, _ = model.step(last, vectors, state)
    # Beam search keeps surviving hypotheses (rows repeated and reordered), and greedy search
    # drops finished rows (fewer rows).
    indexes = ([batch - 1] + [0] * (batch - 1), list(range(1, batch)))
    for rows in indexes:
        index = torch.tensor(rows, dtype=torch.long, device=inputs.device)
        try:
            reordered = model.reorder_state(state, index)
            got, _ = model.step(last[index], vectors[index], reordered)
        except Exception as exc:
            raise _fail(f"{name}.reorder_state(state, index={rows}) then step failed with "
                        f"{type(exc).__name__}: {exc}", "select rows `index` (any length, "
                        "repeats allowed) of every state tensor") from exc
        difference = float((got - expected[index]).abs().max())
        if difference > atol:
            raise _fail(f"{name}.reorder_state does not select rows {rows} of the state "
                        f"(next-step log-probabilities differ by {difference:.3g})",
                        "index the batch dimension of every state tensor, e.g. "
                        "h.index_select(batch_dim, index)")


def _check_gradient(model: Any, inputs: torch.Tensor, vectors: torch.Tensor) -> None:
    import torch

    trainable = [p for p in model.parameters() if p.requires_grad]
    if not trainable:
        raise _fail(f"{_name(model)} has no trainable parameters", "the core trains the decoder")
    # autograd.grad leaves the parameters' .grad untouched, so the caller's model is unchanged.
    loss = -model(inputs, vectors)[:, :, 0].sum()
    grads = torch.autograd.grad(loss, trainable, allow_unused=True)
    if all(g is None or not bool(g.abs().sum() > 0) for g in grads):
        raise _fail(f"{_name(model)}: the loss on forward's output has no gradient for any "
                    "trainable parameter", "build the output from the parameters with torch ops "
                    "(no .detach(), .numpy() or torch.no_grad() inside forward)")


# ---------------------------------------------------------------------------------- registration


def check_registration(plugin_module: Any, name: str = "plugin-under-test") -> list[ComponentInfo]:
    """Return what `plugin_module` registers, after checking it registers valid components.

    Registers the module with a fresh plugin manager exactly as `harness.plugins.load_registry`
    does for an entry point: misspelt hook names are refused (pluggy's `check_pending`), each hook
    is called with a `register` callback whose arguments are validated by
    `harness.registry.make_info`, and a hook that raises fails the plugin. Then checks that
    something was registered and that each availability check returns None or a message.
    Whether factories stay cheap to register (no heavy imports) is not checkable here.
    """
    import pluggy

    from harness import hookspecs
    from harness.plugins import register_plugin
    from harness.registry import Registry

    manager = pluggy.PluginManager("harness")
    manager.add_hookspecs(hookspecs)
    registry = Registry()
    error = register_plugin(manager, registry, plugin_module, name)
    if error:
        raise _fail(f"plugin {name!r} failed to register: {error}",
                    "`harness list` would show it under failed plugins; fix the hook or the "
                    "arguments it passes to register(...)")
    infos = list(registry)
    if not infos:
        hooks = sorted(hookspecs.HOOK_FOR_KIND.values())
        unmarked = [h for h in hooks if callable(getattr(plugin_module, h, None))]
        advice = (f"decorate {', '.join(unmarked)} with @harness.hookspecs.hookimpl"
                  if unmarked else f"implement one of {', '.join(hooks)} with "
                  "@harness.hookspecs.hookimpl and call register(name, factory, ...)")
        raise _fail(f"plugin {name!r} registers no component", advice)
    for info in infos:
        _check_info(info)
    return infos


def _check_info(info: ComponentInfo) -> None:
    """Raise if a registered component's metadata would misbehave in `harness list` or a run."""
    label = f"{info.kind} {info.name!r}"
    if info.availability is not None:
        try:
            reason = info.availability()
        except Exception as exc:
            raise _fail(f"{label}: availability() raised {type(exc).__name__}: {exc}",
                        "return None when the component can run, else a message saying what "
                        "to install or download") from exc
        if reason is not None and (not isinstance(reason, str) or not reason.strip()):
            raise _fail(f"{label}: availability() returned {reason!r}",
                        "return None, or a non-empty message such as 'pip install foo'")
    if not info.description:
        raise _fail(f"{label} has no description", "pass description='...' to register: "
                    "`harness list` shows it")
    if not issubclass(info.options, Options):
        raise _fail(f"{label}: options is not an Options subclass",
                    "subclass harness.protocols.Options")
    try:
        info.options.model_json_schema()
    except Exception as exc:
        raise _fail(f"{label}: its options class has no JSON schema ({exc})",
                    "use plain JSON-compatible field types (int, float, str, bool, lists, "
                    "Literal)") from exc
    try:
        parameters = inspect.signature(info.factory).parameters
    except (TypeError, ValueError):
        return  # builtins and some C callables have no signature; nothing more to check
    positional = [p for p in parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    if len(positional) < 2 and not any(p.kind is p.VAR_POSITIONAL for p in positional):
        raise _fail(f"{label}: factory {getattr(info.factory, '__name__', info.factory)!r} "
                    f"takes {len(positional)} positional argument(s)",
                    "the core calls factory(options, context): accept both")
