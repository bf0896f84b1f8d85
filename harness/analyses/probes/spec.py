"""The spec's `probes:` section: scored analogy sets, interpolation paths and noise robustness,
run after the decoders are trained (docs/spec.md#probes, docs/probes.md).

```yaml
probes:
  analogies: [{generate: quickstart}, sets/mine.tsv]   # TSV files or generated sets
  interpolation: {pairs: 8, steps: 5}                  # or pairs: [[sentence x, sentence y]]
  noise: {scales: [0.25, 0.5, 1.0], sentences: 200}
  beam: 1                                              # default: generation.beam
```

`harness.analyses.probes.checks` resolves the section once the spec is read and lists, for
preflight, analogy files that are there but malformed.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from harness.protocols import Settings, SpecView

ANALOGY_GENERATORS = ("quickstart",)
"""Analogy sets the harness generates (`harness.synthetic.analogies`)."""

MAX_SCALES = 10


class _Strict(Settings):
    """As the spec's other sections: unknown keys are errors, no boolean for a number, values
    frozen once validated."""


class AnalogySource(_Strict):
    """One analogy set: a TSV file (`path`; a bare string is a path) or a set the harness
    generates (`generate: quickstart`, with `items` and `seed`); `form` says how its rows are
    solved: paper (a : b :: z : c, z from a - b + c) or classic (a : b :: c : d, d from
    b - a + c)."""

    path: Path | None = None
    generate: str | None = None
    items: int | None = Field(default=None, gt=0, le=100_000)
    seed: int | None = Field(default=None, ge=0, lt=2**32)
    form: Literal["paper", "classic"] = "paper"

    @model_validator(mode="before")
    @classmethod
    def _bare_path(cls, value: Any) -> Any:
        return {"path": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_kind(self) -> AnalogySource:
        if (self.generate is None) == (self.path is None):
            raise ValueError("give exactly one of `path: FILE` (a TSV analogy set) or "
                             "`generate: NAME`")
        if self.generate is not None and self.generate not in ANALOGY_GENERATORS:
            raise ValueError(f"unknown analogy generator {self.generate!r}; known: "
                             + ", ".join(ANALOGY_GENERATORS))
        if self.path is not None and (self.items is not None or self.seed is not None):
            raise ValueError("`items`/`seed` apply to `generate`; a file's items are its rows")
        return self


class InterpolationProbe(_Strict):
    """Interpolation paths: `pairs` of sentences (a number N: the first 2N test sentences,
    paired in order; or a list of [x, y] sentence pairs), each decoded at `steps` evenly
    spaced points from x to y, both ends included."""

    pairs: int | list[tuple[str, str]] = 5
    steps: int = Field(default=5, ge=2, le=50)

    @field_validator("pairs", mode="before")
    @classmethod
    def _pairs(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, list)):
            raise ValueError("expected a number of test-sentence pairs or a list of "
                             "[sentence x, sentence y] pairs")
        if isinstance(value, int):
            if not 1 <= value <= 1000:
                raise ValueError(f"expected between 1 and 1000 pairs, got {value}")
            return value
        if not value:
            raise ValueError("expected at least one [sentence x, sentence y] pair")
        for index, pair in enumerate(value):
            if (not isinstance(pair, list) or len(pair) != 2
                    or not all(isinstance(s, str) and s.strip() for s in pair)):
                raise ValueError(f"pair {index}: expected [sentence x, sentence y], two "
                                 f"non-empty strings, got {pair!r}")
        return value


class NoiseProbe(_Strict):
    """Noise robustness: Gaussian noise of `scales` times each dimension's standard deviation
    added to the first `sentences` test vectors (drawn with `seed`, default the spec's)."""

    scales: list[float] = [0.25, 0.5, 1.0]
    sentences: int = Field(default=200, gt=0)
    seed: int | None = Field(default=None, ge=0, lt=2**32)

    @field_validator("scales")
    @classmethod
    def _scales(cls, value: list[float]) -> list[float]:
        if not 1 <= len(value) <= MAX_SCALES:
            raise ValueError(f"expected 1 to {MAX_SCALES} scales, got {len(value)}")
        bad = [s for s in value if not (math.isfinite(s) and 0 < s <= 100)]
        if bad:
            raise ValueError(f"a scale is a fraction of the per-dimension standard deviation, "
                             f"above 0 and at most 100; got {bad[0]}")
        if len(set(value)) != len(value):
            raise ValueError("each scale once")
        return sorted(value)


class ProbesSection(_Strict):
    """What `harness run` probes after training: analogy sets, interpolation, noise (each
    optional), searching with `beam` (default: `generation.beam`; 1 is greedy search)."""

    analogies: list[AnalogySource] = []
    interpolation: InterpolationProbe | None = None
    noise: NoiseProbe | None = None
    beam: int | None = Field(default=None, gt=0)

    @property
    def active(self) -> bool:
        """True when the section asks for any probe."""
        return bool(self.analogies) or self.interpolation is not None or self.noise is not None


def probes_settings(spec: SpecView) -> ProbesSection:
    """The spec's `probes:` section, typed (defaults where the file gives none)."""
    return spec.section("probes", ProbesSection)
