"""First-party metrics of Vec2Sent (Kerscher & Eger 2020, section 2): Id, PERM, Id/PERM and BLEU.

Registration imports neither numpy nor sacrebleu, so `harness list` stays fast: each factory
imports its metric's module when a run first builds it.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from harness.hookspecs import Register, hookimpl
from harness.protocols import Options

if TYPE_CHECKING:
    from harness.protocols import BuildContext

    from .bleu import BleuMetric
    from .overlap import IdentityMetric, IdentityPerPermutationMetric, PermutationMetric


class BleuOptions(Options):
    """Options of corpus BLEU, passed to sacrebleu (its defaults; paper section 2)."""

    tokenize: str = Field("13a", description="sacrebleu tokenizer (13a, intl, char, none, ...)")
    lowercase: bool = Field(False, description="compare lower-cased text")
    smooth_method: Literal["exp", "floor", "add-k", "none"] = Field(
        "exp", description="smoothing of n-gram orders without matches (sacrebleu's methods)")

    @field_validator("tokenize")
    @classmethod
    def _known_tokenizer(cls, value: str) -> str:
        # Imported here, at validation time, so that listing the registry never loads sacrebleu.
        from sacrebleu.metrics.bleu import BLEU

        if value not in BLEU.TOKENIZERS:
            raise ValueError(f"unknown tokenizer {value!r}; sacrebleu offers "
                             f"{', '.join(BLEU.TOKENIZERS)}")
        return value


def _build_id(options: Options, context: BuildContext) -> IdentityMetric:
    """A new Id metric."""
    from .overlap import IdentityMetric

    return IdentityMetric()


def _build_perm(options: Options, context: BuildContext) -> PermutationMetric:
    """A new PERM metric."""
    from .overlap import PermutationMetric

    return PermutationMetric()


def _build_id_perm(options: Options, context: BuildContext) -> IdentityPerPermutationMetric:
    """A new Id/PERM metric."""
    from .overlap import IdentityPerPermutationMetric

    return IdentityPerPermutationMetric()


def _build_bleu(options: BleuOptions, context: BuildContext) -> BleuMetric:
    """A new corpus BLEU metric (imports sacrebleu on first use)."""
    from .bleu import BleuMetric

    return BleuMetric(tokenize=options.tokenize, lowercase=options.lowercase,
                      smooth_method=options.smooth_method)


def _sacrebleu_missing() -> str | None:
    """None when sacrebleu can be imported, else how to install it (finds it without importing)."""
    if importlib.util.find_spec("sacrebleu") is None:
        return "pip install sacrebleu"
    return None


@hookimpl
def register_metrics(register: Register) -> None:
    """Register the diagnostic tests of Vec2Sent (Kerscher & Eger 2020, section 2)."""
    register("id", _build_id, options=Options,
             description="Id: % of generated sentences identical to the input")
    register("perm", _build_perm, options=Options,
             description="PERM: % of generated sentences that permute the input's words "
                         "(identical ones included)")
    register("id-perm", _build_id_perm, options=Options,
             description="Id/PERM: % of permutations of the input that are exact "
                         "(0 without permutations)")
    register("bleu", _build_bleu, options=BleuOptions, availability=_sacrebleu_missing,
             description="corpus BLEU of generated sentences against their inputs (sacrebleu)")
