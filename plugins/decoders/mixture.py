"""The Mixture of Softmaxes in log space, fused into two passes over the logits on CUDA.

    log P(w | c) = logsumexp_k( log pi_{c,k} + log softmax(l_{c,k})_w )

is Yang et al. (2018), eq. 2, in log space. Written out in eager PyTorch it materialises the
float32 log-softmax of every expert, the sum with the prior and the intermediates of the
logsumexp: about ten float32 tensors of B x T x K x V moved through GPU memory, which at the
paper's 5 experts and 10k-50k subwords is where large-vocabulary training and beam search spend
much of their time (docs/performance.md, "GPU"). Compiled (`torch.compile`), the same function
written per expert (`mixture_by_experts`) becomes one reduction over V per expert and one
element-wise pass over the K experts, reading the bf16 logits twice and writing only the
B x T x V result. CPU runs keep the eager form, and so their exact results.

The compiled function is specialised per number of experts, input rank and autograd mode
(training, validation, search), a handful of graphs per decoder. Past torch's recompilation
limit (`torch._dynamo.config.recompile_limit`, 8) a process computes new cases eagerly: the
same values, without the fusion's speed and memory savings.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import cast

import torch
import torch.nn.functional as F

log = logging.getLogger(__name__)

Mixture = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def mixture_log_probs(logits: torch.Tensor, log_prior: torch.Tensor) -> torch.Tensor:
    """Return log P (..., V) from expert logits (..., K, V) and log mixture weights (..., K),
    in float32, by the eager operations."""
    log_experts = F.log_softmax(logits.float(), dim=-1)
    return torch.logsumexp(log_prior.float().unsqueeze(-1) + log_experts, dim=-2)


def mixture_by_experts(logits: torch.Tensor, log_prior: torch.Tensor) -> torch.Tensor:
    """`mixture_log_probs` written for the compiler: each expert's logsumexp over V (a
    reduction along contiguous memory), then the logsumexp over the K experts unrolled into
    element-wise operations on K contiguous (..., V) slices, which fuse into one pass."""
    logits = logits.float()
    weights = log_prior.float() - torch.logsumexp(logits, dim=-1)  # log pi_k - log Z_k
    terms = [logits[..., k, :] + weights[..., k, None] for k in range(logits.size(-2))]
    top = terms[0]
    for term in terms[1:]:
        top = torch.maximum(top, term)
    # sum() of tensors is a tensor (the checker sees its start, 0); cast is a no-op to dynamo
    total = cast(torch.Tensor, sum(torch.exp(term - top) for term in terms))
    return top + torch.log(total)


class FusedMixture:
    """The compiled `mixture_by_experts`, built on first use, with an eager fallback: should
    compilation fail (no compiler for the device, say), a warning is logged and the eager form
    is used from then on in this process. Running out of memory is not a compilation failure
    and is raised as it is."""

    def __init__(self, compile_fn: Callable[..., Mixture] = torch.compile) -> None:
        self.enabled = True
        self._compile = compile_fn
        self._compiled: Mixture | None = None

    def __call__(self, logits: torch.Tensor, log_prior: torch.Tensor) -> torch.Tensor:
        if not self.enabled:
            return mixture_log_probs(logits, log_prior)
        try:
            if self._compiled is None:
                self._compiled = self._compile(mixture_by_experts, dynamic=True)
            return self._compiled(logits, log_prior)
        except torch.OutOfMemoryError:
            raise
        except Exception as error:  # noqa: BLE001 - a compiler failure of any kind
            log.warning("the fused mixture of softmaxes did not compile (%s: %s); using the "
                        "eager form", type(error).__name__, error)
            self.enabled = False
            return mixture_log_probs(logits, log_prior)


FUSED = FusedMixture()
"""The process's fused mixture; `FUSED.enabled = False` computes eagerly on CUDA too (the
benchmarks' "before" figures)."""


def mixture(logits: torch.Tensor, log_prior: torch.Tensor) -> torch.Tensor:
    """`mixture_log_probs`: fused (`FUSED`) for CUDA tensors, eager elsewhere."""
    if logits.is_cuda:
        return FUSED(logits, log_prior)
    return mixture_log_probs(logits, log_prior)
