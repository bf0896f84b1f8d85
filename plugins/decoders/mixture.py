"""The Mixture of Softmaxes in log space, fused into two passes over the logits on CUDA.

    log P(w | c) = logsumexp_k( log pi_{c,k} + log softmax(l_{c,k})_w )

is Yang et al. (2018), eq. 2, in log space. Written out in eager PyTorch it materialises the
float32 log-softmax of every expert, the sum with the prior and the intermediates of the
logsumexp: about ten float32 tensors of B x T x K x V moved through GPU memory, which at the
paper's 5 experts and 10k-50k subwords is where beam search and large-vocabulary training spend
their time (docs/performance.md, "GPU"). Compiled (`torch.compile`), the same function written
per expert (`_mixture_by_experts`) becomes one reduction over V per expert and one element-wise
pass over the K experts, reading the bf16 logits twice and writing only the B x T x V result.
CPU runs keep the eager form, and so their exact results.
"""

from __future__ import annotations

import logging

import torch
import torch.nn.functional as F

log = logging.getLogger(__name__)

FUSE_ON_CUDA = True
"""Use the compiled form on CUDA tensors (benchmarks/perf turn it off for the eager figures)."""

_compiled = None


def mixture_log_probs(logits: torch.Tensor, log_prior: torch.Tensor) -> torch.Tensor:
    """Return log P (..., V) from expert logits (..., K, V) and log mixture weights (..., K),
    in float32, by the eager operations."""
    log_experts = F.log_softmax(logits.float(), dim=-1)
    return torch.logsumexp(log_prior.float().unsqueeze(-1) + log_experts, dim=-2)


def _mixture_by_experts(logits: torch.Tensor, log_prior: torch.Tensor) -> torch.Tensor:
    """The same function, written for the compiler: each expert's logsumexp over V (a
    reduction along contiguous memory), then the logsumexp over the K experts unrolled into
    element-wise operations on K contiguous (..., V) slices, which fuse into one pass."""
    logits = logits.float()
    weights = log_prior.float() - torch.logsumexp(logits, dim=-1)  # log pi_k - log Z_k
    terms = [logits[..., k, :] + weights[..., k, None] for k in range(logits.size(-2))]
    top = terms[0]
    for term in terms[1:]:
        top = torch.maximum(top, term)
    total = sum(torch.exp(term - top) for term in terms)
    return top + torch.log(total)


def mixture(logits: torch.Tensor, log_prior: torch.Tensor) -> torch.Tensor:
    """`mixture_log_probs`, compiled into fused kernels for CUDA tensors (compiled once per
    process, shapes symbolic, so that shrinking beam-search batches reuse it). Should the
    compilation fail, the eager form is used from then on, with a warning."""
    global _compiled, FUSE_ON_CUDA
    if not (FUSE_ON_CUDA and logits.is_cuda):
        return mixture_log_probs(logits, log_prior)
    if _compiled is None:
        _compiled = torch.compile(_mixture_by_experts, dynamic=True)
    try:
        return _compiled(logits, log_prior)
    except Exception as error:  # noqa: BLE001 - any compiler failure: fall back, never fail
        log.warning("the fused mixture of softmaxes did not compile (%s: %s); using the "
                    "eager form", type(error).__name__, error)
        FUSE_ON_CUDA = False
        return mixture_log_probs(logits, log_prior)
