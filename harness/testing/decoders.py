"""`check_decoder`: what the core's trainer and searches rely on a decoder for (torch is imported
inside the check)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.protocols import ConditionalLanguageModel
from harness.testing.failures import fail, name_of

if TYPE_CHECKING:
    import torch


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

    name = name_of(model)
    if not isinstance(model, torch.nn.Module):
        raise fail(f"{name} is not a torch.nn.Module", "subclass torch.nn.Module: the core's "
                   "trainer moves, trains and saves it as one")
    if not isinstance(model, ConditionalLanguageModel):
        missing = [m for m in ("forward", "initial_state", "step", "reorder_state")
                   if not hasattr(model, m)]
        raise fail(f"{name} does not implement harness.protocols.ConditionalLanguageModel "
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

    name = name_of(model)
    try:
        out = model(inputs, vectors)
    except Exception as exc:
        raise fail(f"{name}.forward(inputs {tuple(inputs.shape)}, vectors "
                   f"{tuple(vectors.shape)}) raised {type(exc).__name__}: {exc}",
                   "forward takes token ids (B, T) and sentence vectors (B, D)") from exc
    expected = (inputs.size(0), inputs.size(1), vocab_size)
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != expected:
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise fail(f"{name}.forward returned {shape}, expected a tensor of shape {expected}",
                   "return next-token log-probabilities for every position")
    if not torch.isfinite(out).all():
        raise fail(f"{name}.forward returned non-finite log-probabilities",
                   "compute log_softmax in float32 and avoid log(0)")
    total = torch.logsumexp(out.double(), dim=-1)
    worst = float(total.abs().max())
    if worst > 1e-3:
        raise fail(f"{name}.forward does not return normalised log-probabilities "
                   f"(logsumexp over the vocabulary is off by up to {worst:.3g})",
                   "return log_softmax(logits), not logits or probabilities")
    return out


def _check_causal(model: Any, inputs: torch.Tensor, vectors: torch.Tensor, full: torch.Tensor,
                  atol: float) -> None:
    prefix = inputs.size(1) // 2
    head = model(inputs[:, :prefix], vectors)
    difference = float((head - full[:, :prefix]).abs().max())
    if difference > atol:
        raise fail(f"{name_of(model)}.forward is not causal: the log-probabilities of the first "
                   f"{prefix} positions change by {difference:.3g} when later tokens are "
                   "appended", "position t may only see inputs[:, :t+1] (and the vector)")


def _check_steps(model: Any, inputs: torch.Tensor, vectors: torch.Tensor, full: torch.Tensor,
                 atol: float) -> None:
    name = name_of(model)
    state = model.initial_state(vectors)
    for t in range(inputs.size(1)):
        log_probs, state = model.step(inputs[:, t], vectors, state)
        if tuple(log_probs.shape) != (inputs.size(0), full.size(-1)):
            raise fail(f"{name}.step returned shape {tuple(log_probs.shape)}, expected "
                       f"{(inputs.size(0), full.size(-1))}", "step returns (B, V) "
                       "log-probabilities for one token per row, and the new state")
        difference = float((log_probs - full[:, t]).abs().max())
        if difference > atol:
            raise fail(f"{name}.step disagrees with forward at position {t} (by "
                       f"{difference:.3g})", "initial_state + step must reproduce forward "
                       "exactly: search uses step, training uses forward")


def _check_reorder(model: Any, inputs: torch.Tensor, vectors: torch.Tensor, atol: float) -> None:
    import torch

    name = name_of(model)
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
            raise fail(f"{name}.reorder_state(state, index={rows}) then step failed with "
                       f"{type(exc).__name__}: {exc}", "select rows `index` (any length, "
                       "repeats allowed) of every state tensor") from exc
        difference = float((got - expected[index]).abs().max())
        if difference > atol:
            raise fail(f"{name}.reorder_state does not select rows {rows} of the state "
                       f"(next-step log-probabilities differ by {difference:.3g})",
                       "index the batch dimension of every state tensor, e.g. "
                       "h.index_select(batch_dim, index)")


def _check_gradient(model: Any, inputs: torch.Tensor, vectors: torch.Tensor) -> None:
    import torch

    trainable = [p for p in model.parameters() if p.requires_grad]
    if not trainable:
        raise fail(f"{name_of(model)} has no trainable parameters", "the core trains the decoder")
    # autograd.grad leaves the parameters' .grad untouched, so the caller's model is unchanged.
    loss = -model(inputs, vectors)[:, :, 0].sum()
    grads = torch.autograd.grad(loss, trainable, allow_unused=True)
    if all(g is None or not bool(g.abs().sum() > 0) for g in grads):
        raise fail(f"{name_of(model)}: the loss on forward's output has no gradient for any "
                   "trainable parameter", "build the output from the parameters with torch ops "
                   "(no .detach(), .numpy() or torch.no_grad() inside forward)")
