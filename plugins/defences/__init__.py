"""First-party defences, registered through the same hook third-party ones use
(`register_defences`): transforms a store of embeddings applies to its vectors so that a
decoder cannot read the text back (docs/privacy.md). Each options class names, in `LEVEL`, the
option a spec's levels vary (empty for a defence with one setting). Registration imports no
transform: the factories import `transforms` when a run builds them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, model_validator

from harness.plugin import Options, Register, hookimpl

if TYPE_CHECKING:
    from harness.plugin import BuildContext, Defence


class DefenceOptions(Options):
    """Options of a defence; `LEVEL` names the one its levels vary."""

    LEVEL: ClassVar[str] = ""


class GaussianOptions(DefenceOptions):
    LEVEL: ClassVar[str] = "scale"

    scale: float = Field(0.5, gt=0, description="noise standard deviation, in units of each "
                                                "dimension's spread over the training vectors")


class LaplaceOptions(DefenceOptions):
    LEVEL: ClassVar[str] = "epsilon"

    epsilon: float = Field(1.0, gt=0, description="the privacy budget per vector (local DP)")
    clip_quantile: float = Field(0.5, gt=0, le=1, description="the L1 norm every vector is "
                                 "clipped to, as a quantile of the training vectors' L1 norms")


class GaussianDpOptions(DefenceOptions):
    LEVEL: ClassVar[str] = "epsilon"

    epsilon: float = Field(0.5, gt=0, description="the privacy budget per vector (local DP); "
                                                  "below 1 with the classic calibration")
    delta: float = Field(1e-5, gt=0, lt=1, description="the probability the epsilon bound may "
                                                        "fail, per vector")
    clip_quantile: float = Field(0.5, gt=0, le=1, description="the L2 norm every vector is "
                                 "clipped to, as a quantile of the training vectors' L2 norms")
    calibration: Literal["classic", "analytic"] = Field(
        "classic", description="sigma from Dwork & Roth's Theorem A.1 (epsilon < 1) or the "
                               "analytic Gaussian mechanism (Balle & Wang 2018, any epsilon)")

    @model_validator(mode="after")
    def _classic_below_one(self) -> GaussianDpOptions:
        if self.calibration == "classic" and self.epsilon >= 1:
            raise ValueError(f"the classic calibration holds for epsilon < 1 (Dwork & Roth "
                             f"2014, Theorem A.1), not {self.epsilon:g}: give `calibration: "
                             "analytic` (Balle & Wang 2018) for epsilon >= 1")
        return self


class QuantiseOptions(DefenceOptions):
    LEVEL: ClassVar[str] = "bits"

    bits: int = Field(4, ge=1, le=16, description="bits per dimension")


class PcaOptions(DefenceOptions):
    LEVEL: ClassVar[str] = "dims"

    dims: int = Field(32, ge=1, description="principal components kept")


class RotationOptions(DefenceOptions):
    key: int = Field(0, ge=0, lt=2**32, description="the defender's secret: the seed of the "
                                                    "rotation")


def build_gaussian(options: GaussianOptions, context: BuildContext) -> Defence:
    from .transforms import GaussianNoise

    return GaussianNoise(options.scale)


def build_laplace(options: LaplaceOptions, context: BuildContext) -> Defence:
    from .transforms import LaplaceMechanism

    return LaplaceMechanism(options.epsilon, options.clip_quantile)


def build_gaussian_dp(options: GaussianDpOptions, context: BuildContext) -> Defence:
    from .transforms import GaussianMechanism

    return GaussianMechanism(options.epsilon, options.delta, options.clip_quantile,
                             options.calibration)


def build_quantise(options: QuantiseOptions, context: BuildContext) -> Defence:
    from .transforms import UniformQuantiser

    return UniformQuantiser(options.bits)


def build_binarise(options: DefenceOptions, context: BuildContext) -> Defence:
    from .transforms import Binariser

    return Binariser()


def build_pca(options: PcaOptions, context: BuildContext) -> Defence:
    from .transforms import PcaTruncation

    return PcaTruncation(options.dims)


def build_rotation(options: RotationOptions, context: BuildContext) -> Defence:
    from .transforms import RandomRotation

    return RandomRotation(options.key)


@hookimpl
def register_defences(register: Register) -> None:
    """Register Gaussian noise, the Laplace and Gaussian mechanisms, quantisation,
    binarisation, PCA truncation and a random rotation."""
    register("gaussian", build_gaussian, options=GaussianOptions,
             description="Gaussian noise scaled to each dimension's spread (level: scale)")
    register("laplace", build_laplace, options=LaplaceOptions,
             description="L1 norm clipping and Laplace noise: epsilon-local DP per vector "
                         "(level: epsilon)")
    register("gaussian-dp", build_gaussian_dp, options=GaussianDpOptions,
             description="L2 norm clipping and Gaussian noise: (epsilon, delta)-local DP per "
                         "vector (level: epsilon)")
    register("quantise", build_quantise, options=QuantiseOptions,
             description="uniform quantisation of each dimension to its training range "
                         "(level: bits)")
    register("binarise", build_binarise, options=DefenceOptions,
             description="the sign of each dimension about its training median")
    register("pca", build_pca, options=PcaOptions,
             description="the first principal components of the training vectors (level: dims)")
    register("rotation", build_rotation, options=RotationOptions,
             description="a random orthogonal rotation: keeps all geometry, a sanity check of "
                         "the attack")
