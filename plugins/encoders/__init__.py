"""First-party sentence encoders, registered through the same hook as third-party ones.

Registration imports no model code: each factory imports its module when a run builds it, and
the options classes here need only pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator

from harness.hookspecs import Register, hookimpl
from harness.protocols import Options

if TYPE_CHECKING:
    from harness.protocols import BuildContext


class WindowOptions(Options):
    """Options of the encoders with hierarchical pooling (SWEM-hier, Shen et al. 2018)."""

    window: int = Field(3, ge=1, description="subwords per averaged window (paper: 3)")


class GemOptions(Options):
    """Options of GEM (Yang et al. 2018); defaults are the paper's, for 300-d word vectors."""

    window: int = Field(7, ge=1, description="context words on each side of a word, m (paper: 7)")
    k: int = Field(45, ge=1, description="corpus principal vectors removed from every sentence "
                                         "vector, K (paper: 45 of 300 dimensions)")
    h: int = Field(17, ge=1, description="sentence-dependent principal vectors in the "
                                         "uniqueness score (paper: 17)")
    sigma_power: float = Field(3.0, gt=0, description="power of the singular values in the "
                                                      "coarse sentence embeddings (paper: 3)")

    @model_validator(mode="after")
    def _h_within_k(self) -> GemOptions:
        if self.h > self.k:
            raise ValueError(f"h={self.h} must not exceed k={self.k}: the uniqueness score picks "
                             "h of the k principal vectors")
        return self


def _build_avg(options: Options, context: BuildContext) -> Any:
    from .pooling import AverageEncoder, context_vocab

    return AverageEncoder(context_vocab(context, "avg"), options)


def _build_hier(options: Options, context: BuildContext) -> Any:
    from .pooling import HierarchicalEncoder, context_vocab

    return HierarchicalEncoder(context_vocab(context, "hier"), options)


def _build_avg_max_hier(options: Options, context: BuildContext) -> Any:
    from .pooling import AvgMaxHierEncoder, context_vocab

    return AvgMaxHierEncoder(context_vocab(context, "avg-max-hier"), options)


def _build_gem(options: Options, context: BuildContext) -> Any:
    from .gem import GeometricEmbedding
    from .pooling import context_vocab

    return GeometricEmbedding(context_vocab(context, "gem"), options)


@hookimpl
def register_encoders(register: Register) -> None:
    """Register the pooling encoders and GEM over the run's subword vectors."""
    register("avg", _build_avg, options=Options,
             description="average of the sentence's subword vectors (BPEmb-like, frozen)")
    register("hier", _build_hier, options=WindowOptions,
             description="max over averaged 3-subword windows (SWEM-hier, Shen et al. 2018)")
    register("avg-max-hier", _build_avg_max_hier, options=WindowOptions,
             description="[avg; max; hier] pooling of subword vectors, 3x dim (Rücklé et al. 2018)")
    register("gem", _build_gem, options=GemOptions, trainable=True,
             description="geometric embedding: orthogonal-basis word weights (Yang et al. 2018)")
